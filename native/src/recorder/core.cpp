// The recorder's core: configuration, per-thread rings, the drain thread that
// writes the capture directory, clock sampling, exit/signal/fork handling.
//
//   app threads --emit()--> per-thread SPSC rings --drain thread--> records.twr (CRC'd chunks)
//                                                        |------> meta.json (start, on change, at end)
//
// Everything here is inert unless TICKWISE_CAPTURE_DIR is set.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "recorder/json.h"
#include "recorder/provenance.h"
#include "recorder/recorder.h"
#include "tickwise/crc32.h"

#ifndef TICKWISE_VERSION
#define TICKWISE_VERSION "0.0.0"
#endif

namespace tickwise::rec {

std::atomic<uint32_t> g_active_mask{0};
bool g_host_tsc = false;
std::atomic<uint32_t> g_generation{1};
__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

namespace {

// The backends by BackendId. The table is unsized and names each entry's id, so
// a BackendId without an entry (or one out of order) fails the static_asserts;
// a table sized [kBackendCount] would zero-fill a missing entry instead.
struct BackendEntry {
  BackendId id;
  const BackendOps& (*ops)();
};
constexpr BackendEntry kBackendTable[] = {
    {BackendId::kHip, &hip_backend},
    {BackendId::kAmdxdna, &amdxdna_backend},
    {BackendId::kCuda, &cuda_backend},
};
constexpr size_t kBackendTableSize = sizeof(kBackendTable) / sizeof(kBackendTable[0]);
static_assert(kBackendTableSize == kBackendCount, "register every BackendId in kBackendTable");
constexpr bool backend_table_in_id_order() {
  for (size_t i = 0; i < kBackendTableSize; ++i)
    if (size_t(kBackendTable[i].id) != i) return false;
  return true;
}
static_assert(backend_table_in_id_order(), "kBackendTable[i] must be BackendId i");

const BackendOps* backend_ops(size_t i) { return &kBackendTable[i].ops(); }

uint32_t sys_gettid() { return uint32_t(syscall(SYS_gettid)); }

uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

/// State only the drain thread touches; replaced wholesale in a forked child.
struct DrainState {
  std::vector<fmt::Record> buf;
  uint64_t buf_since_ns = 0;
  uint64_t chunk_seq = 0;
  uint64_t chunks_written = 0, records_written = 0, bytes_written = 0;
  uint64_t write_errors = 0;
  std::unordered_set<uint64_t> named_keys[3];  // by StringKeyKind
  uint64_t clock_seq[64] = {};
  uint64_t clock_samples = 0;
  uint64_t next_clock_ns = 0;
  uint64_t next_stats_ns = 0;
  uint64_t next_provenance_ns = 0;
  unsigned long long last_dl_adds = ~0ull, last_dl_subs = ~0ull;
  ProvenanceCache provenance;
  bool started = false;
  // (tsc, CLOCK_MONOTONIC ns) points, one per drain pass, for host_stamp() conversion
  std::vector<std::pair<uint64_t, uint64_t>> tsc_points;
  uint64_t tsc_points_total = 0;
};

struct RetiredStats {
  uint32_t tid;
  uint64_t pushed, dropped;
};

struct State {
  Config cfg;
  std::string root_dir;     // TICKWISE_CAPTURE_DIR
  std::string capture_dir;  // where this process writes
  int fd = -1;
  bool lazy_open = false;
  int dir_attempt = 0;  // a forked child creates its files on first write (fork+exec leaves nothing)
  uint32_t pid = 0, parent_pid = 0;
  bool fork_child = false;
  uint64_t start_ns = 0;
  int64_t boot_minus_mono_ns = 0;
  std::vector<std::string> cmdline;
  std::string exe;

  std::mutex reg_mu;  // rings, retired
  std::vector<Ring*> rings;
  std::vector<RetiredStats> retired;
  uint32_t next_slot = 1;

  std::mutex names_mu;
  std::unordered_map<uint64_t, std::string> names[3];

  DrainState* drain = nullptr;
  pthread_t drain_thread{};
  bool drain_running = false;
  int wake_pipe[2] = {-1, -1};
  int done_pipe[2] = {-1, -1};  // closed when the capture is finished (wakes a waiting handler)
  uint32_t enabled_mask = 0;  // backends recording in this capture (g_active_mask drops to 0 at the end)
  std::atomic<bool> clock_requested{false};
  std::atomic<int> finalize_request{0};  // 0 none, -1 exit, >0 signal number
  std::atomic<bool> finalized{false};
  std::atomic<bool> joined{false};
  std::string end_reason;
  // Records delivered by a backend's flush on the flush helper thread.
  std::mutex helper_mu;
  std::vector<fmt::Record> helper_records;
  bool helper_open = false;
  std::vector<std::string> flush_timeouts;
  struct sigaction old_action[65];
  bool handler_installed[65] = {};
  // SIGTERM/SIGINT that arrived while recording. The handler only notes them and
  // returns; the drain thread finishes the capture, gives the signals back to the
  // app's own handling and queues each to the thread it first hit. Slot state:
  // 0 empty, 1 noted, 2 taken (by the drain thread, or by a handler that ran
  // after the drain thread was done).
  struct PendingSignal {
    std::atomic<int> state{0};
    int sig = 0;
    uint32_t tid = 0;
    siginfo_t info{};
  };
  static constexpr uint32_t kMaxPendingSignals = 16;
  PendingSignal pending_signals[kMaxPendingSignals];
  std::atomic<uint32_t> pending_count{0};
  std::atomic<bool> signals_returned{false};
};

State* g_state = nullptr;
std::once_flag g_init_once;

State& st() { return *g_state; }

// ---- configuration ------------------------------------------------------

uint32_t env_u32(const char* name, uint32_t dflt, uint32_t lo, uint32_t hi) {
  const char* v = getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  unsigned long x = strtoul(v, &end, 10);
  if (end == v) return dflt;
  return uint32_t(std::min<unsigned long>(std::max<unsigned long>(x, lo), hi));
}

bool env_flag(const char* name, bool dflt) {
  const char* v = getenv(name);
  if (!v || !*v) return dflt;
  return !(strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "false") == 0 || strcmp(v, "no") == 0);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(sep, b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

void read_config(Config& c) {
  const char* dir = getenv("TICKWISE_CAPTURE_DIR");
  c.capture_dir = dir ? dir : "";
  const char* be = getenv("TICKWISE_BACKENDS");
  if (be && *be) {
    for (const auto& name : split(be, ','))
      for (size_t i = 0; i < kBackendCount; ++i)
        if (name == backend_ops(i)->name) c.backend_enabled[i] = true;
  } else {
    for (size_t i = 0; i < kBackendCount; ++i) c.backend_enabled[i] = true;
  }
  uint32_t ring = env_u32("TICKWISE_RING_RECORDS", 8192, 2, 1u << 24);
  uint32_t p2 = 2;
  while (p2 < ring) p2 <<= 1;
  c.ring_records = p2;
  c.clock_period_ms = env_u32("TICKWISE_CLOCK_PERIOD_MS", 1000, 10, 3600000);
  c.clock_tries = env_u32("TICKWISE_CLOCK_TRIES", 16, 1, 1024);
  c.drain_period_ms = env_u32("TICKWISE_DRAIN_PERIOD_MS", 10, 1, 1000);
  const char* fork_mode = getenv("TICKWISE_FORK");
  c.fork_own = !(fork_mode && strcmp(fork_mode, "off") == 0);
  c.hip_correlate = env_flag("TICKWISE_HIP_CORRELATE", true);
  c.rocprofiler = env_flag("TICKWISE_ROCPROFILER", true);
  c.debug = env_flag("TICKWISE_DEBUG", false);
  const char* markers = getenv("TICKWISE_MARKERS");
  if (markers && *markers) {
    std::string m = markers;
    c.markers = split(m, m.find('\n') != std::string::npos ? '\n' : ',');
  }
}

std::vector<std::string> read_cmdline() {
  std::vector<std::string> out;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  std::string all;
  char b[4096];
  ssize_t n;
  while ((n = read(fd, b, sizeof b)) > 0) all.append(b, size_t(n));
  close(fd);
  size_t s = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == '\0') {
      out.push_back(all.substr(s, i - s));
      s = i + 1;
    }
  if (s < all.size()) out.push_back(all.substr(s));
  return out;
}

std::string read_link(const char* p) {
  char b[4096];
  ssize_t n = readlink(p, b, sizeof b - 1);
  return n > 0 ? std::string(b, size_t(n)) : std::string();
}

int mkdir_p(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && mkdir(cur.c_str(), 0775) != 0 && errno != EEXIST) return -1;
    }
    if (i < path.size()) cur += path[i];
  }
  return 0;
}

// ---- writing ----------------------------------------------------------------

bool write_all(int fd, const struct iovec* iov, int n) {
  std::vector<struct iovec> v(iov, iov + n);
  size_t idx = 0;
  while (idx < v.size()) {
    ssize_t w = writev(fd, &v[idx], int(v.size() - idx));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    size_t left = size_t(w);
    while (idx < v.size() && left >= v[idx].iov_len) left -= v[idx++].iov_len;
    if (idx < v.size()) {
      v[idx].iov_base = static_cast<char*>(v[idx].iov_base) + left;
      v[idx].iov_len -= left;
    }
  }
  return true;
}

bool open_capture(State& s);

/// Creates the capture files of a lazily opened (forked child) capture.
bool ensure_open(State& s) {
  if (s.fd >= 0) return true;
  if (!s.lazy_open) return false;
  s.lazy_open = false;
  return open_capture(s);
}

void write_chunk(State& s, fmt::ChunkType type, const void* payload, uint32_t bytes, uint32_t count) {
  DrainState& d = *s.drain;
  if (!ensure_open(s)) {
    ++d.write_errors;
    return;
  }
  fmt::ChunkHeader h{};
  h.magic = fmt::kChunkMagic;
  h.type = uint16_t(type);
  h.header_size = sizeof h;
  h.payload_bytes = bytes;
  h.item_count = count;
  h.seq = d.chunk_seq++;
  h.payload_crc32 = crc32(payload, bytes);
  h.header_crc32 = crc32(&h, offsetof(fmt::ChunkHeader, header_crc32));
  struct iovec iov[2] = {{&h, sizeof h}, {const_cast<void*>(payload), bytes}};
  if (!write_all(s.fd, iov, 2)) {
    ++d.write_errors;
    return;
  }
  ++d.chunks_written;
  d.bytes_written += sizeof h + bytes;
}

/// Names for keys that the pending records use and the file has not seen.
void write_new_names(State& s) {
  DrainState& d = *s.drain;
  std::string payload;
  uint32_t count = 0;
  for (const auto& r : d.buf) {
    if (r.prefix.kind != uint16_t(fmt::Kind::kHipLaunch)) continue;
    const auto& l = r.hip_launch;
    if (l.api == uint16_t(fmt::HipApi::kGraphLaunch) || l.function == 0) continue;
    const auto kind = (l.api == uint16_t(fmt::HipApi::kModuleLaunchKernel) ||
                       l.api == uint16_t(fmt::HipApi::kExtModuleLaunchKernel))
                          ? fmt::StringKeyKind::kHipFunction
                          : fmt::StringKeyKind::kHipHostFunction;
    auto& seen = d.named_keys[uint32_t(kind)];
    if (!seen.insert(l.function).second) continue;
    std::string name;
    {
      std::lock_guard<std::mutex> g(s.names_mu);
      auto it = s.names[uint32_t(kind)].find(l.function);
      if (it != s.names[uint32_t(kind)].end()) name = it->second;
    }
    if (name.empty()) {
      const BackendOps* hip = backend_ops(size_t(BackendId::kHip));
      if (hip->resolve_name) name = hip->resolve_name(kind, l.function);
    }
    if (name.empty()) continue;
    fmt::StringEntry e{l.function, uint32_t(kind), uint32_t(name.size())};
    payload.append(reinterpret_cast<const char*>(&e), sizeof e);
    payload += name;
    payload.append((8 - name.size() % 8) % 8, '\0');
    ++count;
  }
  if (count) write_chunk(s, fmt::ChunkType::kStrings, payload.data(), uint32_t(payload.size()), count);
}

void flush_buf(State& s) {
  DrainState& d = *s.drain;
  if (d.buf.empty()) return;
  write_new_names(s);
  write_chunk(s, fmt::ChunkType::kRecords, d.buf.data(), uint32_t(d.buf.size() * sizeof(fmt::Record)),
              uint32_t(d.buf.size()));
  d.records_written += d.buf.size();
  d.buf.clear();
}

constexpr size_t kChunkRecords = 4096;  // 256 KiB of records per chunk at most
constexpr uint64_t kChunkMaxAgeNs = 50'000'000;

void append(State& s, const fmt::Record& r) {
  DrainState& d = *s.drain;
  if (d.buf.empty()) d.buf_since_ns = now_ns();
  d.buf.push_back(r);
  if (d.buf.size() >= kChunkRecords) flush_buf(s);
}

// ---- host stamps ----------------------------------------------------------------

#if defined(__x86_64__)
/// One (tsc, mono) point: the TSC read between two CLOCK_MONOTONIC reads,
/// the narrowest of a few tries, mono taken as the bracket's middle.
void sample_tsc_point(DrainState& d) {
  uint64_t best = ~0ull, tsc = 0, mono = 0;
  for (int i = 0; i < 4; ++i) {
    const uint64_t a = now_ns(), t = __rdtsc(), b = now_ns();
    if (b - a < best) best = b - a, tsc = t, mono = a + (b - a) / 2;
  }
  if (!d.tsc_points.empty() && tsc <= d.tsc_points.back().first) return;
  d.tsc_points.emplace_back(tsc, mono);
  ++d.tsc_points_total;
  if (d.tsc_points.size() > 512) d.tsc_points.erase(d.tsc_points.begin(), d.tsc_points.begin() + 256);
}
#else
void sample_tsc_point(DrainState&) {}
#endif

/// A host_stamp() value as CLOCK_MONOTONIC ns: linear between the two points
/// around it (or through the nearest two at either end).
uint64_t stamp_to_ns(const DrainState& d, uint64_t stamp) {
  if (!g_host_tsc) return stamp;
  const auto& p = d.tsc_points;
  if (p.size() < 2) return p.empty() ? 0 : p[0].second;
  size_t hi = p.size() - 1;
  while (hi > 1 && p[hi - 1].first > stamp) --hi;  // records are recent: scan from the end
  const auto& a = p[hi - 1];
  const auto& b = p[hi];
  const __int128 dt = (__int128)stamp - (__int128)a.first;
  const __int128 v = (__int128)a.second + dt * (__int128)(b.second - a.second) / (__int128)(b.first - a.first);
  return v < 0 ? 0 : uint64_t(v);
}

void convert_stamps(const DrainState& d, fmt::Record& r) {
  const uint16_t k = r.prefix.kind;
  if (k == uint16_t(fmt::Kind::kHipLaunch) || k == uint16_t(fmt::Kind::kHipSync) ||
      (k >= uint16_t(fmt::Kind::kXdnaDevice) && k <= uint16_t(fmt::Kind::kXdnaSyncobjWait))) {
    // HipLaunch, HipSync and every amdxdna record keep enter/exit at bytes 8 and 16.
    r.xdna.host_enter_ns = stamp_to_ns(d, r.xdna.host_enter_ns);
    r.xdna.host_exit_ns = stamp_to_ns(d, r.xdna.host_exit_ns);
  }
}

bool tsc_usable() {
#if defined(__x86_64__)
  const char* want = getenv("TICKWISE_HOST_CLOCK");
  if (want && strcmp(want, "clock_gettime") == 0) return false;
  char src[64] = {};
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, src, sizeof src - 1);
  close(fd);
  if (n <= 0 || strncmp(src, "tsc", 3) != 0) return false;
  // invariant TSC: the clocksource "tsc" is only kept stable by the kernel when
  // it is; check the flags anyway
  FILE* f = fopen("/proc/cpuinfo", "re");
  if (!f) return false;
  char line[8192];
  bool constant = false, nonstop = false;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0) continue;
    constant = strstr(line, " constant_tsc") != nullptr;
    nonstop = strstr(line, " nonstop_tsc") != nullptr;
    break;
  }
  fclose(f);
  return constant && nonstop;
#else
  return false;
#endif
}

// ---- rings --------------------------------------------------------------------

void drain_rings(State& s) {
  std::vector<Ring*> rings;
  {
    std::lock_guard<std::mutex> g(s.reg_mu);
    rings = s.rings;
  }
  if (g_host_tsc) sample_tsc_point(*s.drain);
  for (Ring* r : rings)
    r->drain([&](const fmt::Record& rec) {
      fmt::Record c = rec;
      convert_stamps(*s.drain, c);
      append(s, c);
    });
}

void stats_record(State& s, Ring* r, uint16_t flags) {
  fmt::Record rec{};
  auto& t = rec.thread_stats;
  t.kind = uint16_t(fmt::Kind::kThreadStats);
  t.flags = flags;
  t.tid = r->tid;
  t.host_ns = now_ns();
  t.pushed_total = r->head.load(std::memory_order_acquire);
  t.dropped_total = r->dropped.load(std::memory_order_relaxed);
  t.ring_records = r->capacity;
  r->reported_pushed = t.pushed_total;
  r->reported_dropped = t.dropped_total;
  append(s, rec);
}

/// ThreadStats for rings whose counters moved; frees rings of exited threads.
void write_stats(State& s, bool final_pass) {
  std::vector<Ring*> rings;
  {
    std::lock_guard<std::mutex> g(s.reg_mu);
    rings = s.rings;
  }
  const uint64_t now = now_ns();
  std::vector<Ring*> to_free;
  for (Ring* r : rings) {
    const bool retired = r->retired.load(std::memory_order_acquire);
    const uint64_t pushed = r->head.load(std::memory_order_acquire);
    const uint64_t dropped = r->dropped.load(std::memory_order_relaxed);
    if (final_pass || retired || pushed != r->reported_pushed || dropped != r->reported_dropped)
      stats_record(s, r, uint16_t((retired ? 1 : 0) | (final_pass ? 2 : 0)));
    // A ring of an exited thread (never the main thread's) goes after a grace
    // period in which nothing more was pushed.
    if (retired && !final_pass && r->tid != s.pid) {
      if (r->retired_at_ns == 0) r->retired_at_ns = now;
      else if (now - r->retired_at_ns > 1'000'000'000ull && r->tail.load() == r->head.load()) to_free.push_back(r);
    }
  }
  if (!to_free.empty()) {
    std::lock_guard<std::mutex> g(s.reg_mu);
    for (Ring* r : to_free) {
      s.retired.push_back({r->tid, r->head.load(), r->dropped.load()});
      s.rings.erase(std::remove(s.rings.begin(), s.rings.end(), r), s.rings.end());
      Ring::destroy(r);
    }
  }
}

// ---- clocks ---------------------------------------------------------------------

struct DrainClockSink final : ClockSink {
  State& s;
  uint32_t reason;
  explicit DrainClockSink(State& st, uint32_t why) : s(st), reason(why) {}
  void add(fmt::Domain domain, uint64_t before, uint64_t value, uint64_t after, uint32_t tries) override {
    fmt::Record rec{};
    auto& c = rec.clock;
    c.kind = uint16_t(fmt::Kind::kClockSample);
    c.domain = uint16_t(domain);
    c.tid = t_state.tid;
    c.host_before_ns = before;
    c.host_after_ns = after;
    c.device_value = value;
    c.tries = tries;
    c.sample_seq = s.drain->clock_seq[uint16_t(domain) % 64]++;
    // A domain's first sample is its start sample, whenever its device appeared.
    c.reason = c.sample_seq == 0 && reason == uint32_t(fmt::ClockReason::kPeriodic) ? uint32_t(fmt::ClockReason::kStart)
                                                                                     : reason;
    ++s.drain->clock_samples;
    append(s, rec);
  }
};

void sample_clocks(State& s, fmt::ClockReason reason) {
  DrainClockSink sink(s, uint32_t(reason));
  // BOOTTIME against MONOTONIC, so that rocprofiler-sdk's BOOTTIME times map.
  uint64_t best_w = ~0ull, bb = 0, bv = 0, ba = 0;
  for (uint32_t i = 0; i < s.cfg.clock_tries; ++i) {
    uint64_t b = clock_ns(CLOCK_MONOTONIC), v = clock_ns(CLOCK_BOOTTIME), a = clock_ns(CLOCK_MONOTONIC);
    if (a - b < best_w) best_w = a - b, bb = b, bv = v, ba = a;
  }
  sink.add(fmt::Domain::kHostBoottime, bb, bv, ba, s.cfg.clock_tries);
  for (size_t i = 0; i < kBackendCount; ++i)
    if ((s.enabled_mask >> i & 1) && backend_ops(i)->sample_clocks) backend_ops(i)->sample_clocks(sink, s.cfg.clock_tries);
}

// ---- meta.json -------------------------------------------------------------------

void write_meta(State& s, bool complete) {
  DrainState& d = *s.drain;
  JsonWriter w;
  w.begin_object();
  w.key("format").value("tickwise-recorder");
  w.key("format_version").value(fmt::kFormatVersion);
  w.key("producer").begin_object();
  w.key("name").value("tickwise-recorder");
  w.key("version").value(TICKWISE_VERSION);
  w.key("library").value(provenance_self_path());
  w.end_object();
  w.key("complete").value(complete);
  if (complete) w.key("end_reason").value(s.end_reason);
  else w.key("end_reason").null();
  w.key("pid").value(s.pid);
  w.key("parent_pid").value(s.parent_pid);
  w.key("fork_child").value(s.fork_child);
  w.key("exe").value(s.exe);
  w.key("command_line").begin_array();
  for (const auto& a : s.cmdline) w.value(a);
  w.end_array();
  w.key("records_file").value("records.twr");
  w.key("record_size_bytes").value(fmt::kRecordSize);
  w.key("host_timeline").value("CLOCK_MONOTONIC");
  w.key("host_stamps").value(g_host_tsc ? "tsc, converted to CLOCK_MONOTONIC ns by linear interpolation between (mono, tsc, mono) points taken every drain pass"
                                        : "clock_gettime(CLOCK_MONOTONIC)");
  w.key("host_stamp_points").value(d.tsc_points_total);
  w.key("host_start_ns").value_u64_string(s.start_ns);
  w.key("boottime_minus_monotonic_ns").value_i64_string(s.boot_minus_mono_ns);
  w.key("ring_records").value(s.cfg.ring_records);
  w.key("clock_period_ms").value(s.cfg.clock_period_ms);
  w.key("clock_tries").value(s.cfg.clock_tries);
  w.key("clock_domains").begin_array();
  w.begin_object();
  w.key("id").value(unsigned(fmt::Domain::kHostMonotonic));
  w.key("name").value("host_monotonic");
  w.key("kind").value("host");
  w.key("unit").value("ns");
  w.key("clock").value("CLOCK_MONOTONIC");
  w.end_object();
  w.begin_object();
  w.key("id").value(unsigned(fmt::Domain::kHostBoottime));
  w.key("name").value("host_boottime");
  w.key("kind").value("host");
  w.key("unit").value("ns");
  w.key("clock").value("CLOCK_BOOTTIME");
  w.end_object();
  for (size_t i = 0; i < kBackendCount; ++i)
    if ((s.enabled_mask >> i & 1) && backend_ops(i)->describe_domains) backend_ops(i)->describe_domains(w);
  w.end_array();
  w.key("clock_samples").begin_object();
  w.key("in").value("records.twr");
  w.key("record_kind").value(unsigned(fmt::Kind::kClockSample));
  w.key("count").value(d.clock_samples);
  w.end_object();
  w.key("backends").begin_array();
  for (size_t i = 0; i < kBackendCount; ++i) {
    const BackendOps* b = backend_ops(i);
    w.begin_object();
    w.key("name").value(b->name);
    const bool on = s.enabled_mask >> i & 1;
    w.key("state").value(!b->compiled ? "not_built" : on ? "enabled" : "disabled");
    if (on && b->describe) b->describe(w);
    w.end_object();
  }
  w.end_array();
  // Per-thread totals: rings still registered plus those already freed.
  uint64_t drops_total = 0, pushed_total = 0;
  w.key("threads").begin_array();
  {
    std::lock_guard<std::mutex> g(s.reg_mu);
    auto row = [&](uint32_t tid, uint64_t pushed, uint64_t dropped, bool exited) {
      w.begin_object();
      w.key("tid").value(tid);
      w.key("records_pushed").value(pushed);
      w.key("records_dropped").value(dropped);
      w.key("exited").value(exited);
      w.end_object();
      drops_total += dropped;
      pushed_total += pushed;
    };
    for (Ring* r : s.rings) row(r->tid, r->head.load(), r->dropped.load(), r->retired.load());
    for (const auto& r : s.retired) row(r.tid, r.pushed, r.dropped, true);
  }
  w.end_array();
  w.key("records_pushed_total").value(pushed_total);
  w.key("records_dropped_total").value(drops_total);
  w.key("records_written").value(d.records_written);
  w.key("chunks_written").value(d.chunks_written);
  w.key("write_errors").value(d.write_errors);
  w.key("flush_timeouts").begin_array();
  for (const auto& n : s.flush_timeouts) w.value(n);
  w.end_array();
  w.key("markers").begin_array();
  for (const auto& m : s.cfg.markers) w.value(m);
  w.end_array();
  w.key("provenance");
  write_provenance_json(w, d.provenance, s.cfg.markers);
  w.key("children_dir_pattern").value("proc-<pid>");
  w.end_object();
  w.out += '\n';

  if (!ensure_open(s)) return;
  const std::string tmp = s.capture_dir + "/meta.json.tmp";
  const std::string dst = s.capture_dir + "/meta.json";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  struct iovec iov = {const_cast<char*>(w.out.data()), w.out.size()};
  bool ok = write_all(fd, &iov, 1);
  close(fd);
  if (ok) rename(tmp.c_str(), dst.c_str());
}

// ---- the drain thread -------------------------------------------------------------

void refresh_provenance(State& s, bool force) {
  DrainState& d = *s.drain;
  unsigned long long adds = 0, subs = 0;
  provenance_counters(&adds, &subs);
  if (!force && adds == d.last_dl_adds && subs == d.last_dl_subs) return;
  d.last_dl_adds = adds;
  d.last_dl_subs = subs;
  provenance_scan(d.provenance, s.cfg.markers);
  write_meta(s, false);
}

struct FlushJob {
  State* s;
  size_t backend;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

void* flush_helper_main(void* arg) {
  auto* job = static_cast<FlushJob*>(arg);
  t_state.flush_helper = true;
  t_state.busy = true;
  backend_ops(job->backend)->flush();
  {
    std::lock_guard<std::mutex> g(job->mu);
    job->done = true;
  }
  job->cv.notify_all();
  return nullptr;
}

void flush_with_deadline(State& s, size_t backend) {
  {
    std::lock_guard<std::mutex> g(s.helper_mu);
    s.helper_open = true;
  }
  auto* job = new FlushJob{&s, backend, {}, {}, false};  // leaked if the helper never returns
  pthread_t th;
  bool finished = false;
  if (pthread_create(&th, nullptr, flush_helper_main, job) == 0) {
    std::unique_lock<std::mutex> l(job->mu);
    const int seconds = s.finalize_request.load() > 0 ? 1 : 5;
    finished = job->cv.wait_for(l, std::chrono::seconds(seconds), [&] { return job->done; });
    l.unlock();
    if (finished) pthread_join(th, nullptr), delete job;
    else pthread_detach(th);
  }
  std::vector<fmt::Record> got;
  {
    std::lock_guard<std::mutex> g(s.helper_mu);
    s.helper_open = false;
    got.swap(s.helper_records);
  }
  for (const auto& r : got) append(s, r);
  if (!finished) {
    s.flush_timeouts.push_back(backend_ops(backend)->name);
    debugf("%s flush did not finish in time; its buffered records are lost", backend_ops(backend)->name);
  }
}

void finalize_on_drain(State& s) {
  // 1. no new records from app threads from here on; calls already inside an
  //    interposer get a moment to push theirs
  g_active_mask.store(0, std::memory_order_release);
  usleep(1000);
  drain_rings(s);
  flush_buf(s);
  // 2. device records still buffered inside runtimes (rocprofiler-sdk), on a
  //    helper thread with a deadline: the signal may have interrupted a
  //    runtime thread that holds a lock the flush needs.
  for (size_t i = 0; i < kBackendCount; ++i)
    if ((s.enabled_mask >> i & 1) && backend_ops(i)->flush) flush_with_deadline(s, i);
  drain_rings(s);
  sample_clocks(s, fmt::ClockReason::kExit);
  write_stats(s, true);
  flush_buf(s);
  provenance_scan(s.drain->provenance, s.cfg.markers);
  const int req = s.finalize_request.load();
  s.end_reason = req > 0 ? "signal:" + std::to_string(req) : "exit";
  write_meta(s, true);
  s.finalized.store(true, std::memory_order_release);
  debugf("finalized: %llu records in %llu chunks (%s)", (unsigned long long)s.drain->records_written,
         (unsigned long long)s.drain->chunks_written, s.end_reason.c_str());
}

void return_signals(State& s);

void* drain_main(void* arg) {
  State& s = *static_cast<State*>(arg);
  // Signals are handled by app threads; the drain thread must stay free to finish.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  t_state.is_drain = true;
  t_state.busy = true;
  t_state.tid = sys_gettid();
  DrainState& d = *s.drain;
  const uint64_t clock_period = uint64_t(s.cfg.clock_period_ms) * 1'000'000ull;
  while (true) {
    struct pollfd p = {s.wake_pipe[0], POLLIN, 0};
    poll(&p, 1, int(s.cfg.drain_period_ms));
    if (p.revents & POLLIN) {
      char b[64];
      (void)!read(s.wake_pipe[0], b, sizeof b);
    }
    if (s.finalize_request.load(std::memory_order_acquire) != 0) break;
    const uint64_t now = now_ns();
    if (!d.started) {
      d.started = true;
      sample_clocks(s, fmt::ClockReason::kStart);
      d.next_clock_ns = now + clock_period;
      d.next_stats_ns = now + 1'000'000'000ull;
      d.next_provenance_ns = now + 1'000'000'000ull;
    }
    drain_rings(s);
    if (now >= d.next_clock_ns || s.clock_requested.exchange(false)) {
      sample_clocks(s, fmt::ClockReason::kPeriodic);
      d.next_clock_ns = now + clock_period;
    }
    if (now >= d.next_stats_ns) {
      write_stats(s, false);
      d.next_stats_ns = now + 1'000'000'000ull;
    }
    if (!d.buf.empty() && now - d.buf_since_ns >= kChunkMaxAgeNs) flush_buf(s);
    if (now >= d.next_provenance_ns) {
      refresh_provenance(s, false);
      d.next_provenance_ns = now + 1'000'000'000ull;
    }
  }
  finalize_on_drain(s);
  return_signals(s);
  close(s.done_pipe[1]);  // wakes every waiting handler (POLLHUP)
  s.done_pipe[1] = -1;
  return nullptr;
}

// ---- capture start, exit, signals, fork ----------------------------------------------

bool open_capture(State& s) {
  if (mkdir_p(s.capture_dir) != 0) {
    debugf("cannot create %s: %s", s.capture_dir.c_str(), strerror(errno));
    return false;
  }
  const std::string path = s.capture_dir + "/records.twr";
  // Never overwrite a capture: the first process to create the file owns the
  // directory; any other process (an exec'd child) writes to proc-<pid>/.
  s.fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (s.fd < 0 && errno == EEXIST) {
    // proc-<pid>, or proc-<pid>.<n> when this pid already wrote one (exec after fork)
    if (s.capture_dir == s.root_dir) s.capture_dir = s.root_dir + "/proc-" + std::to_string(s.pid);
    else if (++s.dir_attempt <= 100) s.capture_dir = s.root_dir + "/proc-" + std::to_string(s.pid) + "." + std::to_string(s.dir_attempt);
    else return false;
    return open_capture(s);
  }
  if (s.fd < 0) {
    debugf("cannot create %s: %s", path.c_str(), strerror(errno));
    return false;
  }
  fmt::FileHeader h{};
  memcpy(h.magic, fmt::kFileMagic, sizeof h.magic);
  h.format_version = fmt::kFormatVersion;
  h.record_size = fmt::kRecordSize;
  h.header_size = sizeof h;
  h.pid = s.pid;
  h.host_start_ns = s.start_ns;
  h.boottime_minus_monotonic_ns = s.boot_minus_mono_ns;
  h.parent_pid = s.parent_pid;
  h.flags = s.fork_child ? 1u : 0u;
  h.header_crc32 = crc32(&h, offsetof(fmt::FileHeader, header_crc32));
  struct iovec iov = {&h, sizeof h};
  return write_all(s.fd, &iov, 1);
}

void measure_offsets(State& s) {
  s.start_ns = now_ns();
  int64_t best_w = INT64_MAX;
  for (int i = 0; i < 16; ++i) {
    uint64_t a = clock_ns(CLOCK_MONOTONIC), b = clock_ns(CLOCK_BOOTTIME), c = clock_ns(CLOCK_MONOTONIC);
    if (int64_t(c - a) < best_w) {
      best_w = int64_t(c - a);
      s.boot_minus_mono_ns = int64_t(b) - int64_t(a + (c - a) / 2);
    }
  }
}

bool start_drain(State& s) {
  if (pipe2(s.wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  if (pipe2(s.done_pipe, O_CLOEXEC) != 0) return false;
  s.drain = new DrainState();
  s.drain->buf.reserve(kChunkRecords);
  if (g_host_tsc) {  // two points 2 ms apart, so that early stamps convert
    sample_tsc_point(*s.drain);
    usleep(2000);
    sample_tsc_point(*s.drain);
  }
  provenance_scan(s.drain->provenance, s.cfg.markers);
  provenance_counters(&s.drain->last_dl_adds, &s.drain->last_dl_subs);
  if (!s.lazy_open) write_meta(s, false);
  // Create the thread with every signal blocked so none lands on it early.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = pthread_create(&s.drain_thread, nullptr, drain_main, &s);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) return false;
  s.drain_running = true;
  return true;
}

void wake_drain(State& s) {
  char c = 1;
  if (s.wake_pipe[1] >= 0) (void)!write(s.wake_pipe[1], &c, 1);
}

void finish_and_join(State& s, int reason) {
  if (!s.drain_running || s.pid != uint32_t(getpid())) return;
  int expected = 0;
  s.finalize_request.compare_exchange_strong(expected, reason);
  wake_drain(s);
  bool was = false;
  if (s.joined.compare_exchange_strong(was, true)) pthread_join(s.drain_thread, nullptr);
}

void on_exit_handler() {
  if (!g_state) return;
  t_state.busy = true;
  finish_and_join(st(), -1);
}

/// The app's own action for `sig`, as it was before the recorder installed its handler.
void run_app_action(State* s, int sig, siginfo_t* info, void* uctx, int saved_errno) {
  if (s && sig > 0 && sig < 65 && s->handler_installed[sig]) {
    const struct sigaction& old = s->old_action[sig];
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
      errno = saved_errno;
      old.sa_sigaction(sig, info, uctx);
      return;
    }
    if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
      errno = saved_errno;
      old.sa_handler(sig);
      return;
    }
    if (old.sa_handler == SIG_IGN) return;
    // Default action: restore it and re-raise so the exit status stays "killed by sig".
    sigaction(sig, &old, nullptr);
    raise(sig);
  }
  errno = saved_errno;
}

// Where a SIGTERM/SIGINT lands decides what its handler may do:
// - an app thread in its own code (the usual case: the main thread) is held
//   until the capture is finished (at most 3 s), so that it launches nothing
//   more while the runtimes flush (CUPTI's final flush did not finish within
//   its deadline while the app went on launching), then gets the app's action;
// - a thread that may hold a runtime's lock (inside an interposed call, or a
//   runtime's own thread handing records to the recorder, such as the SDK's
//   delivery thread) is never held: the final flush needs that lock (held
//   there, the flush timed out and its batch was lost: a CI failure). Its
//   handler notes the signal and returns; the drain thread finishes the
//   capture, restores the app's actions and queues the signal again to the
//   same thread with its original siginfo (return_signals).
// Async-signal-safe: atomics, write, poll, syscall.
void on_signal(int sig, siginfo_t* info, void* uctx) {
  State* s = g_state;
  const int saved_errno = errno;
  if (s && s->drain_running && s->pid == uint32_t(getpid()) && !t_state.is_drain &&
      !s->signals_returned.load(std::memory_order_seq_cst)) {
    int expected = 0;
    s->finalize_request.compare_exchange_strong(expected, sig);
    const bool may_hold_runtime_lock = t_state.busy || !t_state.app_thread;
    if (!may_hold_runtime_lock) {
      char c = 1;
      if (s->wake_pipe[1] >= 0) (void)!write(s->wake_pipe[1], &c, 1);
      struct pollfd p = {s->done_pipe[0], POLLIN, 0};
      while (!s->finalized.load(std::memory_order_acquire)) {
        int r = poll(&p, 1, 3000);
        if (r <= 0 && !(r < 0 && errno == EINTR)) break;
        if (r > 0) break;
      }
      run_app_action(s, sig, info, uctx, saved_errno);
      return;
    }
    const uint32_t i = s->pending_count.fetch_add(1, std::memory_order_seq_cst);
    if (i < State::kMaxPendingSignals) {
      State::PendingSignal& p = s->pending_signals[i];
      p.sig = sig;
      p.tid = sys_gettid();
      if (info) p.info = *info;
      p.state.store(1, std::memory_order_seq_cst);
    }
    char c = 1;
    if (s->wake_pipe[1] >= 0) (void)!write(s->wake_pipe[1], &c, 1);
    if (i >= State::kMaxPendingSignals) {  // a burst of signals: the first ones stand for it
      errno = saved_errno;
      return;
    }
    // The drain thread takes the slot, unless it already finished returning
    // signals; then this handler acts itself.
    int noted = 1;
    if (!s->signals_returned.load(std::memory_order_seq_cst) ||
        !s->pending_signals[i].state.compare_exchange_strong(noted, 2)) {
      errno = saved_errno;
      return;
    }
  }
  run_app_action(s, sig, info, uctx, saved_errno);
}

/// On the drain thread, once the capture is complete: the app's signal actions
/// back, and each noted signal queued again to the thread it hit.
void return_signals(State& s) {
  for (int sig : {SIGTERM, SIGINT})
    if (s.handler_installed[sig]) sigaction(sig, &s.old_action[sig], nullptr);
  const pid_t pid = getpid();
  auto take_all = [&] {
    const uint32_t n = std::min(s.pending_count.load(), State::kMaxPendingSignals);
    for (uint32_t i = 0; i < n; ++i) {
      State::PendingSignal& p = s.pending_signals[i];
      int noted = 1;
      if (!p.state.compare_exchange_strong(noted, 2)) continue;
      if (syscall(SYS_rt_tgsigqueueinfo, pid, pid_t(p.tid), p.sig, &p.info) != 0)
        syscall(SYS_tgkill, pid, pid_t(p.tid), p.sig);
    }
  };
  take_all();
  s.signals_returned.store(true, std::memory_order_seq_cst);
  take_all();  // a handler that noted its signal while the first pass ran
}

void install_signal_handlers(State& s) {
  for (int sig : {SIGTERM, SIGINT}) {
    struct sigaction sa{};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &s.old_action[sig]) == 0) {
      if (s.old_action[sig].sa_handler == SIG_IGN && !(s.old_action[sig].sa_flags & SA_SIGINFO)) {
        // The app ignores this signal (e.g. nohup): keep ignoring it.
        sigaction(sig, &s.old_action[sig], nullptr);
        continue;
      }
      s.handler_installed[sig] = true;
    }
  }
}

void atfork_prepare() {
  if (!g_state) return;
  st().reg_mu.lock();
  st().names_mu.lock();
}

void atfork_parent() {
  if (!g_state) return;
  st().names_mu.unlock();
  st().reg_mu.unlock();
}

void atfork_child() {
  if (!g_state) return;
  State& s = st();
  // Fresh locks: the parent's other threads do not exist here.
  new (&s.reg_mu) std::mutex();
  new (&s.names_mu) std::mutex();
  // The parent's drain thread may have held helper_mu at the instant of fork.
  new (&s.helper_mu) std::mutex();
  s.helper_open = false;
  new (&s.helper_records) std::vector<fmt::Record>();  // may be mid-update: forget it
  const uint32_t parent = s.pid;
  s.pid = uint32_t(getpid());
  if (s.fd >= 0) close(s.fd);  // the parent's file: never written from here
  s.fd = -1;
  for (int* p : {&s.wake_pipe[0], &s.wake_pipe[1], &s.done_pipe[0], &s.done_pipe[1]})
    if (*p >= 0) close(*p), *p = -1;
  s.drain_running = false;
  g_generation.fetch_add(1);
  // Rings are the parent's copies; their records belong to the parent's capture.
  s.rings.clear();
  s.retired.clear();
  s.next_slot = 1;
  if (!s.cfg.fork_own || g_active_mask.load() == 0) {
    g_active_mask.store(0);
    return;
  }
  s.parent_pid = parent;
  s.fork_child = true;
  s.capture_dir = s.root_dir + "/proc-" + std::to_string(s.pid);
  s.finalize_request.store(0);
  s.finalized.store(false);
  s.joined.store(false);
  for (auto& p : s.pending_signals) p.state.store(0);
  s.pending_count.store(0);
  s.signals_returned.store(false);
  s.drain = nullptr;  // the parent's drain state may be mid-update: leave it
  measure_offsets(s);
  s.cmdline = read_cmdline();
  for (size_t i = 0; i < kBackendCount; ++i)
    if (backend_ops(i)->after_fork_child) backend_ops(i)->after_fork_child();
  s.lazy_open = true;
  s.dir_attempt = 0;
  if (!start_drain(s)) g_active_mask.store(0);
}

void init_once() {
  State* s = new State();
  read_config(s->cfg);
  g_state = s;
  if (s->cfg.capture_dir.empty()) return;  // inert
  t_state.busy = true;
  s->root_dir = s->cfg.capture_dir;
  s->capture_dir = s->root_dir;
  s->pid = uint32_t(getpid());
  g_host_tsc = tsc_usable();
  s->cmdline = read_cmdline();
  s->exe = read_link("/proc/self/exe");
  measure_offsets(*s);
  if (!open_capture(*s)) {
    t_state.busy = false;
    return;
  }
  uint32_t mask = 0;
  for (size_t i = 0; i < kBackendCount; ++i)
    if (s->cfg.backend_enabled[i] && backend_ops(i)->compiled) mask |= 1u << i;
  s->enabled_mask = mask;
  g_active_mask.store(mask);
  if (!start_drain(*s)) {
    g_active_mask.store(0);
    t_state.busy = false;
    return;
  }
  atexit(on_exit_handler);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
  install_signal_handlers(*s);
  t_state.busy = false;
  debugf("recording into %s (backends mask 0x%x, ring %u records)", s->capture_dir.c_str(), mask,
         s->cfg.ring_records);
}

/// Marks the thread's ring retired when the thread exits.
struct ThreadExitGuard {
  Ring* ring = nullptr;
  uint32_t generation = 0;
  ~ThreadExitGuard() {
    if (ring && generation == g_generation.load()) ring->retired.store(true, std::memory_order_release);
  }
};
thread_local ThreadExitGuard t_exit_guard;

__attribute__((constructor)) void recorder_constructor() { ensure_init(); }

}  // namespace

void ensure_init() { std::call_once(g_init_once, init_once); }

const Config& config() {
  if (!g_state) ensure_init();  // g_state is set early in init_once, so hooks called from it see it
  return g_state->cfg;
}

void debugf(const char* f, ...) {
  if (!g_state || !g_state->cfg.debug) return;
  char b[1024];
  va_list ap;
  va_start(ap, f);
  vsnprintf(b, sizeof b, f, ap);
  va_end(ap);
  fprintf(stderr, "tickwise-recorder[%d]: %s\n", int(getpid()), b);
}

bool attach_thread_slow(bool late) {
  ThreadState& t = t_state;
  if (t.is_drain || t.busy || !g_state) return false;
  // A runtime thread that first delivers while the capture finishes (after the
  // active mask dropped, before the last drain) still gets a ring: its records
  // are of launches already recorded.
  const bool finishing = late && g_state->finalize_request.load() != 0 && !g_state->finalized.load();
  if (g_active_mask.load(std::memory_order_relaxed) == 0 && !finishing) return false;
  State& s = st();
  t.busy = true;
  const uint32_t gen = g_generation.load();
  const uint32_t tid = sys_gettid();
  Ring* r = nullptr;
  {
    std::lock_guard<std::mutex> g(s.reg_mu);
    r = Ring::create(s.cfg.ring_records, tid, s.next_slot);
    if (r) {
      ++s.next_slot;
      s.rings.push_back(r);
    }
  }
  if (r) {
    t.ring = r;
    t.generation = gen;
    t.tid = tid;
    t.slot = r->slot;
    t.next_local_id = 0;
    t_exit_guard.ring = r;
    t_exit_guard.generation = gen;
  }
  t.busy = false;
  return r != nullptr;
}

void emit_patient(const fmt::Record& r) {
  if (t_state.is_drain) {
    if (g_state && g_state->drain) append(st(), r);
    return;
  }
  // While the capture finishes, the drain thread is not draining (it waits on
  // the final flush): records of any thread go to the flush's list while it
  // is open, and a full ring is not waited on.
  const bool finishing = g_state && g_state->finalize_request.load(std::memory_order_acquire) != 0;
  if (t_state.flush_helper || finishing) {
    std::lock_guard<std::mutex> g(st().helper_mu);
    if (st().helper_open) {
      st().helper_records.push_back(r);
      return;
    }
    if (t_state.flush_helper) return;
  }
  ThreadState* t = &t_state;
  if (t->ring == nullptr || t->generation != g_generation.load(std::memory_order_relaxed))
    if (!attach_thread_slow(true)) return;
  for (int i = 0; i < (finishing ? 0 : 200); ++i) {
    const uint64_t h = t->ring->head.load(std::memory_order_relaxed);
    if (h - t->ring->tail.load(std::memory_order_acquire) < t->ring->capacity) break;
    wake_drain(st());
    usleep(100);
  }
  t->ring->push(r);
}

void request_clock_sample() {
  if (!g_state || !g_state->drain_running) return;
  g_state->clock_requested.store(true);
  wake_drain(*g_state);
}

bool is_own_thread(uint32_t tid) {
  if (!g_state || !g_state->fork_child || tid == g_state->pid) return true;
  std::lock_guard<std::mutex> g(g_state->reg_mu);
  for (Ring* r : g_state->rings)
    if (r->tid == tid) return true;
  for (const auto& r : g_state->retired)
    if (r.tid == tid) return true;
  return false;
}

void register_name(fmt::StringKeyKind kind, uint64_t key, const char* name) {
  if (!g_state || !name || uint32_t(kind) >= 3) return;
  std::lock_guard<std::mutex> g(g_state->names_mu);
  g_state->names[uint32_t(kind)][key] = name;
}

}  // namespace tickwise::rec
