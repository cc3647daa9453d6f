// A minimal streaming JSON writer for meta.json. Integers that can exceed
// 2^53 (nanosecond times, handles) are written as decimal strings by the
// callers that hold them (see FORMAT.md "meta.json").
#pragma once

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

namespace tickwise::rec {

class JsonWriter {
 public:
  std::string out;

  void begin_object() { sep(); out += '{'; first_.push_back(true); }
  void end_object() { out += '}'; first_.pop_back(); }
  void begin_array() { sep(); out += '['; first_.push_back(true); }
  void end_array() { out += ']'; first_.pop_back(); }
  JsonWriter& key(const char* k) {
    sep();
    str_raw(k);
    out += ':';
    pending_value_ = true;
    return *this;
  }
  void value(const std::string& s) { sep(); str_raw(s.c_str(), s.size()); }
  void value(const char* s) { sep(); str_raw(s); }
  void value(bool b) { sep(); out += b ? "true" : "false"; }
  void value(int64_t v) { sep(); char b[32]; snprintf(b, sizeof b, "%" PRId64, v); out += b; }
  void value(uint64_t v) { sep(); char b[32]; snprintf(b, sizeof b, "%" PRIu64, v); out += b; }
  void value(int v) { value(int64_t(v)); }
  void value(unsigned v) { value(uint64_t(v)); }
  void value(double v) { sep(); char b[48]; snprintf(b, sizeof b, "%.17g", v); out += b; }
  void null() { sep(); out += "null"; }
  /// A 64-bit integer written as a decimal string (exact in any JSON reader).
  void value_u64_string(uint64_t v) { char b[32]; snprintf(b, sizeof b, "%" PRIu64, v); value(b); }
  void value_i64_string(int64_t v) { char b[32]; snprintf(b, sizeof b, "%" PRId64, v); value(b); }

 private:
  std::vector<bool> first_;
  bool pending_value_ = false;
  void sep() {
    if (pending_value_) { pending_value_ = false; return; }
    if (!first_.empty()) {
      if (!first_.back()) out += ',';
      first_.back() = false;
    }
  }
  void str_raw(const char* s, size_t n = size_t(-1)) {
    if (n == size_t(-1)) n = s ? std::char_traits<char>::length(s) : 0;
    out += '"';
    for (size_t i = 0; i < n; ++i) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); out += b; }
          else out += char(c);
      }
    }
    out += '"';
  }
};

}  // namespace tickwise::rec
