// A small JSON parser for tests (meta.json, app summaries). Numbers are kept
// as text as well, so 64-bit integers stay exact.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tickwise::json {

struct Value {
  enum Type { Null, Bool, Number, String, Array, Object } type = Null;
  bool b = false;
  std::string text;  // number text or string value
  std::vector<Value> items;
  std::map<std::string, Value> fields;

  const Value& operator[](const std::string& k) const {
    static const Value null;
    auto it = fields.find(k);
    return it == fields.end() ? null : it->second;
  }
  const Value& operator[](size_t i) const { return items.at(i); }
  bool has(const std::string& k) const { return fields.count(k) != 0; }
  int64_t i64() const { return type == Number || type == String ? strtoll(text.c_str(), nullptr, 10) : 0; }
  uint64_t u64() const { return type == Number || type == String ? strtoull(text.c_str(), nullptr, 10) : 0; }
  double num() const { return type == Number || type == String ? strtod(text.c_str(), nullptr) : 0.0; }
  const std::string& str() const { return text; }
};

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  Value parse() {
    Value v = value();
    ws();
    if (i_ != s_.size()) throw std::runtime_error("trailing data in JSON");
    return v;
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  char peek() {
    ws();
    if (i_ >= s_.size()) throw std::runtime_error("unexpected end of JSON");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) throw std::runtime_error(std::string("JSON: expected ") + c);
    ++i_;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        char e = s_[i_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            unsigned cp = unsigned(strtoul(s_.substr(i_, 4).c_str(), nullptr, 16));
            i_ += 4;
            if (cp < 0x80) out += char(cp);
            else if (cp < 0x800) out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
            else out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
            break;
          }
          default: out += e;
        }
      } else {
        out += c;
      }
    }
    ++i_;
    return out;
  }
  Value value() {
    Value v;
    char c = peek();
    if (c == '{') {
      v.type = Value::Object;
      ++i_;
      if (peek() == '}') return ++i_, v;
      while (true) {
        std::string k = string();
        expect(':');
        v.fields[k] = value();
        if (peek() == ',') { ++i_; continue; }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.type = Value::Array;
      ++i_;
      if (peek() == ']') return ++i_, v;
      while (true) {
        v.items.push_back(value());
        if (peek() == ',') { ++i_; continue; }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.type = Value::String;
      v.text = string();
      return v;
    }
    if (s_.compare(i_, 4, "true") == 0) return i_ += 4, v.type = Value::Bool, v.b = true, v;
    if (s_.compare(i_, 5, "false") == 0) return i_ += 5, v.type = Value::Bool, v;
    if (s_.compare(i_, 4, "null") == 0) return i_ += 4, v;
    size_t b = i_;
    while (i_ < s_.size() && (isdigit((unsigned char)s_[i_]) || s_[i_] == '-' || s_[i_] == '+' || s_[i_] == '.' ||
                              s_[i_] == 'e' || s_[i_] == 'E'))
      ++i_;
    if (b == i_) throw std::runtime_error("JSON: unexpected character");
    v.type = Value::Number;
    v.text = s_.substr(b, i_ - b);
    return v;
  }
};

inline Value parse(const std::string& s) { return Parser(s).parse(); }

}  // namespace tickwise::json
