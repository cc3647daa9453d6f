// Internal interface of the recorder library shared by its core and backends.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "recorder/ring.h"
#include "tickwise/format.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace tickwise::rec {

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

/// True: producers stamp ring records with the TSC and the drain thread turns
/// the stamps into CLOCK_MONOTONIC ns (only when the kernel's clocksource is
/// an invariant TSC: then CLOCK_MONOTONIC is a linear function of it between
/// the drain's (mono, tsc, mono) samples). False: stamps are clock_gettime ns.
extern bool g_host_tsc;

/// The host time of an event recorded through a ring (host_*_ns fields):
/// converted to CLOCK_MONOTONIC ns before it is written. Never use it for
/// records the drain thread appends itself (clock samples, stats).
inline uint64_t host_stamp() {
#if defined(__x86_64__)
  if (__builtin_expect(g_host_tsc, 1)) return __rdtsc();
#endif
  return now_ns();
}

/// Every backend, compiled in or not; the registry in backends.cpp has one
/// entry per id, so adding an id breaks the build until it is registered.
enum class BackendId : uint8_t { kHip = 0, kAmdxdna = 1, kCuda = 2, kCount = 3 };
constexpr size_t kBackendCount = size_t(BackendId::kCount);

class JsonWriter;

/// Sink for clock samples taken on the drain thread.
struct ClockSink {
  virtual void add(fmt::Domain domain, uint64_t host_before_ns, uint64_t device_value, uint64_t host_after_ns,
                   uint32_t tries) = 0;
  virtual ~ClockSink() = default;
};

/// What a backend plugs into the core. Hooks run on the drain thread unless
/// noted; any may be null.
struct BackendOps {
  const char* name;
  bool compiled;  // false: listed in meta.json as "not_built"
  /// Take best-of-`tries` clock samples for this backend's device domains.
  void (*sample_clocks)(ClockSink& sink, uint32_t tries);
  /// Make buffered device records reach the rings (before the final drain).
  void (*flush)();
  /// Append this backend's "clock_domains" entries (JSON objects).
  void (*describe_domains)(JsonWriter& w);
  /// Append key/values describing the backend's state to its "backends" entry.
  void (*describe)(JsonWriter& w);
  /// Resolve a name for a string key the backend's records carry ("" if none).
  std::string (*resolve_name)(fmt::StringKeyKind kind, uint64_t key);
  /// In a forked child that keeps recording (single-threaded context).
  void (*after_fork_child)();
};

const BackendOps& hip_backend();
const BackendOps& amdxdna_backend();
const BackendOps& cuda_backend();

/// Bit i set: backend i records. Zero: the library is inert (every
/// interposed call goes straight through).
extern std::atomic<uint32_t> g_active_mask;
extern std::atomic<uint32_t> g_generation;  // bumped in a forked child

inline bool active(BackendId b) {
  return (g_active_mask.load(std::memory_order_relaxed) >> unsigned(b)) & 1u;
}

struct ThreadState {
  Ring* ring;
  uint32_t generation;
  uint32_t tid;
  uint64_t next_local_id;
  uint32_t slot;
  bool is_drain;
  bool flush_helper;  // the thread that runs a backend's final flush
  bool busy;  // inside the recorder: interposed calls go straight through
  bool app_thread;  // attached by an interposed call (not only to hand over a runtime's records)
};

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

/// Attach the calling thread (allocate its ring); false if it cannot record.
/// `late`: the thread brings records of work done while recording (a runtime's
/// buffered device records), so it may attach while the capture is finishing.
bool attach_thread_slow(bool late = false);

/// The calling thread's state, attached; nullptr when it cannot record.
inline ThreadState* thread_state() {
  ThreadState& t = t_state;
  if (__builtin_expect(t.ring == nullptr || t.generation != g_generation.load(std::memory_order_relaxed), 0)) {
    if (!attach_thread_slow()) return nullptr;
  }
  return &t;
}

/// {@link thread_state} for a call the application made into a runtime (an
/// interposed launch, ioctl or API callback): marks the thread as one of the
/// app's, which a SIGTERM handler may hold while the capture finishes.
inline ThreadState* app_thread_state() {
  ThreadState* t = thread_state();
  if (t) t->app_thread = true;
  return t;
}

/// Record from an application thread: never blocks.
inline void emit(ThreadState* t, const fmt::Record& r) { t->ring->push(r); }

/// Record from a runtime's own thread (e.g. rocprofiler's buffer thread) or
/// from any thread including the drain thread: waits briefly for room rather
/// than dropping at once; never used on an application's launch path.
void emit_patient(const fmt::Record& r);

/// A process-unique id for a launch: slot in the high bits, per-thread count below.
inline uint64_t next_launch_id(ThreadState* t) { return (uint64_t(t->slot) << 40) | ++t->next_local_id; }

/// Ask the drain thread for clock samples now (a device domain just appeared).
void request_clock_sample();

/// False for a thread of the parent process, seen from a forked child (a
/// runtime's buffers are copied by fork and may deliver the parent's records).
bool is_own_thread(uint32_t tid);

/// Remember a name for a key (cold path, e.g. hipModuleGetFunction).
void register_name(fmt::StringKeyKind kind, uint64_t key, const char* name);

/// Recorder configuration, from the environment (see README "Environment").
struct Config {
  std::string capture_dir;
  bool backend_enabled[kBackendCount] = {};
  uint32_t ring_records = 8192;
  uint32_t clock_period_ms = 1000;
  uint32_t clock_tries = 16;
  uint32_t drain_period_ms = 10;
  bool fork_own = true;
  bool hip_correlate = true;
  bool rocprofiler = true;
  bool debug = false;
  std::vector<std::string> markers;
};
const Config& config();

/// Log to stderr when TICKWISE_DEBUG is set.
void debugf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// Ensure the core is initialised (idempotent, callable from any constructor).
void ensure_init();

}  // namespace tickwise::rec
