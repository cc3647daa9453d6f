// hip backend: a thin shim over the HIP launch entry points (names, host
// submit times), device start/end from rocprofiler-sdk's buffered
// KERNEL_DISPATCH tracing (this library is a rocprofiler-sdk tool: it exports
// rocprofiler_configure), and (host, device tick, host) clock samples per
// HIP device from the thunk's hsaKmtGetClockCounters.
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "abi/hip_abi.h"
#include "abi/hsakmt_abi.h"
#include "abi/rocprofiler_abi.h"
#include "recorder/json.h"
#include "recorder/recorder.h"

namespace tickwise::rec {
namespace {

template <typename F>
F next_symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

std::atomic<bool> g_hip_seen{false};

// ---- rocprofiler-sdk tool -------------------------------------------------------

struct Rocprof {
  std::atomic<bool> active{false};
  bool configured = false;
  uint32_t sdk_version = 0;
  std::string runtime_version;
  std::string status = "absent";  // absent | disabled | configured | active | failed:<step>
  rocprofiler_context_id_t ctx{0};
  rocprofiler_buffer_id_t buffer{0};
  rocprofiler_flush_buffer_fn flush = nullptr;
  rocprofiler_push_external_correlation_id_fn push = nullptr;
  rocprofiler_pop_external_correlation_id_fn pop = nullptr;
  std::atomic<uint64_t> sdk_dropped{0};
  std::atomic<uint64_t> dispatches{0};
  std::atomic<uint64_t> foreign{0};  // records of the parent's threads delivered in a forked child
  std::atomic<bool> flushing{false};
};
// Created on first use and never destroyed: the core's constructor may call
// in before this file's statics are initialised, and the final flush runs
// after static destructors would have.
Rocprof& rocp() {
  static Rocprof* r = new Rocprof();
  return *r;
}

int find_sdk_cb(struct dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name && strstr(info->dlpi_name, "librocprofiler-sdk.so")) {
    *static_cast<std::string*>(data) = info->dlpi_name;
    return 1;
  }
  return 0;
}

/// The SDK may be loaded RTLD_LOCAL by rocprofiler-register: look it up by name.
void* sdk_handle() {
  for (const char* n : {"librocprofiler-sdk.so", "librocprofiler-sdk.so.1", "librocprofiler-sdk.so.0"})
    if (void* h = dlopen(n, RTLD_NOLOAD | RTLD_LAZY)) return h;
  std::string path;
  dl_iterate_phdr(find_sdk_cb, &path);
  if (!path.empty())
    if (void* h = dlopen(path.c_str(), RTLD_NOLOAD | RTLD_LAZY)) return h;
  return RTLD_DEFAULT;
}

// A lossless SDK buffer that is full may be delivered on the thread that
// enqueues the kernel, inside its launch call, while that thread's launch
// record sits reserved (not yet committed) in its ring: pushing the dispatch
// records into the ring then would write into the reserved slot. Such records
// wait here until the launch record is committed (LaunchScope::done).
thread_local bool t_launch_slot_reserved = false;
thread_local std::vector<fmt::Record> t_deferred;

void emit_dispatch(const fmt::Record& rec) {
  if (t_launch_slot_reserved) t_deferred.push_back(rec);
  else emit_patient(rec);
}

void on_rocprof_buffer(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t** headers,
                       size_t num_headers, void*, uint64_t drop_count) {
  if (drop_count) rocp().sdk_dropped.fetch_add(drop_count, std::memory_order_relaxed);
  for (size_t i = 0; i < num_headers; ++i) {
    const rocprofiler_record_header_t* h = headers[i];
    if (!h || h->category != kRocpBufferCategoryTracing || h->kind != uint32_t(kRocpBufferTracingKernelDispatch))
      continue;
    const auto* k = static_cast<const rocprofiler_buffer_tracing_kernel_dispatch_record_t*>(h->payload);
    if (!is_own_thread(uint32_t(k->thread_id))) {
      rocp().foreign.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    fmt::Record rec{};
    auto& d = rec.hip_dispatch;
    d.kind = uint16_t(fmt::Kind::kHipDispatch);
    d.time_domain = uint16_t(fmt::Domain::kHostBoottime);  // the SDK reports ns on CLOCK_BOOTTIME
    d.tid = uint32_t(k->thread_id);
    d.start = k->start_timestamp;
    d.end = k->end_timestamp;
    d.correlation_external = k->correlation_id.external.value;
    d.dispatch_id = k->dispatch_info.dispatch_id;
    d.agent_handle = k->dispatch_info.agent_id.handle;
    d.queue_handle = k->dispatch_info.queue_id.handle;
    d.kernel_id = k->dispatch_info.kernel_id;
    rocp().dispatches.fetch_add(1, std::memory_order_relaxed);
    emit_dispatch(rec);
  }
}

int tool_initialize(rocprofiler_client_finalize_t, void*) {
  void* h = sdk_handle();
  auto create_context = reinterpret_cast<rocprofiler_create_context_fn>(dlsym(h, "rocprofiler_create_context"));
  auto create_buffer = reinterpret_cast<rocprofiler_create_buffer_fn>(dlsym(h, "rocprofiler_create_buffer"));
  auto configure = reinterpret_cast<rocprofiler_configure_buffer_tracing_service_fn>(
      dlsym(h, "rocprofiler_configure_buffer_tracing_service"));
  auto start = reinterpret_cast<rocprofiler_start_context_fn>(dlsym(h, "rocprofiler_start_context"));
  rocp().flush = reinterpret_cast<rocprofiler_flush_buffer_fn>(dlsym(h, "rocprofiler_flush_buffer"));
  if (config().hip_correlate) {
    rocp().push = reinterpret_cast<rocprofiler_push_external_correlation_id_fn>(
        dlsym(h, "rocprofiler_push_external_correlation_id"));
    rocp().pop = reinterpret_cast<rocprofiler_pop_external_correlation_id_fn>(
        dlsym(h, "rocprofiler_pop_external_correlation_id"));
    if (!rocp().push || !rocp().pop) rocp().push = nullptr, rocp().pop = nullptr;
  }
  if (!create_context || !create_buffer || !configure || !start) {
    rocp().status = "failed:resolve";
    return -1;
  }
  if (create_context(&rocp().ctx) != kRocpStatusSuccess) {
    rocp().status = "failed:create_context";
    return -1;
  }
  if (create_buffer(rocp().ctx, 1u << 20, 1u << 19, kRocpBufferPolicyLossless, on_rocprof_buffer, nullptr,
                    &rocp().buffer) != kRocpStatusSuccess) {
    rocp().status = "failed:create_buffer";
    return -1;
  }
  if (configure(rocp().ctx, kRocpBufferTracingKernelDispatch, nullptr, 0, rocp().buffer) != kRocpStatusSuccess) {
    rocp().status = "failed:configure_buffer_tracing_service";
    return -1;
  }
  if (start(rocp().ctx) != kRocpStatusSuccess) {
    rocp().status = "failed:start_context";
    return -1;
  }
  rocp().status = "active";
  rocp().active.store(true, std::memory_order_release);
  debugf("rocprofiler-sdk kernel-dispatch tracing active (sdk %u, %s)", rocp().sdk_version,
         rocp().runtime_version.c_str());
  return 0;
}

void rocprof_flush() {
  if (rocp().active.load(std::memory_order_acquire) && rocp().flush) {
    rocp().flushing.store(true);
    rocp().flush(rocp().buffer);
    rocp().flushing.store(false);
  }
}

void tool_finalize(void*) { rocprof_flush(); }

// ---- the launch shim --------------------------------------------------------------

inline uint32_t sat32(uint64_t v) { return v > 0xFFFFFFFFull ? 0xFFFFFFFFu : uint32_t(v); }

/// Brackets one intercepted launch: enter time, external correlation id,
/// exit time. The record is built in place in the thread's ring slot.
class LaunchScope {
 public:
  LaunchScope(fmt::HipApi api, const void* function, hipStream_t stream, dim3 grid, dim3 block, size_t shm) {
    if (!active(BackendId::kHip)) return;
    t_ = app_thread_state();
    if (!t_ || t_->busy) {  // nested inside another interposed call: pass through
      t_ = nullptr;
      return;
    }
    t_->busy = true;  // our slot stays reserved until done(): nested calls must not reserve
    if (__builtin_expect(!g_hip_seen.load(std::memory_order_relaxed), 0) && !g_hip_seen.exchange(true))
      request_clock_sample();  // the device domains' start samples
    const uint64_t id = next_launch_id(t_);
    slot_ = t_->ring->reserve();
    t_launch_slot_reserved = slot_ != nullptr;
    if (slot_) {
      auto& l = slot_->hip_launch;
      l.kind = uint16_t(fmt::Kind::kHipLaunch);
      l.api = uint16_t(api);
      l.tid = t_->tid;
      l.launch_id = id;
      l.function = reinterpret_cast<uint64_t>(function);
      l.stream = reinterpret_cast<uint64_t>(stream);
      l.grid_blocks = sat32(uint64_t(grid.x) * grid.y * grid.z);
      l.block_threads = sat32(uint64_t(block.x) * block.y * block.z);
      l.shared_mem_bytes = sat32(shm);
    }
    // Correlate even when the record was dropped: the dispatch still names its launch.
    Rocprof& r = rocp();
    if (r.push && r.active.load(std::memory_order_relaxed)) {
      rocprofiler_user_data_t u;
      u.value = id;
      correlated_ = r.push(r.ctx, t_->tid, u) == kRocpStatusSuccess;
    }
    if (slot_) slot_->hip_launch.host_enter_ns = host_stamp();
  }
  hipError_t done(hipError_t rc) {
    if (!t_) return rc;
    if (slot_) {
      slot_->hip_launch.host_exit_ns = host_stamp();
      slot_->hip_launch.result = rc;
      t_->ring->commit();
      t_launch_slot_reserved = false;
    }
    if (correlated_) {
      rocprofiler_user_data_t u;
      rocp().pop(rocp().ctx, t_->tid, &u);
    }
    t_->busy = false;
    if (__builtin_expect(!t_deferred.empty(), 0)) {  // delivered during this launch: now after it
      for (const fmt::Record& r : t_deferred) emit_patient(r);
      t_deferred.clear();
    }
    return rc;
  }

 private:
  ThreadState* t_ = nullptr;
  fmt::Record* slot_ = nullptr;
  bool correlated_ = false;
};

hipError_t record_sync(fmt::HipApi api, hipStream_t stream, uint64_t enter, hipError_t rc) {
  if (!active(BackendId::kHip)) return rc;
  ThreadState* t = app_thread_state();
  if (!t) return rc;
  fmt::Record rec{};
  auto& s = rec.hip_sync;
  s.kind = uint16_t(fmt::Kind::kHipSync);
  s.api = uint16_t(api);
  s.tid = t->tid;
  s.host_enter_ns = enter;
  s.host_exit_ns = host_stamp();
  s.stream = reinterpret_cast<uint64_t>(stream);
  s.result = rc;
  emit(t, rec);
  return rc;
}

// ---- device clocks --------------------------------------------------------------

struct HipDevices {
  HsaKmtGetClockCountersFn clock_counters = nullptr;
  int count = 0;
  std::vector<int64_t> declared_khz;
};
// Built completely, then published: a fork in the middle of probing leaves
// the child with nullptr (it probes again), never with a half-built object.
std::atomic<HipDevices*> g_devices{nullptr};

const HipDevices* probe_devices() {
  if (HipDevices* d = g_devices.load(std::memory_order_acquire)) return d;
  auto* d = new HipDevices();
  d->clock_counters = reinterpret_cast<HsaKmtGetClockCountersFn>(dlsym(RTLD_DEFAULT, "hsaKmtGetClockCounters"));
  auto get_count = next_symbol<decltype(&hipGetDeviceCount)>("hipGetDeviceCount");
  auto get_attr = next_symbol<decltype(&hipDeviceGetAttribute)>("hipDeviceGetAttribute");
  int n = 0;
  if (get_count && get_count(&n) == kHipSuccess && n > 0) d->count = n > 16 ? 16 : n;
  for (int i = 0; i < d->count; ++i) {
    int khz = 0;
    const bool ok = get_attr && get_attr(&khz, kHipDeviceAttributeWallClockRate, i) == kHipSuccess;
    d->declared_khz.push_back(ok ? khz : 0);
  }
  g_devices.store(d, std::memory_order_release);
  return d;
}

void hip_sample_clocks(ClockSink& sink, uint32_t tries) {
  if (!g_hip_seen.load(std::memory_order_relaxed)) return;
  const HipDevices* dev = probe_devices();
  if (!dev->clock_counters) return;
  for (int d = 0; d < dev->count; ++d) {
    uint64_t best = ~0ull, bb = 0, bv = 0, ba = 0;
    uint32_t ok = 0;
    for (uint32_t i = 0; i < tries; ++i) {
      HsaClockCounters c{};
      const uint64_t b = now_ns();
      const int rc = dev->clock_counters(uint32_t(d + 1), &c);  // KFD node 0 is the CPU
      const uint64_t a = now_ns();
      if (rc != 0) continue;
      ++ok;
      if (a - b < best) best = a - b, bb = b, bv = c.GPUClockCounter, ba = a;
    }
    if (ok) sink.add(fmt::Domain(uint16_t(fmt::Domain::kHipDevice0) + d), bb, bv, ba, ok);
  }
}

void hip_describe_domains(JsonWriter& w) {
  const HipDevices* dev = g_devices.load(std::memory_order_acquire);
  if (!dev || !dev->clock_counters) return;
  for (int d = 0; d < dev->count; ++d) {
    w.begin_object();
    w.key("id").value(unsigned(uint16_t(fmt::Domain::kHipDevice0) + d));
    std::string name = "hip:" + std::to_string(d);
    w.key("name").value(name);
    w.key("kind").value("device_tick");
    w.key("unit").value("tick");
    w.key("device").value(name);
    w.key("tick_hz_declared");
    if (dev->declared_khz[size_t(d)] > 0) w.value(int64_t(dev->declared_khz[size_t(d)]) * 1000);
    else w.null();
    w.key("declared_by").value("hipDeviceGetAttribute(hipDeviceAttributeWallClockRate) kHz x 1000");
    w.key("source").value("hsaKmtGetClockCounters(node " + std::to_string(d + 1) + ").GPUClockCounter");
    w.end_object();
  }
}

void hip_describe(JsonWriter& w) {
  w.key("rocprofiler").begin_object();
  w.key("status").value(config().rocprofiler ? rocp().status : std::string("disabled"));
  w.key("sdk_version").value(rocp().sdk_version);
  w.key("runtime_version").value(rocp().runtime_version);
  w.key("external_correlation").value(rocp().push != nullptr);
  w.key("dispatch_records").value(rocp().dispatches.load());
  w.key("sdk_dropped_records").value(rocp().sdk_dropped.load());
  w.key("parent_records_skipped").value(rocp().foreign.load());
  w.key("timestamps").value("ns on CLOCK_BOOTTIME (time_domain 1)");
  w.end_object();
  const HipDevices* dev = g_devices.load(std::memory_order_acquire);
  w.key("device_count").value(dev ? dev->count : 0);
  w.key("device_clock_source").value(dev && dev->clock_counters ? "hsaKmtGetClockCounters" : "none");
}

std::string hip_resolve_name(fmt::StringKeyKind kind, uint64_t key) {
  const char* n = nullptr;
  if (kind == fmt::StringKeyKind::kHipFunction) {
    static auto f = next_symbol<decltype(&hipKernelNameRef)>("hipKernelNameRef");
    if (f) n = f(reinterpret_cast<hipFunction_t>(key));
  } else if (kind == fmt::StringKeyKind::kHipHostFunction) {
    static auto f = next_symbol<decltype(&hipKernelNameRefByPtr)>("hipKernelNameRefByPtr");
    if (f) n = f(reinterpret_cast<const void*>(key), nullptr);
  }
  return n ? std::string(n) : std::string();
}

}  // namespace

const BackendOps& hip_backend() {
  static const BackendOps ops = {
      "hip", true, hip_sample_clocks, rocprof_flush, hip_describe_domains, hip_describe, hip_resolve_name, nullptr,
  };
  return ops;
}

}  // namespace tickwise::rec

using tickwise::rec::LaunchScope;
using tickwise::rec::next_symbol;
namespace fmt = tickwise::fmt;

#define TW_EXPORT extern "C" __attribute__((visibility("default")))
#define TW_REAL(fn)                                                  \
  static const auto real = next_symbol<decltype(&::fn)>(#fn);        \
  if (__builtin_expect(real == nullptr, 0)) return kHipErrorNotInitialized

TW_EXPORT rocprofiler_tool_configure_result_t* rocprofiler_configure(uint32_t version, const char* runtime_version,
                                                                     uint32_t priority,
                                                                     rocprofiler_client_id_t* client_id) {
  using namespace tickwise::rec;
  ensure_init();
  (void)priority;
  if (!active(BackendId::kHip) || !config().rocprofiler || rocp().configured) return nullptr;
  rocp().configured = true;
  rocp().sdk_version = version;
  rocp().runtime_version = runtime_version ? runtime_version : "";
  rocp().status = "configured";
  if (client_id) client_id->name = "tickwise-recorder";
  static rocprofiler_tool_configure_result_t result = {sizeof(rocprofiler_tool_configure_result_t),
                                                       tool_initialize, tool_finalize, nullptr};
  return &result;
}

TW_EXPORT hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                                     size_t sharedMemBytes, hipStream_t stream) {
  TW_REAL(hipLaunchKernel);
  LaunchScope s(fmt::HipApi::kLaunchKernel, function_address, stream, numBlocks, dimBlocks, sharedMemBytes);
  return s.done(real(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream));
}

TW_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                           unsigned int bx, unsigned int by, unsigned int bz,
                                           unsigned int sharedMemBytes, hipStream_t stream, void** kernelParams,
                                           void** extra) {
  TW_REAL(hipModuleLaunchKernel);
  LaunchScope s(fmt::HipApi::kModuleLaunchKernel, f, stream, dim3{gx, gy, gz}, dim3{bx, by, bz}, sharedMemBytes);
  return s.done(real(f, gx, gy, gz, bx, by, bz, sharedMemBytes, stream, kernelParams, extra));
}

namespace {
using ExtModuleLaunchFn = decltype(&::hipExtModuleLaunchKernel);
hipError_t ext_module_launch(ExtModuleLaunchFn real, hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                             uint32_t lx, uint32_t ly, uint32_t lz, size_t sharedMemBytes, hipStream_t hStream,
                             void** kernelParams, void** extra, hipEvent_t startEvent, hipEvent_t stopEvent,
                             uint32_t flags) {
  if (__builtin_expect(real == nullptr, 0)) return kHipErrorNotInitialized;
  // Global work sizes are in work-items: blocks = ceil(global / local).
  auto blocks = [](uint32_t g, uint32_t l) { return l ? (g + l - 1) / l : g; };
  LaunchScope s(fmt::HipApi::kExtModuleLaunchKernel, f, hStream, dim3{blocks(gx, lx), blocks(gy, ly), blocks(gz, lz)},
                dim3{lx, ly, lz}, sharedMemBytes);
  return s.done(real(f, gx, gy, gz, lx, ly, lz, sharedMemBytes, hStream, kernelParams, extra, startEvent, stopEvent,
                     flags));
}
}  // namespace

// hip/hip_ext.h declares hipExtModuleLaunchKernel with C++ linkage, so programs
// call its mangled name (the only one libamdhip64 5.2.3 exports, version hip_4.2):
// this hook has that name (hip_abi.h declares it the same way) and forwards to
// the next definition of the same symbol, whose name dladdr reads off this one.
__attribute__((visibility("default"))) hipError_t hipExtModuleLaunchKernel(
    hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz,
    size_t sharedMemBytes, hipStream_t hStream, void** kernelParams, void** extra, hipEvent_t startEvent,
    hipEvent_t stopEvent, uint32_t flags) {
  static const ExtModuleLaunchFn real = [] {
    Dl_info self{};
    const ExtModuleLaunchFn me = &::hipExtModuleLaunchKernel;
    return dladdr(reinterpret_cast<void*>(me), &self) && self.dli_sname
               ? next_symbol<ExtModuleLaunchFn>(self.dli_sname)
               : ExtModuleLaunchFn(nullptr);
  }();
  return ext_module_launch(real, f, gx, gy, gz, lx, ly, lz, sharedMemBytes, hStream, kernelParams, extra, startEvent,
                           stopEvent, flags);
}

// A C-named hipExtModuleLaunchKernel, for a runtime that would export one (HIP
// 5.2.3 does not): same hook under the plain name.
extern "C" __attribute__((visibility("default"))) hipError_t tw_hip_ext_module_launch_kernel_c(
    hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz,
    size_t sharedMemBytes, hipStream_t hStream, void** kernelParams, void** extra, hipEvent_t startEvent,
    hipEvent_t stopEvent, uint32_t flags) __asm__("hipExtModuleLaunchKernel");
hipError_t tw_hip_ext_module_launch_kernel_c(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
                                             uint32_t ly, uint32_t lz, size_t sharedMemBytes, hipStream_t hStream,
                                             void** kernelParams, void** extra, hipEvent_t startEvent,
                                             hipEvent_t stopEvent, uint32_t flags) {
  static const auto real = next_symbol<ExtModuleLaunchFn>("hipExtModuleLaunchKernel");
  return ext_module_launch(real, f, gx, gy, gz, lx, ly, lz, sharedMemBytes, hStream, kernelParams, extra, startEvent,
                           stopEvent, flags);
}

TW_EXPORT hipError_t hipExtLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                                        size_t sharedMemBytes, hipStream_t stream, hipEvent_t startEvent,
                                        hipEvent_t stopEvent, int flags) {
  TW_REAL(hipExtLaunchKernel);
  LaunchScope s(fmt::HipApi::kExtLaunchKernel, function_address, stream, numBlocks, dimBlocks, sharedMemBytes);
  return s.done(real(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream, startEvent, stopEvent,
                     flags));
}

TW_EXPORT hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* fPtr, void** args) {
  TW_REAL(hipLaunchKernelExC);
  if (!config) return real(config, fPtr, args);
  LaunchScope s(fmt::HipApi::kLaunchKernelExC, fPtr, config->stream, config->gridDim, config->blockDim,
                config->dynamicSmemBytes);
  return s.done(real(config, fPtr, args));
}

TW_EXPORT hipError_t hipLaunchCooperativeKernel(const void* f, dim3 gridDim, dim3 blockDimX, void** kernelParams,
                                                unsigned int sharedMemBytes, hipStream_t stream) {
  TW_REAL(hipLaunchCooperativeKernel);
  LaunchScope s(fmt::HipApi::kLaunchCooperativeKernel, f, stream, gridDim, blockDimX, sharedMemBytes);
  return s.done(real(f, gridDim, blockDimX, kernelParams, sharedMemBytes, stream));
}

TW_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream) {
  TW_REAL(hipGraphLaunch);
  LaunchScope s(fmt::HipApi::kGraphLaunch, graphExec, stream, dim3{0, 0, 0}, dim3{0, 0, 0}, 0);
  return s.done(real(graphExec, stream));
}

TW_EXPORT hipError_t hipDeviceSynchronize(void) {
  TW_REAL(hipDeviceSynchronize);
  const uint64_t enter = tickwise::rec::host_stamp();
  return tickwise::rec::record_sync(fmt::HipApi::kDeviceSynchronize, nullptr, enter, real());
}

TW_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream) {
  TW_REAL(hipStreamSynchronize);
  const uint64_t enter = tickwise::rec::host_stamp();
  return tickwise::rec::record_sync(fmt::HipApi::kStreamSynchronize, stream, enter, real(stream));
}

TW_EXPORT hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* kname) {
  TW_REAL(hipModuleGetFunction);
  const hipError_t rc = real(function, module, kname);
  if (rc == kHipSuccess && function && tickwise::rec::active(tickwise::rec::BackendId::kHip))
    tickwise::rec::register_name(fmt::StringKeyKind::kHipFunction, reinterpret_cast<uint64_t>(*function), kname);
  return rc;
}
