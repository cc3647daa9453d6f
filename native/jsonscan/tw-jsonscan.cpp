// tw-jsonscan: the common case of packages/capture/src/json-records.ts
// (scanJsonRecords, document mode) in C++, for large Chrome traces and
// rocprofv3 JSON. It writes byte for byte the NDJSON parts the TypeScript
// scanner writes, and tells its caller about each part as it completes, so
// DuckDB loads part k while this process scans on.
//
// It handles valid input only. Anything else (a JSON error, a cut-off
// record, a missing `]`, a value beyond a limit, a text the exact
// conversion does not do in its fast path, an escaped key where one is
// matched) makes it exit 3 with the reason on stderr: the caller then runs
// the TypeScript scanner, whose errors and repairs are the reference.
//
// usage: tw-jsonscan <input> <plan>     (the plan: see readPlan)
//        tw-jsonscan --split-lines <input> <skip> <groupOut> <types> <restOut>   (see splitLines)
// stdout, one line each:
//   P <spec> <startByte> <firstRecord> <records>\t<path>    a part is complete
//   R <spec> <records> <longest line's bytes>\t<path>    records routed away from the spec (see Route)
//   K <spec>\t<category>    a category whose records go to the host lane <spec> from here on (see HostLane)
//   C <offset> <length>\t<concrete path>    a captured value: those bytes of <capdir>/captured
//   D <sourceLines> <count per spec...>                    done
// and per spec <out>.lines (uint32 LE source lines) and <out>.ends (float64
// LE: the output offset past each record's newline).

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <fcntl.h>
#include <unistd.h>
#ifdef TW_HAVE_ZLIB
#include <zlib.h>
#endif

namespace {

struct Fallback {
  std::string why;
};

[[noreturn]] void fallback(const std::string &why) { throw Fallback{why}; }

// ---------------------------------------------------------------------------
// The plan: what the caller asks for, one item per line.
//   L <maxRecordBytes> <captureLimit> <chunkBytes>
//   D <capdir>
//   S <partBytes, 0: one file> <convert: none | scale | fs> <pow10> <out path>
//   P <spec>\t<key>\t<key>...       a record path ("[]": an array element)
//   X <spec>\t<key>                 an exact key of the spec
//   T <spec>                        the spec's exact keys without their text (`_<key>_text`)
//   C \t<key>\t<key>...             a captured path
//   R <spec>\t<key>\t<out>\t<value>... the spec's route (see Route)
//   Q <spec>\t<kindKey>\t<open>\t<close>\t<timeKey>\t<out>\t<groupKey>...  the spec's pairs (see Pairing)
//   H <spec> <lane spec>\t<kindKey>\t<kind>\t<catKey>\t<nameKey>\t<pidKey>\t<tidKey>\t<argsKey>\t<corrKey>\t<tsKey>\t<durKey>
//                                   the spec's host lane (see HostLane)

enum Convert { NONE, SCALE, FS };

// A spec's route: a record whose own-level <key> holds a string written
// without escapes, once, and not one of <keep> goes to <out> instead of the
// spec's NDJSON, one per line: <N>\x1f<value>\x1f<the record's text> (N its
// source line; its text as the staged record holds it: `{`, its body from
// the first key, `}`; raw newlines of a pretty-printed record as spaces).
// No field holds a 0x1f: a value and a record's text that were scanned have
// no control byte (strings cannot, whitespace is space, tab, CR and LF), so
// DuckDB reads the file with read_csv, splitting at 0x1f, quoting nothing.
// The TypeScript scanner routes nothing (RecordSpec.route).
struct Route {
  std::string key, out;
  std::vector<std::string> keep;
};

// A spec's pairs (RecordSpec.pairs): records whose own-level <kindKey> is
// <open> or <close>, paired per group (the values of the <groupKey>s) by a
// stack in the order they come, written to <out> as lines
// `<open index>\t<close index>\t<close's converted timeKey text>`. Given
// only when that order is a sort by (time, index) per group and the groups
// are DuckDB's (see Scanner::pairStep); else the caller pairs them.
struct Pairing {
  std::string kindKey, open, close, timeKey, out;
  std::vector<std::string> groupKeys;
};

// A spec's host lane (RecordSpec.hostLane): the Chrome reader's host spans
// (cpu_op, python_function, runtime calls: ~90% of a Kineto trace) as rows
// of a tab-separated file that DuckDB reads with read_csv, not NDJSON
// records it parses again. A record goes there (spec <to>'s parts, lines
// and ends) instead of its spec's NDJSON when its own-level <kindKey> is the
// string <kind>, its <catKey> a string that hostCategory() accepts, its ts
// and dur whole numbers of ns under 2^62 (the caller adds them as BIGINTs),
// and every value the row takes is one whose text read_json would give as
// it is written (see LaneRecord): then the row holds what the staged record
// would have given, byte for byte. Any doubt keeps the record in its spec. The
// first record of each category sent there prints `K <to>\t<category>`
// before the part that holds it. A row, fields separated by tabs:
//   <line> <name|\N> <cat> <pid|\N> <tid|\N> <ts ns text> <dur ns text> <correlation: digits|\N|?> <host args JSON>
// the host args `{"pid":"<pid>"|null,"tid":"<tid>"|null,"args":<args, minified>|null}` (the Chrome reader's
// HOST_ARGS, as DuckDB writes it); correlation `?`: the caller reads it from the args.
struct HostLane {
  size_t to = 0;
  std::string kindKey, kind, catKey, nameKey, pidKey, tidKey, argsKey, corrKey, tsKey, durKey;
};

struct Spec {
  uint64_t partBytes = 0;
  Convert convert = NONE;
  int pow10 = 0;
  std::string out;
  std::vector<std::string> exactKeys;
  bool exactText = true;
  bool routed = false;
  Route route;
  bool paired = false;
  Pairing pairing;
  bool laned = false;
  HostLane lane;
};

struct Node {
  std::unordered_map<std::string, int> children;
  int record = -1;
  bool capture = false;
};

struct Plan {
  uint64_t maxRecord = 64u << 20;
  uint64_t captureLimit = 16u << 20;
  uint64_t chunkBytes = 4u << 20;
  std::string capdir;
  std::vector<Spec> specs;
  std::vector<Node> nodes{Node{}};
};

std::vector<std::string> splitTabs(const std::string &s) {
  std::vector<std::string> parts;
  size_t a = 0;
  for (;;) {
    size_t b = s.find('\t', a);
    parts.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) return parts;
    a = b + 1;
  }
}

int walk(Plan &p, const std::vector<std::string> &path, size_t from) {
  int n = 0;
  for (size_t i = from; i < path.size(); i++) {
    auto it = p.nodes[n].children.find(path[i]);
    if (it == p.nodes[n].children.end()) {
      p.nodes.push_back(Node{});
      int c = static_cast<int>(p.nodes.size()) - 1;
      p.nodes[n].children.emplace(path[i], c);
      n = c;
    } else {
      n = it->second;
    }
  }
  return n;
}

Plan readPlan(const char *file) {
  FILE *f = std::fopen(file, "rb");
  if (!f) fallback(std::string("cannot read the plan: ") + std::strerror(errno));
  Plan p;
  std::string line;
  int c;
  std::vector<std::string> lines;
  while ((c = std::fgetc(f)) != EOF) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line.push_back(static_cast<char>(c));
    }
  }
  std::fclose(f);
  for (const std::string &l : lines) {
    if (l.empty()) continue;
    char kind = l[0];
    std::string rest = l.size() > 2 ? l.substr(2) : "";
    if (kind == 'L') {
      unsigned long long a, b, d;
      if (std::sscanf(rest.c_str(), "%llu %llu %llu", &a, &b, &d) != 3) fallback("bad plan line L");
      p.maxRecord = a;
      p.captureLimit = b;
      p.chunkBytes = d < 64 ? 64 : d;
    } else if (kind == 'D') {
      p.capdir = rest;
    } else if (kind == 'S') {
      Spec s;
      unsigned long long part;
      char conv[16];
      int pow10, used = 0;
      if (std::sscanf(rest.c_str(), "%llu %15s %d %n", &part, conv, &pow10, &used) != 3) fallback("bad plan line S");
      s.partBytes = part;
      s.convert = std::strcmp(conv, "scale") == 0 ? SCALE : std::strcmp(conv, "fs") == 0 ? FS : NONE;
      s.pow10 = pow10;
      s.out = rest.substr(static_cast<size_t>(used));
      p.specs.push_back(s);
    } else if (kind == 'T') {
      size_t spec = std::strtoul(rest.c_str(), nullptr, 10);
      if (spec >= p.specs.size()) fallback("bad plan line T");
      p.specs[spec].exactText = false;
    } else if (kind == 'R') {
      std::vector<std::string> parts = splitTabs(rest);
      size_t spec = std::strtoul(parts[0].c_str(), nullptr, 10);
      if (spec >= p.specs.size() || parts.size() < 3 || p.specs[spec].routed) fallback("bad plan line R");
      Spec &s = p.specs[spec];
      s.routed = true;
      s.route.key = parts[1];
      s.route.out = parts[2];
      s.route.keep.assign(parts.begin() + 3, parts.end());
    } else if (kind == 'Q') {
      std::vector<std::string> parts = splitTabs(rest);
      size_t spec = std::strtoul(parts[0].c_str(), nullptr, 10);
      if (spec >= p.specs.size() || parts.size() < 7 || p.specs[spec].paired) fallback("bad plan line Q");
      Spec &s = p.specs[spec];
      s.paired = true;
      s.pairing.kindKey = parts[1];
      s.pairing.open = parts[2];
      s.pairing.close = parts[3];
      s.pairing.timeKey = parts[4];
      s.pairing.out = parts[5];
      s.pairing.groupKeys.assign(parts.begin() + 6, parts.end());
    } else if (kind == 'H') {
      std::vector<std::string> parts = splitTabs(rest);
      unsigned long long spec = 0, to = 0;
      if (parts.size() != 11 || std::sscanf(parts[0].c_str(), "%llu %llu", &spec, &to) != 2 || spec >= p.specs.size() || to >= p.specs.size() ||
          spec == to || p.specs[spec].laned) {
        fallback("bad plan line H");
      }
      for (size_t i = 1; i < parts.size(); i++) {
        if (parts[i].empty() && i != 2) fallback("bad plan line H");
      }
      Spec &s = p.specs[spec];
      s.laned = true;
      HostLane &l = s.lane;
      l.to = to;
      l.kindKey = parts[1], l.kind = parts[2], l.catKey = parts[3], l.nameKey = parts[4], l.pidKey = parts[5], l.tidKey = parts[6];
      l.argsKey = parts[7], l.corrKey = parts[8], l.tsKey = parts[9], l.durKey = parts[10];
    } else if (kind == 'P' || kind == 'X' || kind == 'C') {
      std::vector<std::string> parts = splitTabs(rest);
      if (kind == 'C') {
        p.nodes[static_cast<size_t>(walk(p, parts, 1))].capture = true;
        continue;
      }
      size_t spec = std::strtoul(parts[0].c_str(), nullptr, 10);
      if (spec >= p.specs.size()) fallback("bad plan: spec number");
      if (kind == 'X') {
        p.specs[spec].exactKeys.push_back(parts.size() > 1 ? parts[1] : "");
      } else {
        p.nodes[static_cast<size_t>(walk(p, parts, 1))].record = static_cast<int>(spec);
      }
    } else {
      fallback("bad plan line");
    }
  }
  return p;
}

// ---------------------------------------------------------------------------
// Exact conversion: scaleDecimal's fast path (decimal-scale.ts), and the
// Chrome reader's femtosecond text to ns text (fsToNsText).

bool isDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool isSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0b || c == 0x0c; }

// Eight bytes at a time (little-endian words; the lowest set bit of a mask is the first byte that has it). Each
// mask has the high bit of a byte set when that byte is the one asked about; bits above the first such byte may be
// wrong (a borrow), so only "any" and "the first" are read from them.
constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
inline uint64_t load8(const unsigned char *p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline uint64_t zeroBytes(uint64_t w) { return (w - kOnes) & ~w & kHighs; }
inline uint64_t bytesBelow(uint64_t w, unsigned char n) { return (w - kOnes * n) & ~w & kHighs; }  // n <= 128
// a string's plain run ends at '"', '\\' or a control byte
inline uint64_t stringStops(uint64_t w) { return zeroBytes(w ^ (kOnes * '"')) | zeroBytes(w ^ (kOnes * '\\')) | bytesBelow(w, 0x20); }
// a byte that is not printable ASCII (below 0x20, 0x7f, 0x80 and up)
inline uint64_t unprintable(uint64_t w) { return (w & kHighs) | zeroBytes(w ^ (kOnes * 0x7f)) | bytesBelow(w, 0x20); }
// a == b for n bytes: keys are short, a call to memcmp costs more than the loop
inline bool sameBytes(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (a[i] != b[i]) return false;
  }
  return true;
}
inline size_t firstByte(uint64_t mask) { return static_cast<size_t>(__builtin_ctzll(mask)) >> 3; }

// -?digits, at most 18, no leading zero (DuckDB gives those digits back as they are written)
bool plainIntegerAt(const char *d, size_t size) {
  size_t i = size > 0 && d[0] == '-' ? 1 : 0;
  size_t n = size - i;
  if (n == 0 || n > 18 || (d[i] == '0' && (n > 1 || i == 1))) return false;
  for (; i < size; i++) {
    if (!isDigit(static_cast<unsigned char>(d[i]))) return false;
  }
  return true;
}

std::string stripZeros(const std::string &d) {
  if (d.empty()) return "0";
  size_t k = 0;
  while (k + 1 < d.size() && d[k] == '0') k++;
  return d.substr(k);
}

std::string increment(std::string d) {
  size_t i = d.size();
  while (i > 0) {
    i--;
    if (d[i] == '9') {
      d[i] = '0';
    } else {
      d[i]++;
      return d;
    }
  }
  return "1" + d;
}

// MAX_NS_DIGITS of packages/time (units.ts): a longer result is +-10^60.
constexpr long kMaxNsDigits = 60;

// The text scaled by 10^pow, rounded half away from zero; false: not the fast path's (the caller falls back).
bool scaleDecimal(const std::string &s, int pow, std::string &out) {
  size_t a = 0, b = s.size();
  while (a < b && isSpace(static_cast<unsigned char>(s[a]))) a++;
  while (b > a && isSpace(static_cast<unsigned char>(s[b - 1]))) b--;
  size_t i = a;
  bool negative = false;
  if (i < b && (s[i] == '-' || s[i] == '+')) {
    negative = s[i] == '-';
    i++;
  }
  size_t intStart = i;
  while (i < b && isDigit(static_cast<unsigned char>(s[i]))) i++;
  size_t intEnd = i, fracStart = i, fracEnd = i;
  if (i < b && s[i] == '.') {
    fracStart = ++i;
    while (i < b && isDigit(static_cast<unsigned char>(s[i]))) i++;
    fracEnd = i;
  }
  if (intEnd == intStart && fracEnd == fracStart) return false;
  long exp = 0;
  if (i < b && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool expNegative = false;
    if (i < b && (s[i] == '-' || s[i] == '+')) {
      expNegative = s[i] == '-';
      i++;
    }
    size_t expStart = i;
    while (i < b && isDigit(static_cast<unsigned char>(s[i]))) i++;
    if (i == expStart || i - expStart > 6) return false;
    exp = std::strtol(s.substr(expStart, i - expStart).c_str(), nullptr, 10);
    if (expNegative) exp = -exp;
  }
  if (i != b) return false;
  std::string digits = s.substr(intStart, intEnd - intStart) + s.substr(fracStart, fracEnd - fracStart);
  long shift = exp - static_cast<long>(fracEnd - fracStart) + pow;
  // beyond kMaxNsDigits digits: +-10^kMaxNsDigits (MAX_NS_DIGITS of decimalToNs)
  size_t lead = 0;
  while (lead < digits.size() && digits[lead] == '0') lead++;
  if (lead < digits.size() && static_cast<long>(digits.size() - lead) + shift > kMaxNsDigits) {
    out = std::string(negative ? "-1" : "1") + std::string(static_cast<size_t>(kMaxNsDigits), '0');
    return true;
  }
  if (shift >= 0) {
    out = stripZeros(digits);
    if (out != "0" && shift > 0) out.append(static_cast<size_t>(shift), '0');
  } else {
    long cut = static_cast<long>(digits.size()) + shift;
    std::string kept = cut > 0 ? stripZeros(digits.substr(0, static_cast<size_t>(cut))) : "0";
    out = cut >= 0 && cut < static_cast<long>(digits.size()) && digits[static_cast<size_t>(cut)] >= '5' ? increment(kept) : kept;
  }
  if (negative && out != "0") out = "-" + out;
  return true;
}

std::string fsToNsText(const std::string &fs) {
  bool neg = !fs.empty() && fs[0] == '-';
  std::string digits = neg ? fs.substr(1) : fs;
  if (digits.size() >= 6 && digits.compare(digits.size() - 6, 6, "000000") == 0) {
    return digits.size() == 6 ? "0" : fs.substr(0, fs.size() - 6);
  }
  std::string padded = digits.size() < 7 ? std::string(7 - digits.size(), '0') + digits : digits;
  std::string frac = padded.substr(padded.size() - 6);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  // zero ("0" fs) has no fraction: "0", not "0."
  return (neg ? "-" : "") + padded.substr(0, padded.size() - 6) + (frac.empty() ? "" : "." + frac);
}

// A decimal text `-?digits(.digits)?`, or not.
bool plainDecimal(const std::string &d) {
  size_t i = d.size() > 0 && d[0] == '-' ? 1 : 0, digits = 0;
  while (i < d.size() && isDigit(static_cast<unsigned char>(d[i]))) i++, digits++;
  if (digits == 0) return false;
  if (i == d.size()) return true;
  if (d[i] != '.') return false;
  size_t frac = 0;
  for (i++; i < d.size(); i++, frac++) {
    if (!isDigit(static_cast<unsigned char>(d[i]))) return false;
  }
  return frac > 0;
}

// a <=> b (-1, 0, 1) of two plainDecimal texts, by value
int compareDecimal(const std::string &a, const std::string &b) {
  auto parts = [](const std::string &d, bool &neg, std::string &whole, std::string &frac) {
    neg = !d.empty() && d[0] == '-';
    size_t start = neg ? 1 : 0, dot = d.find('.');
    whole = stripZeros(d.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    frac = dot == std::string::npos ? "" : d.substr(dot + 1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    if (whole == "0" && frac.empty()) neg = false;  // -0 is 0
  };
  bool na, nb;
  std::string wa, fa, wb, fb;
  parts(a, na, wa, fa);
  parts(b, nb, wb, fb);
  if (na != nb) return na ? -1 : 1;
  int mag = wa.size() != wb.size() ? (wa.size() < wb.size() ? -1 : 1) : wa != wb ? (wa < wb ? -1 : 1) : fa != fb ? (fa < fb ? -1 : 1) : 0;
  return na ? -mag : mag;
}

// ---------------------------------------------------------------------------
// The host lane's rule: the Chrome reader's CAT_CLASS (chrome-trace.ts) is
// 'host' for the category, lowercased. ASCII only (the SQL lowercases any
// letter); the SQL judges every category of the lane again.

bool hasWord(const std::string &s, const char *w) { return s.find(w) != std::string::npos; }

bool hostCategory(const unsigned char *text, size_t n) {
  std::string l(n, ' ');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = text[i];
    if (c >= 0x80) return false;
    l[i] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  // 'sync': (^|[_ ,])(cuda|hip|gpu)_sync($|[ ,])
  for (const char *w : {"cuda_sync", "hip_sync", "gpu_sync"}) {
    size_t wl = std::strlen(w);
    for (size_t at = l.find(w); at != std::string::npos; at = l.find(w, at + 1)) {
      bool before = at == 0 || l[at - 1] == '_' || l[at - 1] == ' ' || l[at - 1] == ',';
      bool after = at + wl == n || l[at + wl] == ' ' || l[at + wl] == ',';
      if (before && after) return false;
    }
  }
  // 'copy'
  if (hasWord(l, "memcpy") || hasWord(l, "memset")) return false;
  // 'kernel': an item of the comma-separated list (spaces removed) is one of the kernel words
  std::string item;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || l[i] == ',') {
      if (item == "kernel" || item == "kernels" || item == "gpu_kernel" || item == "npu_kernel") return false;
      item.clear();
    } else if (l[i] != ' ') {
      item.push_back(l[i]);
    }
  }
  // 'host' when a word of NOT_KERNEL is in it, else 'device' (the process decides)
  for (const char *w : {"annotation", "runtime", "driver", "cpu_op", "python", "user", "ac2g", "flow", "overhead", "trace"}) {
    if (hasWord(l, w)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Output: one spec's NDJSON, in parts.

// An output's bytes are written once this many wait, at the end of a read (the plan's chunk: 1 MiB): written
// while still in the CPU's cache (4 MiB writes cost the 174 MB Kineto trace's scan 0.1-0.3 s more system time).
constexpr uint64_t kFlushBytes = 256u << 10;

class Out {
 public:
  Out(int spec, const Spec &s) : spec_(spec), base_(s.out), path_(s.out), partBytes_(s.partBytes == 0 ? UINT64_MAX : s.partBytes) {
    buf.reserve(1u << 20);
    open();
  }
  std::string buf;
  uint64_t count = 0;
  std::vector<uint32_t> lines;
  std::vector<double> ends;

  void done(uint32_t line) {
    ends.push_back(static_cast<double>(written_ + buf.size()));
    lines.push_back(line);
    count++;
  }
  void flush(bool force) {
    if (buf.empty() || (!force && buf.size() < std::min<uint64_t>(kFlushBytes, partLimit()))) return;
    if (std::fwrite(buf.data(), 1, buf.size(), f_) != buf.size()) fallback(std::string("write failed: ") + std::strerror(errno));
    written_ += buf.size();
    buf.clear();
    if (!force && written_ - partStart_ >= partLimit()) endPart(true);
  }
  void close() {
    flush(true);
    endPart(false);
    writeArray(base_ + ".lines", lines.data(), lines.size() * sizeof(uint32_t));
    writeArray(base_ + ".ends", ends.data(), ends.size() * sizeof(double));
  }

 private:
  int spec_;
  std::string base_, path_;
  uint64_t partBytes_;
  FILE *f_ = nullptr;
  uint64_t written_ = 0, partStart_ = 0, partFirst_ = 0;
  size_t parts_ = 0;

  // the bytes the current part holds at least before it ends: a quarter of partBytes for the first (so the
  // loader starts soon after the scan does), partBytes after (NdjsonOut.partLimit)
  uint64_t partLimit() const { return parts_ == 0 ? partBytes_ / 4 : partBytes_; }

  void open() {
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) fallback("cannot write " + path_ + ": " + std::strerror(errno));
  }
  void endPart(bool more) {
    if (std::fclose(f_) != 0) fallback(std::string("write failed: ") + std::strerror(errno));
    f_ = nullptr;
    std::printf("P %d %llu %llu %llu\t%s\n", spec_, static_cast<unsigned long long>(partStart_), static_cast<unsigned long long>(partFirst_),
                static_cast<unsigned long long>(count - partFirst_), path_.c_str());
    std::fflush(stdout);
    parts_++;
    if (!more) return;
    partStart_ = written_;
    partFirst_ = count;
    path_ = base_ + "." + std::to_string(parts_);
    open();
  }
  static void writeArray(const std::string &path, const void *data, size_t bytes) {
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f || (bytes > 0 && std::fwrite(data, 1, bytes, f) != bytes) || std::fclose(f) != 0) fallback("cannot write " + path);
  }
};

// ---------------------------------------------------------------------------
// A spec's routed records (Route), or its pairs (Pairing): one file, written in blocks of kFlushBytes or more.

class RoutedOut {
 public:
  explicit RoutedOut(const std::string &path) : path_(path) {
    buf.reserve(1u << 20);
    f_ = std::fopen(path.c_str(), "wb");
    if (!f_) fallback("cannot write " + path + ": " + std::strerror(errno));
  }
  std::string buf;
  uint64_t count = 0;
  uint64_t longest = 0;  // the longest line's bytes, its newline too (a route's)
  const std::string &path() const { return path_; }
  void flush(bool force) {
    if (buf.empty() || (!force && buf.size() < kFlushBytes)) return;
    if (std::fwrite(buf.data(), 1, buf.size(), f_) != buf.size()) fallback(std::string("write failed: ") + std::strerror(errno));
    buf.clear();
  }
  void close() {
    flush(true);
    if (std::fclose(f_) != 0) fallback(std::string("write failed: ") + std::strerror(errno));
    f_ = nullptr;
  }

 private:
  std::string path_;
  FILE *f_ = nullptr;
};

// ---------------------------------------------------------------------------
// Tokens (json-tokenizer.ts): errors are a fallback here.

enum Tok { MORE, BEGIN_OBJECT, END_OBJECT, BEGIN_ARRAY, END_ARRAY, COLON, COMMA, STRING, NUMBER, LITERAL };

struct Tokenizer {
  const unsigned char *buf = nullptr;
  size_t pos = 0, end = 0, start = 0, stop = 0;
  bool final = false, escaped = false;
  uint64_t line = 1, crs = 0;

  bool skipWs() {
    size_t i = pos;
    if (i < end && buf[i] > ' ') return true;
    while (i < end) {
      unsigned char c = buf[i];
      if (c == ' ' && i + 8 <= end && load8(buf + i) == kOnes * ' ') {  // (a pretty-printed trace's indent)
        i += 8;
      } else if (c == ' ' || c == '\t') {
        i++;
      } else if (c == '\r') {
        i++;
        crs++;
      } else if (c == '\n') {
        i++;
        line++;
      } else {
        break;
      }
    }
    pos = i;
    return i < end;
  }

  Tok next() {
    if (!skipWs()) return MORE;
    size_t i = pos;
    unsigned char c = buf[i];
    start = i;
    Tok k = MORE;
    switch (c) {
      case '{': k = BEGIN_OBJECT; break;
      case '}': k = END_OBJECT; break;
      case '[': k = BEGIN_ARRAY; break;
      case ']': k = END_ARRAY; break;
      case ':': k = COLON; break;
      case ',': k = COMMA; break;
      default: break;
    }
    if (k != MORE) {
      pos = stop = i + 1;
      return k;
    }
    if (c == '"') return string();
    if (c == '-' || isDigit(c)) return number();
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    if (c == 'n') return literal("null");
    fallback("not JSON");
  }

  static bool isHex(unsigned char c) { return isDigit(c) || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'); }

  Tok string() {
    size_t i = start + 1;
    bool esc = false;
    for (;;) {
      for (;;) {
        if (i + 8 > end) {
          while (i < end && buf[i] >= 0x20 && buf[i] != '"' && buf[i] != '\\') i++;
          break;
        }
        uint64_t m = stringStops(load8(buf + i));
        if (m != 0) {
          i += firstByte(m);
          break;
        }
        i += 8;
      }
      if (i >= end) return MORE;
      unsigned char c = buf[i];
      if (c == '"') break;
      if (c < 0x20) fallback("a control character in a string");
      esc = true;
      if (i + 1 >= end) return MORE;
      unsigned char e = buf[i + 1];
      if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
        i += 2;
      } else if (e == 'u') {
        if (i + 6 > end) {
          for (size_t k = i + 2; k < end; k++) if (!isHex(buf[k])) fallback("bad \\u escape");
          return MORE;
        }
        for (size_t k = i + 2; k < i + 6; k++) if (!isHex(buf[k])) fallback("bad \\u escape");
        i += 6;
      } else {
        fallback("bad escape");
      }
    }
    escaped = esc;
    pos = stop = i + 1;
    return STRING;
  }

  Tok literal(const char *word) {
    size_t n = std::strlen(word);
    size_t avail = std::min(n, end - start);
    for (size_t k = 0; k < avail; k++) if (buf[start + k] != static_cast<unsigned char>(word[k])) fallback("not JSON");
    if (avail < n) return MORE;
    pos = stop = start + n;
    return LITERAL;
  }

  Tok numberCut() {
    if (final) fallback("a number ends early");
    return MORE;
  }

  Tok number() {
    size_t i = start;
    if (buf[i] == '-') {
      i++;
      if (i >= end) return numberCut();
    }
    if (buf[i] == '0') {
      i++;
    } else if (isDigit(buf[i])) {
      i++;
      while (i < end && isDigit(buf[i])) i++;
    } else {
      fallback("a number without digits");
    }
    if (i < end && buf[i] == '.') {
      i++;
      if (i >= end) return numberCut();
      if (!isDigit(buf[i])) fallback("a number without digits after the point");
      while (i < end && isDigit(buf[i])) i++;
    }
    if (i < end && (buf[i] == 'e' || buf[i] == 'E')) {
      i++;
      if (i >= end) return numberCut();
      if (buf[i] == '+' || buf[i] == '-') {
        i++;
        if (i >= end) return numberCut();
      }
      if (!isDigit(buf[i])) fallback("a number without exponent digits");
      while (i < end && isDigit(buf[i])) i++;
    }
    if (i >= end && !final) return MORE;
    pos = stop = i;
    return NUMBER;
  }
};

// ---------------------------------------------------------------------------
// The scanner (RecordScanner in json-records.ts).

const std::string kElement = "[]";

// MAX_DOCUMENT_DEPTH of json-records.ts: deeper nesting outside records is the TypeScript scanner's error.
constexpr size_t kMaxDocumentDepth = 10000;

enum State { OBJ_FIRST, OBJ_KEY, OBJ_COLON, OBJ_VALUE, OBJ_NEXT, ARR_FIRST, ARR_VALUE, ARR_NEXT };

struct Frame {
  bool obj;
  int node;  // -1: no asked-for path below
  std::string key;
  uint64_t index;
  State state;
};

// What a record holds for its host lane's row (HostLane), gathered as it is parsed. A value goes into the row only
// when read_json gives it back as it is written: a string of printable ASCII without escapes, an integer of at most
// 18 digits (plainInteger), true, false, null, and for the args, containers of those (minified: DuckDB writes them
// so). A record with a byte beyond ASCII anywhere (read_json checks a whole record's UTF-8), a top-level key the
// staged record would repeat (`_line`, `_ts`: any key starting with `_`), or one of the row's keys twice (a staged
// column twice is read_json's error) stays in its spec.
struct LaneRecord {
  enum { KIND = 1, CAT, NAME, PID, TID, ARGS, FIELDS };
  struct Value {
    int tok = 0;  // 0: absent
    size_t start = 0, len = 0;
  };
  bool ok = false;
  int next = 0;  // the field the next top-level value is
  int hits[FIELDS] = {};
  Value field[FIELDS];
  size_t argsLevel = 0;  // the args container's depth (kinds_) while it is read, else 0
  bool corrNext = false;
  int corrHits = 0;
  Value corr;

  void reset(bool on) {
    *this = LaneRecord();
    ok = on;
  }
  // a string that read_json gives back as written
  static bool plainText(const unsigned char *p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      if (unprintable(load8(p + i)) != 0) return false;
    }
    for (; i < n; i++) {
      if (p[i] < 0x20 || p[i] > 0x7e) return false;
    }
    return true;
  }
};

// What a key of a record's own level is to its spec, found with one lookup: its exact key (the first of that name),
// its pairing field (-1 none, 0 its kind key, i its (i-1)th group key), its host lane field (LaneRecord), whether it is the route's key.
struct KeyRoles {
  std::string key;
  int exact = -1, pair = -1, lane = 0;
  bool route = false;
};

class KeyTable {
 public:
  explicit KeyTable(const Spec &s) {
    for (int &x : slot_) x = -1;
    for (size_t k = 0; k < s.exactKeys.size(); k++) {
      KeyRoles &r = at(s.exactKeys[k]);
      if (r.exact < 0) r.exact = static_cast<int>(k);
    }
    if (s.paired) {
      for (size_t g = s.pairing.groupKeys.size(); g-- > 0;) at(s.pairing.groupKeys[g]).pair = static_cast<int>(g + 1);
      at(s.pairing.kindKey).pair = 0;
    }
    if (s.laned) {
      const HostLane &l = s.lane;
      // (the first of laneKey's tests that matches decides)
      const std::pair<const std::string *, int> fields[] = {{&l.argsKey, LaneRecord::ARGS}, {&l.tidKey, LaneRecord::TID}, {&l.pidKey, LaneRecord::PID}, {&l.nameKey, LaneRecord::NAME}, {&l.catKey, LaneRecord::CAT}, {&l.kindKey, LaneRecord::KIND}};
      for (const auto &f : fields) at(*f.first).lane = f.second;
    }
    if (s.routed) at(s.route.key).route = true;
  }
  // the roles of the key k[0, n), or null when it has none
  const KeyRoles *find(const char *k, size_t n) const {
    for (size_t h = hash(k, n);; h = (h + 1) & (kSlots - 1)) {
      int i = slot_[h];
      if (i < 0) return nullptr;
      const KeyRoles &r = roles_[static_cast<size_t>(i)];
      if (r.key.size() == n && sameBytes(r.key.data(), k, n)) return &r;
    }
  }

 private:
  static constexpr size_t kSlots = 128;
  std::vector<KeyRoles> roles_;
  int slot_[kSlots];
  static size_t hash(const char *k, size_t n) {
    size_t h = n * 131;
    if (n > 0) h += static_cast<unsigned char>(k[0]) * 31 + static_cast<unsigned char>(k[n - 1]) * 7 + static_cast<unsigned char>(k[n / 2]);
    return h & (kSlots - 1);
  }
  KeyRoles &at(const std::string &key) {
    if (const KeyRoles *r = find(key.data(), key.size())) return roles_[static_cast<size_t>(r - roles_.data())];
    if (roles_.size() + 1 >= kSlots / 2) fallback("a plan with too many keys");
    size_t h = hash(key.data(), key.size());
    while (slot_[h] >= 0) h = (h + 1) & (kSlots - 1);
    slot_[h] = static_cast<int>(roles_.size());
    roles_.push_back(KeyRoles{key});
    return roles_.back();
  }
};

class Scanner {
 public:
  explicit Scanner(const Plan &plan) : plan_(plan) {
    keyTables_.reserve(plan.specs.size());
    for (const Spec &s : plan.specs) {
      keyTables_.emplace_back(s);
      const KeyRoles *ts = s.laned ? keyTables_.back().find(s.lane.tsKey.data(), s.lane.tsKey.size()) : nullptr;
      const KeyRoles *dur = s.laned ? keyTables_.back().find(s.lane.durKey.data(), s.lane.durKey.size()) : nullptr;
      laneTimeKeys_.emplace_back(ts && ts->exact >= 0 ? static_cast<size_t>(ts->exact) : SIZE_MAX, dur && dur->exact >= 0 ? static_cast<size_t>(dur->exact) : SIZE_MAX);
    }
    outs_.reserve(plan.specs.size());
    for (size_t i = 0; i < plan.specs.size(); i++) outs_.emplace_back(static_cast<int>(i), plan.specs[i]);
    exactText_.resize(plan.specs.size());
    for (size_t i = 0; i < plan.specs.size(); i++) exactText_[i].resize(plan.specs[i].exactKeys.size());
    routes_.resize(plan.specs.size());
    for (size_t i = 0; i < plan.specs.size(); i++) {
      if (plan.specs[i].routed) routes_[i].reset(new RoutedOut(plan.specs[i].route.out));
    }
    pairs_.resize(plan.specs.size());
    for (size_t i = 0; i < plan.specs.size(); i++) {
      if (plan.specs[i].paired) pairs_[i].reset(new PairState(plan.specs[i].pairing));
    }
    laneCats_.resize(plan.specs.size());
  }

  // A spec's pairing as it goes (Pairing): off for good at the first record it cannot be sure of. Its lines go to a
  // file written as a route's is (count: the pairs).
  struct PairState {
    explicit PairState(const Pairing &p) : file(p.out) {}
    struct Group {
      std::vector<uint64_t> open;  // indices of the open records, innermost last
      std::string lastTime;
      bool any = false;
    };
    RoutedOut file;
    bool on = true;
    std::unordered_map<std::string, Group> groups;
  };
  std::vector<std::unique_ptr<PairState>> pairs_;  // per spec: its pairing, or null
  // per spec with a host lane: each category already judged (true: it goes to the lane)
  std::vector<std::unordered_map<std::string, bool>> laneCats_;
  LaneRecord lane_;

  Tokenizer t;
  std::vector<Out> outs_;
  std::vector<std::unique_ptr<RoutedOut>> routes_;  // per spec: its routed records, or null
  std::vector<std::pair<std::string, std::string>> captured;

  // Scans buf[0, end); false when it ends inside a record or token (t.pos: the first byte to keep).
  bool run(const unsigned char *buf, size_t end, bool final) {
    t.buf = buf;
    t.pos = 0;
    t.end = end;
    t.final = final;
    for (;;) {
      if (stack_.empty()) {
        if (!topValue()) return false;
        continue;
      }
      Frame &f = stack_.back();
      Tok tok = t.next();
      if (tok == MORE) return false;
      switch (f.state) {
        case OBJ_FIRST:
        case OBJ_KEY:
          if (tok == STRING) {
            if (f.node >= 0) {
              if (t.escaped) fallback("an escaped key on an asked-for path");
              f.key.assign(reinterpret_cast<const char *>(buf) + t.start + 1, t.stop - t.start - 2);
            }
            f.state = OBJ_COLON;
          } else if (tok == END_OBJECT && f.state == OBJ_FIRST) {
            closeFrame();
          } else {
            fallback("not JSON: a key was expected");
          }
          break;
        case OBJ_COLON:
          if (tok != COLON) fallback("not JSON: \":\" was expected");
          f.state = OBJ_VALUE;
          break;
        case OBJ_VALUE: {
          f.state = OBJ_NEXT;
          size_t at = stack_.size() - 1;
          int child = childOf(f.node, f.key);
          if (!value(tok, child)) {  // nothing was pushed: a record that needs more bytes
            stack_[at].state = OBJ_VALUE;
            return false;
          }
          break;
        }
        case OBJ_NEXT:
          if (tok == COMMA) f.state = OBJ_KEY;
          else if (tok == END_OBJECT) closeFrame();
          else fallback("not JSON: \",\" or \"}\" was expected");
          break;
        case ARR_FIRST:
        case ARR_VALUE: {
          if (tok == END_ARRAY && f.state == ARR_FIRST) {
            closeFrame();
            break;
          }
          f.state = ARR_NEXT;
          size_t at = stack_.size() - 1;
          int child = childOf(f.node, kElement);
          if (!value(tok, child)) {
            stack_[at].state = stack_[at].index == 0 ? ARR_FIRST : ARR_VALUE;
            return false;
          }
          break;
        }
        case ARR_NEXT:
          if (tok == COMMA) {
            f.state = ARR_VALUE;
            f.index++;
          } else if (tok == END_ARRAY) {
            closeFrame();
          } else {
            fallback("not JSON: \",\" or \"]\" was expected");
          }
          break;
      }
    }
  }

  // Bytes before keep leave the window: a captured container keeps its part.
  void beforeShift(size_t keep) {
    if (!capturing_) return;
    capSize_ += keep - capStart_;
    if (capSize_ > plan_.captureLimit) fallback("a captured value beyond the capture limit");
    capText_.append(reinterpret_cast<const char *>(t.buf) + capStart_, keep - capStart_);
    capStart_ = 0;
  }

  void flush(bool force) {
    for (Out &o : outs_) o.flush(force);
    for (auto &r : routes_) if (r) r->flush(force);
    for (auto &q : pairs_) if (q) q->file.flush(force);
  }

  void end(bool pending) {
    if (pending) fallback("the input ends inside a record or value");
    if (!sawAnything_) fallback("an empty input");
    if (!stack_.empty()) fallback("the document ends early");
  }

 private:
  const Plan &plan_;
  std::vector<Frame> stack_;
  std::unordered_map<std::string, size_t> capturedAt_;
  bool sawAnything_ = false, documentDone_ = false;
  bool capturing_ = false;
  std::string capPath_, capText_;
  size_t capDepth_ = 0, capStart_ = 0;
  uint64_t capSize_ = 0;
  std::vector<unsigned char> kinds_;
  std::vector<std::vector<std::pair<bool, std::string>>> exactText_;  // per spec, per key: (set, text)
  std::vector<size_t> exactOrder_;
  std::string conv_;
  // the record being read, for its spec's pairing: field 0 its kind, 1.. its group keys (tok: 0 absent, else the
  // value's Tok, -1 a value it cannot be sure of), and its converted time text
  std::vector<std::pair<int, std::string>> pairField_;
  std::vector<KeyTable> keyTables_;  // per spec
  // per spec with a host lane: the exact keys (their indices) that are its ts and dur; and the strings a row is built in
  std::vector<std::pair<size_t, size_t>> laneTimeKeys_;
  std::string laneTs_, laneDur_, laneText_;
  std::string pairTime_;
  bool pairTimeSet_ = false;

  int childOf(int node, const std::string &key) const {
    if (node < 0) return -1;
    const auto &ch = plan_.nodes[static_cast<size_t>(node)].children;
    auto it = ch.find(key);
    return it == ch.end() ? -1 : it->second;
  }

  bool topValue() {
    if (!sawAnything_ && t.pos == 0 && t.end >= 3 && t.buf[0] == 0xef && t.buf[1] == 0xbb && t.buf[2] == 0xbf) t.pos = 3;
    if (!sawAnything_ && t.pos == 0 && t.end < 3 && !t.final && t.end > 0 && t.buf[0] == 0xef) return false;
    if (!t.skipWs()) return false;
    if (documentDone_) fallback("data after the document");
    Tok tok = t.next();
    if (tok == MORE) return false;
    if (tok != BEGIN_OBJECT && tok != BEGIN_ARRAY) fallback("not a JSON document");
    sawAnything_ = true;
    stack_.push_back(Frame{tok == BEGIN_OBJECT, 0, "", 0, tok == BEGIN_OBJECT ? OBJ_FIRST : ARR_FIRST});
    return true;
  }

  std::string concretePath() const {
    std::string p;
    for (size_t i = 0; i < stack_.size(); i++) {
      if (i > 0) p.push_back('/');
      if (stack_[i].obj) p += stack_[i].key;
      else p += std::to_string(stack_[i].index);
    }
    return p;
  }

  // a path captured again keeps its first place (as a Map does) with the last value
  void setCaptured(const std::string &path, std::string text) {
    auto it = capturedAt_.find(path);
    if (it != capturedAt_.end()) {
      captured[it->second].second = std::move(text);
      return;
    }
    capturedAt_.emplace(path, captured.size());
    captured.emplace_back(path, std::move(text));
  }

  // A value begins with tok where the trie says node; false: it needs more bytes.
  bool value(Tok tok, int node) {
    if (tok == BEGIN_OBJECT || tok == BEGIN_ARRAY) {
      const Node *n = node >= 0 ? &plan_.nodes[static_cast<size_t>(node)] : nullptr;
      if (n && n->record >= 0 && tok == BEGIN_OBJECT) return record(n->record);
      if (n && n->capture && !capturing_) {
        capturing_ = true;
        capPath_ = concretePath();
        capStart_ = t.start;
        capText_.clear();
        capSize_ = 0;
        capDepth_ = stack_.size() + 1;
      }
      bool obj = tok == BEGIN_OBJECT;
      if (stack_.size() >= kMaxDocumentDepth) fallback("nested too deep outside the records");
      stack_.push_back(Frame{obj, n && !n->children.empty() ? node : -1, "", 0, obj ? OBJ_FIRST : ARR_FIRST});
      return true;
    }
    if (tok == STRING || tok == NUMBER || tok == LITERAL) {
      if (node >= 0 && plan_.nodes[static_cast<size_t>(node)].capture) {
        size_t size = t.stop - t.start;
        if (size > plan_.captureLimit) fallback("a captured value beyond the capture limit");
        setCaptured(concretePath(), std::string(reinterpret_cast<const char *>(t.buf) + t.start, size));
      }
      return true;
    }
    fallback("not JSON: a value was expected");
  }

  void closeFrame() {
    if (capturing_ && capDepth_ == stack_.size()) {
      capSize_ += t.stop - capStart_;
      if (capSize_ > plan_.captureLimit) fallback("a captured value beyond the capture limit");
      capText_.append(reinterpret_cast<const char *>(t.buf) + capStart_, t.stop - capStart_);
      setCaptured(capPath_, capText_);
      capturing_ = false;
      capText_.clear();
    }
    stack_.pop_back();
    if (stack_.empty()) documentDone_ = true;
  }


  // The record whose `{` was just read: validated, then written as one NDJSON line; false: it needs more bytes.
  bool record(int specIndex) {
    size_t spec = static_cast<size_t>(specIndex);
    size_t recStart = t.start;
    uint64_t recLine = t.line, recCrs = t.crs;
    bool hasExact = !plan_.specs[spec].exactKeys.empty();
    const KeyTable &keys = keyTables_[spec];
    auto &texts = exactText_[spec];
    for (auto &e : texts) e.first = false;
    exactOrder_.clear();
    kinds_.clear();
    kinds_.push_back(1);
    State state = OBJ_FIRST;
    long bodyStart = -1;
    uint64_t bodyLine = 0, bodyCrs = 0;
    int exact = -1;
    // the route (Route): its key seen at this level (and how often), its value's bytes, or not routable
    const Route *route = plan_.specs[spec].routed ? &plan_.specs[spec].route : nullptr;
    bool routeValueNext = false, routable = route != nullptr;
    int routeHits = 0;
    size_t valueStart = 0, valueLen = 0;
    // the pairing's fields (Pairing): which one the next top-level value is, and what each held
    const Pairing *pairing = pairs_[spec] && pairs_[spec]->on ? &plan_.specs[spec].pairing : nullptr;
    int pairNext = -1;
    if (pairing) pairField_.assign(1 + pairing->groupKeys.size(), {0, std::string()});
    // the host lane's row (HostLane, LaneRecord): any doubt keeps the record in the spec
    const HostLane *lane = plan_.specs[spec].laned ? &plan_.specs[spec].lane : nullptr;
    LaneRecord &ln = lane_;
    ln.reset(lane != nullptr);
    pairTimeSet_ = false;
    for (;;) {
      Tok tok = t.next();
      if (tok == MORE) {
        t.pos = recStart;
        t.line = recLine;
        t.crs = recCrs;
        return false;
      }
      bool closed = false;
      switch (state) {
        case OBJ_FIRST:
        case OBJ_KEY:
          if (tok == STRING) {
            state = OBJ_COLON;
            if (kinds_.size() == 1) {
              if (bodyStart < 0) {
                bodyStart = static_cast<long>(t.start);
                bodyLine = t.line;
                bodyCrs = t.crs;
              }
              const KeyRoles *roles = t.escaped ? nullptr : keys.find(reinterpret_cast<const char *>(t.buf) + t.start + 1, t.stop - t.start - 2);
              if (hasExact) {
                if (t.escaped) fallback("an escaped key in a record with exact keys");
                exact = roles ? roles->exact : -1;
              }
              if (pairing) {
                if (t.escaped) {
                  pairs_[spec]->on = false;  // it might decode to one of the keys
                  pairing = nullptr;
                } else {
                  pairNext = roles ? roles->pair : -1;
                  // a key seen twice: its value is not certain
                  if (pairNext >= 0 && pairField_[static_cast<size_t>(pairNext)].first != 0) pairField_[static_cast<size_t>(pairNext)].first = -1, pairNext = -1;
                }
              }
              if (ln.ok) laneKey(roles, ln);
              if (routable) {
                if (t.escaped) {
                  routable = false;  // it might decode to the key
                } else if (roles && roles->route) {
                  routeValueNext = true;
                  routeHits++;
                }
              }
            } else if (ln.ok && ln.argsLevel != 0) {
              laneArgsKey(*lane, ln);
            }
            continue;
          }
          if (tok == END_OBJECT && state == OBJ_FIRST) {
            closed = true;
            break;
          }
          fallback("not JSON: a key was expected");
        case OBJ_COLON:
          if (tok != COLON) fallback("not JSON: \":\" was expected");
          state = OBJ_VALUE;
          continue;
        case OBJ_NEXT:
          if (tok == COMMA) {
            state = OBJ_KEY;
            continue;
          }
          if (tok == END_OBJECT) {
            closed = true;
            break;
          }
          fallback("not JSON: \",\" or \"}\" was expected");
        case ARR_NEXT:
          if (tok == COMMA) {
            state = ARR_VALUE;
            continue;
          }
          if (tok == END_ARRAY) {
            closed = true;
            break;
          }
          fallback("not JSON: \",\" or \"]\" was expected");
        default:  // OBJ_VALUE, ARR_FIRST, ARR_VALUE
          if (tok == END_ARRAY && state == ARR_FIRST) {
            closed = true;
            break;
          }
          if (pairNext >= 0) {  // the value of a pairing key (at this level)
            auto &pf = pairField_[static_cast<size_t>(pairNext)];
            pairNext = -1;
            if ((tok == STRING && !t.escaped) || tok == NUMBER || tok == LITERAL) {
              pf.first = tok;
              if (tok == STRING) pf.second.assign(reinterpret_cast<const char *>(t.buf) + t.start + 1, t.stop - t.start - 2);
              else pf.second.assign(reinterpret_cast<const char *>(t.buf) + t.start, t.stop - t.start);
            } else {
              pf.first = -1;
            }
          }
          if (ln.ok) laneValue(*lane, ln, tok);
          if (routeValueNext) {  // the value of the route key (at this level: the token right after its colon)
            routeValueNext = false;
            if (tok == STRING && !t.escaped) {
              valueStart = t.start + 1;
              valueLen = t.stop - t.start - 2;
            } else {
              routable = false;
            }
          }
          if (tok == STRING || tok == NUMBER || tok == LITERAL) {
            if (exact >= 0 && kinds_.size() == 1) {
              auto &e = texts[static_cast<size_t>(exact)];
              if (!e.first) exactOrder_.push_back(static_cast<size_t>(exact));
              e.first = true;
              if (tok == STRING) e.second.assign(reinterpret_cast<const char *>(t.buf) + t.start + 1, t.stop - t.start - 2);
              else e.second.assign(reinterpret_cast<const char *>(t.buf) + t.start, t.stop - t.start);
            }
            exact = -1;
            state = kinds_.back() == 1 ? OBJ_NEXT : ARR_NEXT;
            continue;
          }
          if (tok == BEGIN_OBJECT || tok == BEGIN_ARRAY) {
            exact = -1;
            bool obj = tok == BEGIN_OBJECT;
            kinds_.push_back(obj ? 1 : 2);
            state = obj ? OBJ_FIRST : ARR_FIRST;
            continue;
          }
          fallback("not JSON: a value was expected");
      }
      if (closed) {
        kinds_.pop_back();
        if (ln.argsLevel != 0 && kinds_.size() < ln.argsLevel) {  // the args container ends
          ln.field[LaneRecord::ARGS].len = t.stop - ln.field[LaneRecord::ARGS].start;
          ln.argsLevel = 0;
        }
        if (kinds_.empty()) break;
        state = kinds_.back() == 1 ? OBJ_NEXT : ARR_NEXT;
      }
    }
    if (routable && routeHits == 1 && !keeps(*route, valueStart, valueLen)) {
      // a routed record is not among the spec's records: one that would pair stops the pairing
      if (pairing && pairKind(*pairing) != 0) pairs_[spec]->on = false;
      writeRouted(spec, recLine, bodyLine, bodyCrs, bodyStart, t.start, valueStart, valueLen);
    } else if (ln.ok && ln.hits[LaneRecord::KIND] == 1 && ln.hits[LaneRecord::CAT] == 1 && !(pairing && pairKind(*pairing) != 0)
               && laneReady(spec, recStart) && toLane(spec, ln.field[LaneRecord::CAT].start, ln.field[LaneRecord::CAT].len)
               && writeLaneRow(spec, *lane, ln, recLine)) {
      // (written to the lane)
    } else {
      writeRecord(spec, spec, recLine, bodyLine, bodyCrs, bodyStart, t.start);
      if (pairing) pairStep(spec, *pairing, outs_[spec].count - 1);
    }
    return true;
  }

  // A key of the record's own level, for its host lane's row.
  void laneKey(const KeyRoles *roles, LaneRecord &ln) {
    // an escaped key might decode to one of the row's; a `_` key might repeat one the staged record appends
    if (t.escaped || (t.stop - t.start > 2 && t.buf[t.start + 1] == '_')) {
      ln.ok = false;
      return;
    }
    int f = roles ? roles->lane : 0;
    if (f == 0) return;
    if (++ln.hits[f] > 1) ln.ok = false;
    ln.next = f;
  }

  // A key inside the args: plain, and whether it is the correlation (of the args object's own level).
  void laneArgsKey(const HostLane &l, LaneRecord &ln) {
    const unsigned char *k = t.buf + t.start + 1;
    size_t kl = t.stop - t.start - 2;
    if (t.escaped || !LaneRecord::plainText(k, kl)) {
      ln.ok = false;
      return;
    }
    if (kinds_.size() == ln.argsLevel && kl == l.corrKey.size() && sameBytes(reinterpret_cast<const char *>(k), l.corrKey.data(), kl)) {
      ln.corrNext = true;
      ln.corrHits++;
    }
  }

  // A value token: a top-level one of the row's fields, or one inside the args.
  void laneValue(const HostLane &l, LaneRecord &ln, Tok tok) {
    const unsigned char *text = t.buf + t.start;
    size_t len = t.stop - t.start;
    bool plainString = tok == STRING && !t.escaped && LaneRecord::plainText(text + 1, len - 2);
    auto integer = [&]() { return tok == NUMBER && plainIntegerAt(reinterpret_cast<const char *>(text), len); };
    bool null = tok == LITERAL && len == 4 && std::memcmp(text, "null", 4) == 0;
    if (kinds_.size() == 1) {
      int f = ln.next;
      ln.next = 0;
      if (f == 0) return;
      LaneRecord::Value &v = ln.field[f];
      v.tok = tok;
      v.start = t.start;
      v.len = len;
      switch (f) {
        case LaneRecord::KIND:
          if (!plainString || len - 2 != l.kind.size() || !sameBytes(reinterpret_cast<const char *>(text) + 1, l.kind.data(), len - 2)) ln.ok = false;
          break;
        case LaneRecord::CAT:
          if (tok != STRING || t.escaped) ln.ok = false;  // (hostCategory: ASCII only)
          v.start = t.start + 1;
          v.len = len - 2;
          break;
        case LaneRecord::NAME:
          if (!plainString && !null) ln.ok = false;
          break;
        case LaneRecord::PID:
        case LaneRecord::TID:
          if (!plainString && !integer() && !null) ln.ok = false;
          break;
        default:  // ARGS
          if (tok == BEGIN_OBJECT || tok == BEGIN_ARRAY) ln.argsLevel = 2;  // (the container's depth once it is pushed)
          else if (!plainString && !integer() && tok != LITERAL) ln.ok = false;
      }
      return;
    }
    if (ln.argsLevel == 0 || kinds_.size() < ln.argsLevel) return;
    if ((tok == STRING && !plainString) || (tok == NUMBER && !integer())) ln.ok = false;
    if (ln.corrNext && kinds_.size() == ln.argsLevel) {
      ln.corrNext = false;
      ln.corr.tok = tok == NUMBER && ln.ok && text[0] != '-' ? NUMBER : -1;
      ln.corr.start = t.start;
      ln.corr.len = len;
    }
  }

  // The record (its bytes from recStart) can be a lane row: ASCII throughout, a ts and a dur, and under 1 MiB
  // (read_csv's longest line is 2 MiB unless raised, and a larger one raises its buffers).
  bool laneReady(size_t spec, size_t recStart) const {
    if (t.stop - recStart > (1u << 20)) return false;
    size_t i = recStart;
    for (; i + 8 <= t.stop; i += 8) {
      uint64_t w;
      std::memcpy(&w, t.buf + i, 8);
      if (w & 0x8080808080808080ull) return false;
    }
    for (; i < t.stop; i++) {
      if (t.buf[i] >= 0x80) return false;
    }
    bool ts = false, dur = false;
    for (size_t k : exactOrder_) {
      ts = ts || k == laneTimeKeys_[spec].first;
      dur = dur || k == laneTimeKeys_[spec].second;
    }
    return ts && dur;
  }

  // A whole number of ns under 2^62 in magnitude (a lane row's ts and dur: the caller casts them to BIGINT and adds
  // them, never beyond its range).
  static bool smallWhole(const std::string &v) {
    size_t i = !v.empty() && v[0] == '-' ? 1 : 0;
    if (v.size() == i || v.size() - i > 19) return false;
    uint64_t n = 0;
    for (; i < v.size(); i++) {
      if (!isDigit(static_cast<unsigned char>(v[i]))) return false;
      n = n * 10 + static_cast<uint64_t>(v[i] - '0');
    }
    return n < (uint64_t{1} << 62);
  }

  // The record's host lane row (HostLane): its exact values converted as writeRecord converts them (the same
  // fallbacks); false, with nothing written, when its ts or dur is not a whole number of ns under 2^62 (a
  // fraction of a ns, a time far out: the staged path's exact arithmetic is theirs).
  bool writeLaneRow(size_t spec, const HostLane &l, const LaneRecord &ln, uint64_t recLine) {
    const Spec &s = plan_.specs[spec];
    auto &texts = exactText_[spec];
    std::string &ts = laneTs_, &dur = laneDur_;
    ts.clear();
    dur.clear();
    for (size_t k : exactOrder_) {
      exactValue(s, texts[k].second, laneText_, conv_);
      if (k == laneTimeKeys_[spec].first) ts = conv_;
      if (k == laneTimeKeys_[spec].second) dur = conv_;
    }
    if (!smallWhole(ts) || !smallWhole(dur)) return false;
    for (size_t k : exactOrder_) texts[k].first = false;
    exactOrder_.clear();
    const char *b = reinterpret_cast<const char *>(t.buf);
    std::string &o = outs_[l.to].buf;
    auto raw = [&](const LaneRecord::Value &v) {  // a string's content, an integer's digits
      if (v.tok == STRING) o.append(b + v.start + 1, v.len - 2);
      else o.append(b + v.start, v.len);
    };
    auto absent = [&](const LaneRecord::Value &v) { return v.tok == 0 || v.tok == LITERAL; };  // (LITERAL: null, as checked)
    appendUint(o, recLine);
    const LaneRecord::Value *f = ln.field;
    for (int i : {LaneRecord::NAME, LaneRecord::CAT, LaneRecord::PID, LaneRecord::TID}) {
      o.push_back('\t');
      if (i == LaneRecord::CAT) o.append(b + f[i].start, f[i].len);
      else if (absent(f[i])) o += "\\N";
      else raw(f[i]);
    }
    o.push_back('\t');
    o += ts;
    o.push_back('\t');
    o += dur;
    o.push_back('\t');
    // the correlation: json_extract_string(args, '$.correlation'), as far as it is sure
    const LaneRecord::Value &a = f[LaneRecord::ARGS];
    if (a.tok != BEGIN_OBJECT || ln.corrHits == 0) o += "\\N";
    else if (ln.corrHits == 1 && ln.corr.tok == NUMBER) raw(ln.corr);
    else o.push_back('?');
    o += "\t{\"pid\":";
    for (int i : {LaneRecord::PID, LaneRecord::TID}) {
      if (i == LaneRecord::TID) o += ",\"tid\":";
      if (absent(f[i])) {
        o += "null";
      } else {
        o.push_back('"');
        raw(f[i]);
        o.push_back('"');
      }
    }
    o += ",\"args\":";
    if (a.tok == 0 || (a.tok == LITERAL && a.len == 4 && std::memcmp(b + a.start, "null", 4) == 0)) {
      o += "null";
    } else {
      // minified: whitespace outside strings left out (no string of the args has an escape, so a string is the
      // bytes up to the next quote); written a run at a time into room made once
      size_t at = o.size();
      o.resize(at + a.len);
      char *w = &o[at];
      const char *p = b + a.start, *end = p + a.len;
      while (p < end) {
        if (*p == '"') {
          const char *q = static_cast<const char *>(std::memchr(p + 1, '"', static_cast<size_t>(end - p - 1)));
          size_t n = static_cast<size_t>((q ? q + 1 : end) - p);
          std::memcpy(w, p, n);
          w += n;
          p += n;
        } else if (isSpace(static_cast<unsigned char>(*p))) {
          p++;
        } else {
          *w++ = *p++;
        }
      }
      o.resize(static_cast<size_t>(w - o.data()));
    }
    o += "}\n";
    outs_[l.to].done(static_cast<uint32_t>(recLine));
    return true;
  }

  // Whether a record of category t.buf[at, at + len) goes to spec's host lane (HostLane), judged once a category.
  bool toLane(size_t spec, size_t at, size_t len) {
    auto &seen = laneCats_[spec];
    std::string cat(reinterpret_cast<const char *>(t.buf) + at, len);
    auto it = seen.find(cat);
    if (it != seen.end()) return it->second;
    bool host = hostCategory(t.buf + at, len);
    if (host) std::printf("K %zu\t%s\n", plan_.specs[spec].lane.to, cat.c_str());
    seen.emplace(std::move(cat), host);
    return host;
  }


  // the record's kind: 1 open, 2 close, 0 neither, -1 not certain
  int pairKind(const Pairing &p) const {
    const auto &k = pairField_[0];
    if (k.first == -1) return -1;
    if (k.first != STRING) return 0;
    return k.second == p.open ? 1 : k.second == p.close ? 2 : 0;
  }

  // One record of a paired spec (its index among the spec's records). The pairs are those the caller's SQL finds
  // (a stack per group over its records sorted by (time, index)) only when: the group values are what DuckDB's
  // read_json gives as VARCHAR (absent and null the same, a string's text, an integer's digits, true and false;
  // "1" and 1 are one group), every open/close record has an exact time, and each group's times never go back
  // (then the sort keeps this order). Else the pairing stops and the caller pairs them.
  void pairStep(size_t spec, const Pairing &p, uint64_t index) {
    PairState &ps = *pairs_[spec];
    int kind = pairKind(p);
    if (kind == 0) return;
    auto stop = [&]() { ps.on = false; };
    // (a time of more than 30 digits might be beyond the SQL's HUGEINT: the SQL leaves such an event unpaired)
    if (kind < 0 || !pairTimeSet_ || !plainDecimal(pairTime_) || std::min(pairTime_.find('.'), pairTime_.size()) > 31) return stop();
    std::string key;
    for (size_t i = 1; i < pairField_.size(); i++) {
      const auto &g = pairField_[i];
      if (g.first == 0 || (g.first == LITERAL && g.second == "null")) {
        key += '\x01';
      } else if (g.first == STRING || (g.first == LITERAL && (g.second == "true" || g.second == "false")) || (g.first == NUMBER && plainInteger(g.second))) {
        key += '\x02';
        key += g.second;
      } else {
        return stop();
      }
      key += '\x00';
    }
    auto &g = ps.groups[key];
    if (g.any && compareDecimal(pairTime_, g.lastTime) < 0) return stop();
    g.lastTime = pairTime_;
    g.any = true;
    if (kind == 1) {
      g.open.push_back(index);
    } else if (!g.open.empty()) {
      std::string &o = ps.file.buf;
      appendUint(o, g.open.back());
      g.open.pop_back();
      o.push_back('\t');
      appendUint(o, index);
      o.push_back('\t');
      o += pairTime_;
      o.push_back('\n');
      ps.file.count++;
    }
  }

  static bool plainInteger(const std::string &d) { return plainIntegerAt(d.data(), d.size()); }

  bool keeps(const Route &r, size_t at, size_t len) const {
    for (const std::string &k : r.keep) {
      if (k.size() == len && sameBytes(k.data(), reinterpret_cast<const char *>(t.buf) + at, len)) return true;
    }
    return false;
  }

  // The body bytes [bodyStart, closeAt) onto o, a pretty-printed record's raw newlines as spaces (strings cannot hold them).
  void appendBody(std::string &o, uint64_t bodyLine, uint64_t bodyCrs, long bodyStart, size_t closeAt) const {
    size_t from = o.size();
    o.append(reinterpret_cast<const char *>(t.buf) + bodyStart, closeAt - static_cast<size_t>(bodyStart));
    for (char c : {'\n', '\r'}) {
      if (c == '\n' ? t.line == bodyLine : t.crs == bodyCrs) continue;
      for (char *p = &o[from], *end = &o[0] + o.size(); (p = static_cast<char *>(std::memchr(p, c, static_cast<size_t>(end - p)))) != nullptr;) *p++ = ' ';
    }
  }

  // A routed record (Route): N\x1f<value>\x1f{<body>}.
  void writeRouted(size_t spec, uint64_t recLine, uint64_t bodyLine, uint64_t bodyCrs, long bodyStart, size_t closeAt, size_t valueStart, size_t valueLen) {
    RoutedOut &r = *routes_[spec];
    std::string &o = r.buf;
    size_t start = o.size();
    appendUint(o, recLine);
    o.push_back('\x1f');
    o.append(reinterpret_cast<const char *>(t.buf) + valueStart, valueLen);
    o += "\x1f{";
    appendBody(o, bodyLine, bodyCrs, bodyStart, closeAt);
    o += "}\n";
    r.longest = std::max<uint64_t>(r.longest, o.size() - start);
    r.count++;
  }

  static void appendUint(std::string &o, uint64_t n) {
    char tmp[24];
    int k = 0;
    do {
      tmp[k++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n > 0);
    while (k > 0) o.push_back(tmp[--k]);
  }

  // A JSON string of printable ASCII without " and \ (anything else: the TypeScript scanner writes it).
  static void appendPlainString(std::string &o, const std::string &s) {
    for (unsigned char c : s) {
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') fallback("an exact value that needs escaping");
    }
    o.push_back('"');
    o += s;
    o.push_back('"');
  }

  // exactValue of the common text, digits with or without a fraction, when the result is whole: what scaleDecimal
  // (and fsToNsText) give, without their strings; false: exactValue's own way
  static bool plainExactValue(const Spec &s, const std::string &w, std::string &text, std::string &value) {
    size_t n = w.size(), i = 0;
    while (i < n && isDigit(static_cast<unsigned char>(w[i]))) i++;
    size_t intLen = i, fracLen = 0;
    if (intLen == 0) return false;
    if (i < n) {
      if (w[i] != '.') return false;
      for (i++; i < n && isDigit(static_cast<unsigned char>(w[i])); i++) fracLen++;
      if (i < n || fracLen == 0) return false;
    }
    // the result's zeros after the digits: pow10 less the fraction's digits (less 6 more from fs to ns)
    long zeros = s.convert == SCALE ? s.pow10 : s.convert == FS ? s.pow10 - 6 : 0;
    zeros -= static_cast<long>(fracLen);
    if (s.convert != NONE && (zeros < 0 || static_cast<long>(intLen) + s.pow10 > kMaxNsDigits)) return false;
    text = w;
    if (s.convert == NONE) {
      value = w;
      return true;
    }
    size_t lead = 0;
    while (lead < n && (w[lead] == '0' || w[lead] == '.')) lead++;
    value.clear();
    if (lead == n) {
      value.push_back('0');
      return true;
    }
    for (size_t k = lead; k < n; k++) {
      if (w[k] != '.') value.push_back(w[k]);
    }
    value.append(static_cast<size_t>(zeros), '0');
    return true;
  }

  // A record of spec, written to the NDJSON of spec `to` (itself, or its host lane).
  // An exact key's value as a record gets it: `text` the written text trimmed, `value` that converted (the spec's
  // convert); a text the fast path does not take falls back (the TypeScript scanner converts it).
  static void exactValue(const Spec &s, const std::string &written, std::string &text, std::string &value) {
    if (plainExactValue(s, written, text, value)) return;
    // String#trim: ASCII whitespace here (a text with any other byte falls back below)
    size_t a = 0, b = written.size();
    while (a < b && isSpace(static_cast<unsigned char>(written[a]))) a++;
    while (b > a && isSpace(static_cast<unsigned char>(written[b - 1]))) b--;
    for (unsigned char c : written) {
      if (c >= 0x80) fallback("an exact value with a non-ASCII byte");
    }
    text = written.substr(a, b - a);
    if (s.convert == NONE) {
      value = text;
    } else {
      if (!scaleDecimal(text, s.pow10, value)) fallback("an exact value beyond the fast conversion");
      if (s.convert == FS) value = fsToNsText(value);
    }
    // (what appendPlainString writes: the lane's row holds it as it is)
    for (unsigned char c : value) {
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') fallback("an exact value that needs escaping");
    }
  }

  void writeRecord(size_t spec, size_t to, uint64_t recLine, uint64_t bodyLine, uint64_t bodyCrs, long bodyStart, size_t closeAt) {
    std::string &o = outs_[to].buf;
    o += "{\"_line\":";
    appendUint(o, recLine);
    o += ",\"_i\":[";
    bool first = true;
    for (const Frame &f : stack_) {
      if (f.obj) continue;
      if (!first) o.push_back(',');
      first = false;
      appendUint(o, f.index);
    }
    o.push_back(']');
    if (bodyStart >= 0) {
      o.push_back(',');
      appendBody(o, bodyLine, bodyCrs, bodyStart, closeAt);
    }
    if (!exactOrder_.empty()) {
      const Spec &s = plan_.specs[spec];
      auto &texts = exactText_[spec];
      std::string text;
      for (size_t k : exactOrder_) {
        texts[k].first = false;
        exactValue(s, texts[k].second, text, conv_);
        o += ",\"_";
        o += s.exactKeys[k];
        o += "\":";
        o.push_back('"');  // (exactValue checked it: appendPlainString's constraints)
        o += conv_;
        o.push_back('"');
        const bool isTime = s.paired && s.exactKeys[k] == s.pairing.timeKey;
        if (isTime) {
          pairTime_ = conv_;
          pairTimeSet_ = true;
        }
        if (!s.exactText) continue;
        o += ",\"_";
        o += s.exactKeys[k];
        o += "_text\":";
        appendPlainString(o, text);
      }
      exactOrder_.clear();
    }
    o += "}\n";
    outs_[to].done(static_cast<uint32_t>(recLine));
  }
};

// ---------------------------------------------------------------------------
// Input: plain, or gzip through zlib.

struct Input {
  int fd = -1;
#ifdef TW_HAVE_ZLIB
  gzFile gz = nullptr;
#endif
  bool open(const char *path) {
    fd = ::open(path, O_RDONLY);
    if (fd < 0) return false;
    unsigned char magic[2] = {0, 0};
    ssize_t n = ::pread(fd, magic, 2, 0);
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
#ifdef TW_HAVE_ZLIB
      gz = gzdopen(fd, "rb");
      if (!gz) return false;
      gzbuffer(gz, 1u << 20);
      return true;
#else
      fallback("gzip input, and this build has no zlib");
#endif
    }
    if (n == 2 && magic[0] == 0x28 && magic[1] == 0xb5) fallback("zstd input");
    return true;
  }
  // Bytes read, 0 at the end.
  size_t read(unsigned char *into, size_t max) {
#ifdef TW_HAVE_ZLIB
    if (gz) {
      int n = gzread(gz, into, static_cast<unsigned>(std::min<size_t>(max, 1u << 30)));
      if (n < 0) fallback("corrupt gzip data");
      return static_cast<size_t>(n);
    }
#endif
    for (;;) {
      ssize_t n = ::read(fd, into, max);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) fallback(std::string("read failed: ") + std::strerror(errno));
    }
  }
};

int scan(const char *inputPath, const char *planPath) {
  Plan plan = readPlan(planPath);
  Input in;
  if (!in.open(inputPath)) fallback(std::string("cannot open the input: ") + std::strerror(errno));
  Scanner sc(plan);
  std::vector<unsigned char> win(plan.chunkBytes * 2 + 64);
  size_t have = 0;  // bytes in the window: the kept rest, then what was read since
  size_t rest = 0;
  bool eof = false;
  for (;;) {
    // read at least a chunk; a long cut record is parsed again only once as many bytes again have come
    size_t fresh = 0;
    while (!eof) {
      if (win.size() - have < plan.chunkBytes) win.resize(win.size() * 2);
      size_t n = in.read(win.data() + have, plan.chunkBytes);
      if (n == 0) {
        eof = true;
        break;
      }
      have += n;
      fresh += n;
      if (fresh >= rest || rest + fresh > plan.maxRecord) break;
    }
    sc.run(win.data(), have, eof);
    size_t keep = sc.t.pos;
    sc.beforeShift(keep);
    rest = have - keep;
    if (rest > plan.maxRecord) fallback("a record beyond the record limit");
    if (keep > 0 && rest > 0) std::memmove(win.data(), win.data() + keep, rest);
    have = rest;
    if (eof) {
      sc.end(rest > 0);
      break;
    }
    sc.flush(false);
  }
  for (Out &o : sc.outs_) o.close();
  for (size_t i = 0; i < sc.routes_.size(); i++) {
    if (!sc.routes_[i]) continue;
    sc.routes_[i]->close();
    std::printf("R %zu %llu %llu\t%s\n", i, static_cast<unsigned long long>(sc.routes_[i]->count), static_cast<unsigned long long>(sc.routes_[i]->longest),
                sc.routes_[i]->path().c_str());
  }
  for (size_t i = 0; i < sc.pairs_.size(); i++) {
    if (!sc.pairs_[i]) continue;
    RoutedOut &f = sc.pairs_[i]->file;
    f.close();
    if (sc.pairs_[i]->on) std::printf("Q %zu %llu\t%s\n", i, static_cast<unsigned long long>(f.count), f.path().c_str());
  }
  // the captured values one after another in <capdir>/captured, each named with its offset and length
  const std::string file = plan.capdir + "/captured";
  FILE *f = std::fopen(file.c_str(), "wb");
  if (!f) fallback("cannot write " + file);
  uint64_t at = 0;
  for (const auto &kv : sc.captured) {
    if (std::fwrite(kv.second.data(), 1, kv.second.size(), f) != kv.second.size()) fallback("cannot write " + file);
    std::printf("C %llu %zu\t%s\n", static_cast<unsigned long long>(at), kv.second.size(), kv.first.c_str());
    at += kv.second.size();
  }
  if (std::fclose(f) != 0) fallback("cannot write " + file);
  std::printf("D %llu", static_cast<unsigned long long>(sc.t.line));
  for (const Out &o : sc.outs_) std::printf(" %llu", static_cast<unsigned long long>(o.count));
  std::printf("\n");
  std::fflush(stdout);
  return 0;
}

// ---------------------------------------------------------------------------
// --split-lines: the ireeperf stage's split (packages/capture/src/
// ireeperf-split.ts). A plain JSON-lines file is read once, and each record
// goes by the `"record_type":"<type>"` in its first HEAD bytes: a record of
// type <skip> is left out (the caller reads those from the whole file), one
// of the <group> types goes to <groupOut>, any other (or one whose type is
// not found there) to <restOut>; each copied as `{"_l":<record number>,`
// and the rest of its line (record numbers count the non-blank lines, as
// DuckDB's read_json does). The caller checks the result against DuckDB's
// own record types, so a record sent the wrong way costs time, never a
// record. A blank line (DuckDB skips it, so the numbers would differ) or a
// line that does not start with `{` exits 3.
//   usage: tw-jsonscan --split-lines <input> <skip> <groupOut> <type,type...> <restOut>
//   stdout: D <records> <group copied> <rest copied>

int splitLines(const char *input, const std::string &skip, const char *groupPath, const std::string &groupTypes, const char *restPath) {
  const size_t HEAD = 96;
  const std::string key = "\"record_type\":\"";
  std::vector<std::string> group;
  for (size_t from = 0; from <= groupTypes.size();) {
    size_t comma = groupTypes.find(',', from);
    if (comma == std::string::npos) comma = groupTypes.size();
    if (comma > from) group.push_back(groupTypes.substr(from, comma - from));
    from = comma + 1;
  }
  int in = open(input, O_RDONLY);
  if (in < 0) fallback(std::string("cannot open the input: ") + std::strerror(errno));
  FILE *outs[2] = {std::fopen(groupPath, "wb"), std::fopen(restPath, "wb")};
  auto closeAll = [&]() {
    close(in);
    bool ok = true;
    for (FILE *f : outs) if (f && std::fclose(f) != 0) ok = false;
    return ok;
  };
  if (!outs[0] || !outs[1]) {
    closeAll();
    fallback(std::string("cannot write the split: ") + std::strerror(errno));
  }
  std::vector<char> buf(4 << 20);
  size_t have = 0;
  uint64_t records = 0, copied[2] = {0, 0};
  auto line = [&](const char *b, size_t n) {
    size_t i = 0;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r')) i++;
    if (i == n) fallback("a blank line");
    if (b[i] != '{') fallback("a line that is not an object");
    records++;
    size_t h = n < HEAD ? n : HEAD;
    int to = 1;
    const char *k = static_cast<const char *>(memmem(b, h, key.data(), key.size()));
    if (k) {
      const char *v = k + key.size();
      const char *q = static_cast<const char *>(std::memchr(v, '"', static_cast<size_t>(b + n - v)));
      if (q && !std::memchr(v, '\\', static_cast<size_t>(q - v))) {
        std::string type(v, static_cast<size_t>(q - v));
        if (type == skip) return;
        for (const std::string &g : group) if (g == type) to = 0;
      }
    }
    size_t j = i + 1;
    while (j < n && (b[j] == ' ' || b[j] == '\t')) j++;
    char lead[40];
    int w = std::snprintf(lead, sizeof lead, j < n && b[j] == '}' ? "{\"_l\":%llu" : "{\"_l\":%llu,", static_cast<unsigned long long>(records));
    std::fwrite(lead, 1, static_cast<size_t>(w), outs[to]);
    std::fwrite(b + i + 1, 1, n - i - 1, outs[to]);
    std::fputc('\n', outs[to]);
    copied[to]++;
  };
  try {
    for (;;) {
      if (have == buf.size()) buf.resize(buf.size() * 2);  // a line longer than the buffer
      ssize_t got = read(in, buf.data() + have, buf.size() - have);
      if (got < 0) {
        if (errno == EINTR) continue;
        fallback(std::string("read: ") + std::strerror(errno));
      }
      size_t end = have + static_cast<size_t>(got);
      size_t start = 0;
      for (;;) {
        const char *nl = static_cast<const char *>(std::memchr(buf.data() + start, '\n', end - start));
        if (!nl) break;
        size_t e = static_cast<size_t>(nl - buf.data());
        line(buf.data() + start, e - start);
        start = e + 1;
      }
      if (got == 0) {
        if (start < end) line(buf.data() + start, end - start);
        break;
      }
      std::memmove(buf.data(), buf.data() + start, end - start);
      have = end - start;
    }
  } catch (...) {
    closeAll();
    throw;
  }
  if (!closeAll()) fallback(std::string("cannot write the split: ") + std::strerror(errno));
  std::printf("D %llu %llu %llu\n", static_cast<unsigned long long>(records), static_cast<unsigned long long>(copied[0]),
              static_cast<unsigned long long>(copied[1]));
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("tw-jsonscan 1%s\n",
#ifdef TW_HAVE_ZLIB
                " zlib"
#else
                ""
#endif
    );
    return 0;
  }
  if (argc == 7 && std::strcmp(argv[1], "--split-lines") == 0) {
    try {
      return splitLines(argv[2], argv[3], argv[4], argv[5], argv[6]);
    } catch (const Fallback &f) {
      std::fprintf(stderr, "tw-jsonscan: %s\n", f.why.c_str());
      return 3;
    }
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: tw-jsonscan <input> <plan> | --split-lines <input> <skip> <groupOut> <type,type...> <restOut>\n");
    return 2;
  }
  try {
    return scan(argv[1], argv[2]);
  } catch (const Fallback &f) {
    std::fprintf(stderr, "tw-jsonscan: %s\n", f.why.c_str());
    return 3;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tw-jsonscan: %s\n", e.what());
    return 3;
  }
}
