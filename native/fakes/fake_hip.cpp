// A fake libamdhip64.so: the HIP launch/sync/module/graph entry points with a
// simulated device. Each device has a free-running tick counter:
//
//   tick(t) = offset_ticks + t_monotonic_ns * tick_hz / 1e9 * (1 + drift_ppm / 1e6)
//
// exposed through hsaKmtGetClockCounters (node d + 1), so that a clock fit
// over the recorder's samples must recover offset and drift. Kernels "run"
// in order per stream: start = max(enqueue + latency, previous end), end =
// start + duration; when a rocprofiler-sdk tool is present (as the real
// runtime, through rocprofiler-register), the fake SDK receives each dispatch.
//
// Environment: TICKWISE_FAKE_HIP_DEVICES (1), TICKWISE_FAKE_HIP_TICK_HZ
// (100000000), TICKWISE_FAKE_HIP_DECLARED_KHZ (100000), TICKWISE_FAKE_HIP_OFFSET_TICKS
// (123456789012), TICKWISE_FAKE_HIP_DRIFT_PPM (37.5), TICKWISE_FAKE_HIP_KERNEL_NS
// (20000), TICKWISE_FAKE_HIP_LATENCY_NS (3000), TICKWISE_FAKE_CLOCK_JITTER_NS (0),
// TICKWISE_FAKE_ROCPROFILER_SDK (path of the SDK to load).
//
// A rendezvous with another fake device (files, so that two processes can
// share it): with TICKWISE_FAKE_HIP_START_FILE set, no kernel starts before
// that file exists (a launch waits for it, then its kernel starts latency
// after); with TICKWISE_FAKE_HIP_IDLE_FILE set, the process creates that file
// at exit once its last kernel has ended. With the fake amdxdna's
// STARTED/HOLD files (fake_amdxdna.cpp) this puts every kernel inside the
// first NPU command's span by construction.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "abi/hip_abi.h"
#include "abi/hsakmt_abi.h"
#include "abi/rocprofiler_abi.h"
#include "fake_hip_table.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
uint64_t clock_ns(clockid_t c) {
  timespec ts;
  clock_gettime(c, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
double env_num(const char* n, double d) {
  const char* v = getenv(n);
  return v && *v ? strtod(v, nullptr) : d;
}
void sleep_until(uint64_t t) {
  timespec ts{time_t(t / 1000000000ull), long(t % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

struct Stream {
  std::mutex mu;
  uint64_t last_end_ns = 0;
  int device = 0;
};

struct Device {
  long double offset_ticks;
  long double ticks_per_ns;
  Stream null_stream;
};

struct Node {
  const void* func;
  dim3 grid, block;
};
struct Graph {
  std::vector<Node> nodes;
};
struct Function {
  std::string name;
};
struct Module {
  int id;
};

struct Fake {
  int devices = 1;
  Device dev[8];
  uint64_t kernel_ns = 20000, latency_ns = 3000, jitter_ns = 0;
  int64_t boot_minus_mono = 0;
  int declared_khz = 100000;
  std::mutex mu;  // streams, names
  std::vector<Stream*> streams;
  std::map<const void*, std::string> host_names;
  std::atomic<uint64_t> dispatch_seq{0};
  FakeHipProfilerTable table{sizeof(FakeHipProfilerTable), nullptr};
  std::string start_file, idle_file;
  std::atomic<bool> started{true};
  pid_t pid = 0;
};

Fake* g = nullptr;
pthread_once_t g_once = PTHREAD_ONCE_INIT;
thread_local int t_device = 0;

void attach_profiler() {
  // As rocprofiler-register does: load the SDK when a tool is around.
  const bool tool = getenv("ROCP_TOOL_LIBRARIES") || dlsym(RTLD_DEFAULT, "rocprofiler_configure");
  if (!tool) return;
  // Next to this library unless told otherwise (by absolute path: a dlopen
  // interceptor, e.g. ASan's, would lose this library's RUNPATH).
  std::string path;
  if (const char* p = getenv("TICKWISE_FAKE_ROCPROFILER_SDK")) path = p;
  Dl_info self;
  if (path.empty() && dladdr(reinterpret_cast<void*>(&attach_profiler), &self) && self.dli_fname) {
    path = self.dli_fname;
    path = path.substr(0, path.rfind('/') + 1) + "librocprofiler-sdk.so";
  }
  void* sdk = dlopen(path.empty() ? "librocprofiler-sdk.so" : path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!sdk) return;
  auto set = reinterpret_cast<rocprofiler_set_api_table_fn>(dlsym(sdk, "rocprofiler_set_api_table"));
  void* tables[1] = {&g->table};
  if (set) set("hip", 60200, 0, tables, 1);
}

// fork: hold the stream locks across it (a launching thread may own one).
void atfork_prepare() {
  g->mu.lock();
  for (Stream* s : g->streams) s->mu.lock();
  for (int d = 0; d < g->devices; ++d) g->dev[d].null_stream.mu.lock();
}
void atfork_release() {
  for (int d = g->devices - 1; d >= 0; --d) g->dev[d].null_stream.mu.unlock();
  for (Stream* s : g->streams) s->mu.unlock();
  g->mu.unlock();
}

bool file_exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

/// Polls for `path` every 100 us for at most 30 s (a missing partner is an
/// error for the test to see, never a hang).
void wait_for_file(const std::string& path, const char* what) {
  const uint64_t deadline = mono_ns() + 30000000000ull;
  while (!file_exists(path)) {
    if (mono_ns() > deadline) {
      fprintf(stderr, "fake libamdhip64: %s %s did not appear within 30 s; going on\n", what, path.c_str());
      return;
    }
    usleep(100);
  }
}

/// At exit: once the last kernel of every stream has ended, say so with the idle file.
void signal_idle() {
  if (!g || g->idle_file.empty() || getpid() != g->pid) return;  // not in a forked child
  std::vector<Stream*> all;
  {
    std::lock_guard<std::mutex> l(g->mu);
    all = g->streams;
  }
  for (int d = 0; d < g->devices; ++d) all.push_back(&g->dev[d].null_stream);
  uint64_t end = 0;
  for (Stream* st : all) {
    std::lock_guard<std::mutex> l(st->mu);
    if (st->last_end_ns > end) end = st->last_end_ns;
  }
  sleep_until(end);
  const std::string tmp = g->idle_file + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (f) {
    fprintf(f, "%llu\n", (unsigned long long)end);
    fclose(f);
    rename(tmp.c_str(), g->idle_file.c_str());
  }
}

void init() {
  g = new Fake();
  g->pid = getpid();
  if (const char* p = getenv("TICKWISE_FAKE_HIP_START_FILE")) g->start_file = p;
  if (const char* p = getenv("TICKWISE_FAKE_HIP_IDLE_FILE")) g->idle_file = p;
  g->started.store(g->start_file.empty());
  if (!g->idle_file.empty()) atexit(signal_idle);
  pthread_atfork(atfork_prepare, atfork_release, atfork_release);
  g->devices = int(env_num("TICKWISE_FAKE_HIP_DEVICES", 1));
  if (g->devices < 1) g->devices = 1;
  if (g->devices > 8) g->devices = 8;
  const double hz = env_num("TICKWISE_FAKE_HIP_TICK_HZ", 100e6);
  const double off = env_num("TICKWISE_FAKE_HIP_OFFSET_TICKS", 123456789012.0);
  const double ppm = env_num("TICKWISE_FAKE_HIP_DRIFT_PPM", 37.5);
  for (int d = 0; d < g->devices; ++d) {
    g->dev[d].offset_ticks = (long double)off + (long double)d * 1000000007.0L;
    g->dev[d].ticks_per_ns = (long double)hz / 1e9L * (1.0L + ((long double)ppm + 3.0L * d) / 1e6L);
    g->dev[d].null_stream.device = d;
  }
  g->kernel_ns = uint64_t(env_num("TICKWISE_FAKE_HIP_KERNEL_NS", 20000));
  g->latency_ns = uint64_t(env_num("TICKWISE_FAKE_HIP_LATENCY_NS", 3000));
  g->jitter_ns = uint64_t(env_num("TICKWISE_FAKE_CLOCK_JITTER_NS", 0));
  g->declared_khz = int(env_num("TICKWISE_FAKE_HIP_DECLARED_KHZ", 100000));
  // BOOTTIME - MONOTONIC, read as the recorder reads it: the narrowest of 16
  // (mono, boot, mono) brackets (one unbracketed pair is off by however long the
  // thread was preempted between its two reads: ~10 us seen under ASan on 2 cores).
  int64_t best_w = INT64_MAX;
  for (int i = 0; i < 16; ++i) {
    const uint64_t a = mono_ns(), b = clock_ns(CLOCK_BOOTTIME), c = mono_ns();
    if (int64_t(c - a) < best_w) best_w = int64_t(c - a), g->boot_minus_mono = int64_t(b) - int64_t(a + (c - a) / 2);
  }
  attach_profiler();
}

Fake& fake() {
  pthread_once(&g_once, init);
  return *g;
}

Stream& stream_of(hipStream_t s) {
  return s ? *reinterpret_cast<Stream*>(s) : fake().dev[t_device].null_stream;
}

void dispatch(const void* func, hipStream_t s, dim3 grid, dim3 block) {
  Fake& f = fake();
  if (__builtin_expect(!f.started.load(std::memory_order_acquire), 0)) {
    wait_for_file(f.start_file, "TICKWISE_FAKE_HIP_START_FILE");
    f.started.store(true, std::memory_order_release);
  }
  Stream& st = stream_of(s);
  const uint64_t now = mono_ns();
  uint64_t start, end;
  {
    std::lock_guard<std::mutex> l(st.mu);
    start = now + f.latency_ns > st.last_end_ns ? now + f.latency_ns : st.last_end_ns;
    end = start + f.kernel_ns;
    st.last_end_ns = end;
  }
  const uint64_t id = f.dispatch_seq.fetch_add(1, std::memory_order_relaxed) + 1;
  if (auto report = f.table.report_dispatch) {
    FakeDispatch d{};
    d.thread_id = uint64_t(syscall(SYS_gettid));
    d.start_boot_ns = uint64_t(int64_t(start) + f.boot_minus_mono);
    d.end_boot_ns = uint64_t(int64_t(end) + f.boot_minus_mono);
    d.agent_handle = 0x1000 + uint64_t(st.device);
    d.queue_handle = reinterpret_cast<uint64_t>(&st);
    d.kernel_id = reinterpret_cast<uint64_t>(func);
    d.dispatch_id = id;
    d.grid[0] = grid.x, d.grid[1] = grid.y, d.grid[2] = grid.z;
    d.workgroup[0] = block.x, d.workgroup[1] = block.y, d.workgroup[2] = block.z;
    report(&d);
  }
}

uint64_t xorshift() {
  thread_local uint64_t s = 0x9E3779B97F4A7C15ull ^ uint64_t(syscall(SYS_gettid));
  s ^= s << 13, s ^= s >> 7, s ^= s << 17;
  return s;
}
void spin_ns(uint64_t ns) {
  const uint64_t until = mono_ns() + ns;
  while (mono_ns() < until) {
  }
}

}  // namespace

// ---- launch entry points --------------------------------------------------------

FAKE_EXPORT hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void**, size_t,
                                       hipStream_t stream) {
  if (!function_address) return kHipErrorInvalidValue;
  dispatch(function_address, stream, numBlocks, dimBlocks);
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int,
                                             hipStream_t stream, void**, void**) {
  if (!f) return kHipErrorInvalidValue;
  dispatch(f, stream, dim3{gx, gy, gz}, dim3{bx, by, bz});
  return kHipSuccess;
}

// C++ linkage, as hip/hip_ext.h declares it (and hip_abi.h mirrors): exported
// only under its mangled name, like libamdhip64.so.5 (fake_hip.map).
__attribute__((visibility("default"))) hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy,
                                                                          uint32_t gz, uint32_t lx, uint32_t ly,
                                                                          uint32_t lz, size_t, hipStream_t stream,
                                                                          void**, void**, hipEvent_t, hipEvent_t,
                                                                          uint32_t) {
  if (!f) return kHipErrorInvalidValue;
  dispatch(f, stream, dim3{gx, gy, gz}, dim3{lx, ly, lz});
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipExtLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void**,
                                          size_t, hipStream_t stream, hipEvent_t, hipEvent_t, int) {
  if (!function_address) return kHipErrorInvalidValue;
  dispatch(function_address, stream, numBlocks, dimBlocks);
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* fPtr, void**) {
  if (!config || !fPtr) return kHipErrorInvalidValue;
  dispatch(fPtr, config->stream, config->gridDim, config->blockDim);
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipLaunchCooperativeKernel(const void* f, dim3 gridDim, dim3 blockDimX, void**, unsigned int,
                                                  hipStream_t stream) {
  if (!f) return kHipErrorInvalidValue;
  dispatch(f, stream, gridDim, blockDimX);
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipGraphCreate(hipGraph_t* pGraph, unsigned int) {
  if (!pGraph) return kHipErrorInvalidValue;
  *pGraph = reinterpret_cast<hipGraph_t>(new Graph());
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipGraphAddKernelNode(hipGraphNode_t* pGraphNode, hipGraph_t graph, const hipGraphNode_t*,
                                             size_t, const hipKernelNodeParams* p) {
  if (!graph || !p) return kHipErrorInvalidValue;
  auto* gr = reinterpret_cast<Graph*>(graph);
  gr->nodes.push_back({p->func, p->gridDim, p->blockDim});
  if (pGraphNode) *pGraphNode = reinterpret_cast<hipGraphNode_t>(gr->nodes.size());
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t* pGraphExec, hipGraph_t graph, hipGraphNode_t*, char*,
                                           size_t) {
  if (!pGraphExec || !graph) return kHipErrorInvalidValue;
  *pGraphExec = reinterpret_cast<hipGraphExec_t>(new Graph(*reinterpret_cast<Graph*>(graph)));
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream) {
  if (!graphExec) return kHipErrorInvalidValue;
  for (const Node& n : reinterpret_cast<Graph*>(graphExec)->nodes) dispatch(n.func, stream, n.grid, n.block);
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t e) {
  delete reinterpret_cast<Graph*>(e);
  return kHipSuccess;
}
FAKE_EXPORT hipError_t hipGraphDestroy(hipGraph_t g0) {
  delete reinterpret_cast<Graph*>(g0);
  return kHipSuccess;
}

// ---- synchronisation ---------------------------------------------------------

FAKE_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream) {
  Stream& st = stream_of(stream);
  uint64_t end;
  {
    std::lock_guard<std::mutex> l(st.mu);
    end = st.last_end_ns;
  }
  sleep_until(end);
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipDeviceSynchronize(void) {
  Fake& f = fake();
  uint64_t end = 0;
  std::vector<Stream*> all;
  {
    std::lock_guard<std::mutex> l(f.mu);
    all = f.streams;
  }
  all.push_back(&f.dev[t_device].null_stream);
  for (Stream* s : all) {
    if (s->device != t_device) continue;
    std::lock_guard<std::mutex> l(s->mu);
    if (s->last_end_ns > end) end = s->last_end_ns;
  }
  sleep_until(end);
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipStreamCreate(hipStream_t* stream) {
  if (!stream) return kHipErrorInvalidValue;
  Fake& f = fake();
  auto* s = new Stream();
  s->device = t_device;
  {
    std::lock_guard<std::mutex> l(f.mu);
    f.streams.push_back(s);
  }
  *stream = reinterpret_cast<hipStream_t>(s);
  return kHipSuccess;
}

FAKE_EXPORT hipError_t hipStreamDestroy(hipStream_t stream) {
  if (!stream) return kHipErrorInvalidResourceHandle;
  Fake& f = fake();
  auto* s = reinterpret_cast<Stream*>(stream);
  {
    std::lock_guard<std::mutex> l(f.mu);
    for (auto it = f.streams.begin(); it != f.streams.end(); ++it)
      if (*it == s) {
        f.streams.erase(it);
        break;
      }
  }
  delete s;
  return kHipSuccess;
}

// ---- devices --------------------------------------------------------------------

FAKE_EXPORT hipError_t hipGetDeviceCount(int* count) {
  if (!count) return kHipErrorInvalidValue;
  *count = fake().devices;
  return kHipSuccess;
}
FAKE_EXPORT hipError_t hipSetDevice(int d) {
  if (d < 0 || d >= fake().devices) return kHipErrorInvalidDevice;
  t_device = d;
  return kHipSuccess;
}
FAKE_EXPORT hipError_t hipGetDevice(int* d) {
  if (!d) return kHipErrorInvalidValue;
  *d = t_device;
  return kHipSuccess;
}
FAKE_EXPORT hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr, int d) {
  if (!pi || d < 0 || d >= fake().devices) return kHipErrorInvalidValue;
  if (attr != kHipDeviceAttributeWallClockRate) return kHipErrorInvalidValue;
  *pi = fake().declared_khz;
  return kHipSuccess;
}

// ---- modules and names ---------------------------------------------------------

FAKE_EXPORT hipError_t hipModuleLoadData(hipModule_t* module, const void*) {
  if (!module) return kHipErrorInvalidValue;
  *module = reinterpret_cast<hipModule_t>(new Module{1});
  return kHipSuccess;
}
FAKE_EXPORT hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname) {
  if (!function || !module || !kname) return kHipErrorInvalidValue;
  *function = reinterpret_cast<hipFunction_t>(new Function{kname});
  return kHipSuccess;
}
FAKE_EXPORT const char* hipKernelNameRef(const hipFunction_t f) {
  return f ? reinterpret_cast<const Function*>(f)->name.c_str() : nullptr;
}
FAKE_EXPORT const char* hipKernelNameRefByPtr(const void* hostFunction, hipStream_t) {
  Fake& f = fake();
  std::lock_guard<std::mutex> l(f.mu);
  auto it = f.host_names.find(hostFunction);
  return it == f.host_names.end() ? nullptr : it->second.c_str();
}
FAKE_EXPORT void** __hipRegisterFatBinary(const void*) {
  static void* handle[1] = {nullptr};
  return handle;
}
FAKE_EXPORT void __hipRegisterFunction(void**, const void* hostFunction, char*, const char* deviceName, unsigned int,
                                       void*, void*, dim3*, dim3*, int*) {
  Fake& f = fake();
  std::lock_guard<std::mutex> l(f.mu);
  f.host_names[hostFunction] = deviceName ? deviceName : "";
}

// ---- the thunk's clock counters ------------------------------------------------

FAKE_EXPORT int hsaKmtGetClockCounters(uint32_t NodeId, HsaClockCounters* c) {
  Fake& f = fake();
  if (!c || NodeId < 1 || int(NodeId) > f.devices) return 1;  // HSAKMT_STATUS_ERROR
  const Device& d = f.dev[NodeId - 1];
  // Optional jitter: the device read lands somewhere inside a wider bracket.
  if (f.jitter_ns && (xorshift() & 1)) spin_ns(xorshift() % f.jitter_ns);
  const uint64_t t = mono_ns();
  c->GPUClockCounter = uint64_t(d.offset_ticks + (long double)t * d.ticks_per_ns);
  c->CPUClockCounter = clock_ns(CLOCK_MONOTONIC_RAW);
  c->SystemClockCounter = clock_ns(CLOCK_BOOTTIME);
  c->SystemClockFrequencyHz = 1000000000ull;
  if (f.jitter_ns && (xorshift() & 1)) spin_ns(xorshift() % f.jitter_ns);
  return 0;
}
