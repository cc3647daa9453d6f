// cuda backend: CUPTI activity tracing of kernels, memcpys and memsets, plus
// CUPTI callbacks around the launch / synchronize / copy API calls for host
// submit times. Loaded through CUDA_INJECTION64_PATH: the CUDA driver dlopens
// the library named there during cuInit and calls its InitializeInjection
// (an LD_PRELOAD of cuLaunchKernel does not see launches that the runtime
// resolves through cuGetProcAddress, which is how PyTorch's launches go).
//
//   app thread:   cudaLaunchKernel ──CUPTI enter/exit callbacks──> CudaApi record (ring, no lock)
//   CUPTI thread: activity buffer ──buffer_completed──> CudaKernel / CudaMemcpy / CudaMemset (+ CudaName)
//   drain thread: (host before, cuptiGetTimestamp, host after) -> ClockSample, domain kCuptiTimestamp
//
// Time: the recorder registers a CUPTI timestamp callback that returns
// CLOCK_MONOTONIC ns before enabling any activity kind, so CUPTI's GPU->CPU
// conversion lands kernel times on the host timeline directly (time_domain
// kHostMonotonic). If the callback cannot be registered (CUPTI older than
// 12.x), records stay in CUPTI's own clock (kCuptiTimestamp, CLOCK_REALTIME on
// Linux) and the clock samples correlate it.
//
// libcupti is dlopen'ed in InitializeInjection, never linked: the preloadable
// library keeps working (inert for CUDA) on machines without CUDA. The one
// already in the process (PyTorch loads its own) is preferred.
#include "recorder/json.h"
#include "recorder/recorder.h"

#ifdef TICKWISE_WITH_CUDA

#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#ifndef TICKWISE_CUPTI_DEFAULT_PATH
#define TICKWISE_CUPTI_DEFAULT_PATH ""
#endif

namespace tickwise::rec {
namespace {

/// The CUPTI entry points this backend uses, resolved from the loaded library.
struct CuptiApi {
  decltype(&::cuptiGetVersion) get_version = nullptr;
  decltype(&::cuptiGetResultString) result_string = nullptr;
  decltype(&::cuptiSubscribe) subscribe = nullptr;
  decltype(&::cuptiEnableCallback) enable_callback = nullptr;
  decltype(&::cuptiGetCallbackName) callback_name = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) register_buffers = nullptr;
  decltype(&::cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;  // CUPTI 12.x+
  decltype(&::cuptiActivityEnable) activity_enable = nullptr;
  decltype(&::cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) num_dropped = nullptr;
  decltype(&::cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&::cuptiGetTimestamp) get_timestamp = nullptr;
  decltype(&::cuptiActivityEnableRuntimeApi) enable_runtime_api = nullptr;  // CUPTI 12.x+
  decltype(&::cuptiActivityEnableDriverApi) enable_driver_api = nullptr;
};

/// How host times of API calls are taken (TICKWISE_CUDA_API).
enum class ApiMode { kOff, kCallback, kActivity };

constexpr uint32_t kMaxCbid = 2048;  // above every runtime/driver cbid of CUDA 13 (523 / 807)

struct DeviceInfo {
  uint32_t id;
  std::string name;
  uint32_t cc_major, cc_minor, sm_count;
  uint64_t global_memory_bytes;
};

struct CudaState {
  std::atomic<int> phase{0};  // 0 waiting for InitializeInjection, 1 active, -1 failed/disabled
  std::atomic<bool> started{false};
  std::string status = "waiting for InitializeInjection (set CUDA_INJECTION64_PATH to this library)";
  std::string cupti_path;
  uint32_t cupti_version = 0;
  int driver_version = 0;
  bool timestamp_callback = false;
  uint16_t time_domain = uint16_t(fmt::Domain::kCuptiTimestamp);
  bool api_callbacks = false;
  ApiMode api_mode = ApiMode::kActivity;
  const char* api_mode_name = "activity";
  bool demangle = true;
  size_t buffer_bytes = 8u << 20;
  uint32_t enabled_cbids[3] = {};  // by CUpti_CallbackDomain (1 driver, 2 runtime)
  CuptiApi api;
  CUpti_SubscriberHandle subscriber = nullptr;
  // CudaApiClass per (domain, cbid); 0 = not recorded. Written before callbacks are enabled.
  uint8_t api_class[3][kMaxCbid] = {};
  std::atomic<uint8_t> api_named[3][kMaxCbid] = {};
  std::atomic<uint64_t> kernels{0}, memcpys{0}, memsets{0}, buffers{0}, cupti_dropped{0}, names{0}, unknown{0};
  std::atomic<uint64_t> buffer_alloc_failures{0};
  std::atomic<bool> exit_flush_timed_out{false};
  std::mutex names_mu;  // CUPTI buffer thread(s)
  std::unordered_map<const char*, uint64_t> key_by_ptr;
  std::unordered_set<uint64_t> named_keys;
  std::mutex devices_mu;  // CUPTI buffer thread vs drain thread (describe)
  std::vector<DeviceInfo> devices;
};

// Created on first use and never destroyed (CUPTI may call in after static
// destructors ran; the core's final flush runs that late too).
CudaState& cs() {
  static CudaState* s = new CudaState();
  return *s;
}

/// The calling thread's id as the core knows it (attaches the thread when it can record).
inline uint32_t my_tid() {
  ThreadState* t = thread_state();
  return t ? t->tid : t_state.tid;
}

inline uint32_t sat32(uint64_t v) { return v > 0xFFFFFFFFull ? 0xFFFFFFFFu : uint32_t(v); }
inline uint64_t prod3(int32_t x, int32_t y, int32_t z) {
  return uint64_t(x > 0 ? x : 0) * uint64_t(y > 0 ? y : 0) * uint64_t(z > 0 ? z : 0);
}

uint64_t fnv1a64(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ uint8_t(*s)) * 1099511628211ull;
  return h;
}

bool env_on(const char* name, bool dflt) {
  const char* v = getenv(name);
  if (!v || !*v) return dflt;
  return !(strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "false") == 0 || strcmp(v, "no") == 0);
}

const char* result_str(CUptiResult r) {
  const char* s = nullptr;
  if (cs().api.result_string) cs().api.result_string(r, &s);
  return s ? s : "?";
}

// ---- names, in-band ------------------------------------------------------------------

void emit_name(fmt::CudaNameKind kind, uint64_t key, const std::string& text) {
  const uint32_t total = uint32_t(text.size());
  uint32_t off = 0;
  do {
    fmt::Record rec{};
    auto& n = rec.cuda_name;
    n.kind = uint16_t(fmt::Kind::kCudaName);
    n.name_kind = uint16_t(kind);
    n.tid = my_tid();
    n.key = key;
    n.total_len = total;
    n.offset = off;
    const uint32_t len = total - off < sizeof n.text ? total - off : uint32_t(sizeof n.text);
    if (len) memcpy(n.text, text.data() + off, len);
    emit_patient(rec);
    cs().names.fetch_add(1, std::memory_order_relaxed);
    off += len;
  } while (off < total);
}

/// The key of a kernel name; the first time a name is seen its CudaName records go out.
uint64_t kernel_name_key(const char* mangled) {
  if (!mangled) return 0;
  CudaState& s = cs();
  uint64_t key = 0;
  bool fresh = false;
  {
    std::lock_guard<std::mutex> g(s.names_mu);
    auto it = s.key_by_ptr.find(mangled);  // CUPTI shares one string per kernel
    if (it != s.key_by_ptr.end()) return it->second;
    key = fnv1a64(mangled);
    s.key_by_ptr.emplace(mangled, key);
    fresh = s.named_keys.insert(key).second;
  }
  if (fresh) {
    std::string text = mangled;
    if (s.demangle) {
      int status = -1;
      char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
      if (status == 0 && d) text = d;
      free(d);
    }
    emit_name(fmt::CudaNameKind::kKernel, key, text);
  }
  return key;
}

// ---- activity buffers (CUPTI's thread) ------------------------------------------------

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  void* p = nullptr;
  if (posix_memalign(&p, 8, cs().buffer_bytes) != 0) {
    p = nullptr;
    cs().buffer_alloc_failures.fetch_add(1, std::memory_order_relaxed);
  }
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? cs().buffer_bytes : 0;
  *max_records = 0;
}

void on_kernel(const CUpti_ActivityKernel10& k) {
  fmt::Record rec{};
  auto& r = rec.cuda_kernel;
  r.kind = uint16_t(fmt::Kind::kCudaKernel);
  r.time_domain = cs().time_domain;
  r.tid = my_tid();
  r.start = k.start;
  r.end = k.end;
  r.correlation_id = k.correlationId;
  r.device_id = k.deviceId;
  r.stream_id = k.streamId;
  r.context_id = k.contextId;
  r.name_key = kernel_name_key(k.name);
  r.grid_blocks = sat32(prod3(k.gridX, k.gridY, k.gridZ));
  r.block_threads = sat32(prod3(k.blockX, k.blockY, k.blockZ));
  r.shared_mem_bytes = sat32(uint64_t(k.staticSharedMemory > 0 ? k.staticSharedMemory : 0) +
                             uint64_t(k.dynamicSharedMemory > 0 ? k.dynamicSharedMemory : 0));
  r.registers_per_thread = k.registersPerThread;
  r.flags = uint16_t((k.graphNodeId != 0 ? 1 : 0) | (k.isDeviceLaunched ? 2 : 0));
  cs().kernels.fetch_add(1, std::memory_order_relaxed);
  emit_patient(rec);
}

void on_memcpy(const CUpti_ActivityMemcpy6& m) {
  fmt::Record rec{};
  auto& r = rec.cuda_memcpy;
  r.kind = uint16_t(fmt::Kind::kCudaMemcpy);
  r.time_domain = cs().time_domain;
  r.tid = my_tid();
  r.start = m.start;
  r.end = m.end;
  r.correlation_id = m.correlationId;
  r.device_id = m.deviceId;
  r.stream_id = m.streamId;
  r.context_id = m.contextId;
  r.bytes = m.bytes;
  r.runtime_correlation_id = m.runtimeCorrelationId;
  r.copy_kind = m.copyKind;
  r.src_kind = m.srcKind;
  r.dst_kind = m.dstKind;
  r.cupti_flags = m.flags;
  cs().memcpys.fetch_add(1, std::memory_order_relaxed);
  emit_patient(rec);
}

void on_memset(const CUpti_ActivityMemset4& m) {
  fmt::Record rec{};
  auto& r = rec.cuda_memset;
  r.kind = uint16_t(fmt::Kind::kCudaMemset);
  r.time_domain = cs().time_domain;
  r.tid = my_tid();
  r.start = m.start;
  r.end = m.end;
  r.correlation_id = m.correlationId;
  r.device_id = m.deviceId;
  r.stream_id = m.streamId;
  r.context_id = m.contextId;
  r.bytes = m.bytes;
  r.value = m.value;
  r.memory_kind = m.memoryKind;
  r.cupti_flags = m.flags;
  cs().memsets.fetch_add(1, std::memory_order_relaxed);
  emit_patient(rec);
}

/// An API call from CUPTI's RUNTIME / DRIVER activity (mode "activity"):
/// CUPTI timed it on the calling thread; the record reaches us in a buffer.
void on_api_activity(const CUpti_ActivityAPI& x, uint32_t domain) {
  CudaState& s = cs();
  const uint32_t cbid = x.cbid;
  if (cbid >= kMaxCbid) return;
  if (!s.api_named[domain][cbid].load(std::memory_order_relaxed)) {
    s.api_named[domain][cbid].store(1, std::memory_order_relaxed);
    const char* name = nullptr;
    if (s.api.callback_name && s.api.callback_name(CUpti_CallbackDomain(domain), cbid, &name) == CUPTI_SUCCESS && name)
      emit_name(fmt::CudaNameKind::kApi, (uint64_t(domain) << 32) | cbid, std::string(name));
  }
  fmt::Record rec{};
  auto& a = rec.cuda_api;
  a.kind = uint16_t(fmt::Kind::kCudaApi);
  a.api_class = s.api_class[domain][cbid];
  a.tid = x.threadId;  // CUPTI's thread id of the caller
  a.host_enter_ns = x.start;
  a.host_exit_ns = x.end;
  a.correlation_id = x.correlationId;
  a.cbid = cbid;
  a.domain = domain;
  a.result = int32_t(x.returnValue);
  a.flags = 1;  // timed by CUPTI's API activity
  a.time_domain = s.time_domain;
  emit_patient(rec);
}

void on_device(const CUpti_ActivityDevice5& d) {
  DeviceInfo info{d.id, d.name ? d.name : "", d.computeCapabilityMajor, d.computeCapabilityMinor,
                  d.numMultiprocessors, d.globalMemorySize};
  std::lock_guard<std::mutex> g(cs().devices_mu);
  for (const auto& x : cs().devices)
    if (x.id == info.id) return;
  cs().devices.push_back(info);
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid) {
  CudaState& s = cs();
  s.buffers.fetch_add(1, std::memory_order_relaxed);
  CUpti_Activity* a = nullptr;
  while (valid > 0 && s.api.next_record(buffer, valid, &a) == CUPTI_SUCCESS) {
    switch (a->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        on_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(a));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        on_memcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(a));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        on_memset(*reinterpret_cast<const CUpti_ActivityMemset4*>(a));
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
        on_api_activity(*reinterpret_cast<const CUpti_ActivityAPI*>(a), CUPTI_CB_DOMAIN_RUNTIME_API);
        break;
      case CUPTI_ACTIVITY_KIND_DRIVER:
        on_api_activity(*reinterpret_cast<const CUpti_ActivityAPI*>(a), CUPTI_CB_DOMAIN_DRIVER_API);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        on_device(*reinterpret_cast<const CUpti_ActivityDevice5*>(a));
        break;
      default:
        s.unknown.fetch_add(1, std::memory_order_relaxed);
        break;
    }
  }
  size_t dropped = 0;
  if (s.api.num_dropped && s.api.num_dropped(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
    s.cupti_dropped.fetch_add(dropped, std::memory_order_relaxed);
  free(buffer);
}

// ---- API callbacks (the application's threads) -----------------------------------------

uint64_t stream_of(uint32_t domain, CUpti_CallbackId cbid, const void* params) {
  if (!params) return 0;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
        return reinterpret_cast<uint64_t>(static_cast<const cudaLaunchKernel_v7000_params*>(params)->stream);
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
        const auto* c = static_cast<const cudaLaunchKernelExC_v11060_params*>(params)->config;
        return c ? reinterpret_cast<uint64_t>(c->stream) : 0;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
        return reinterpret_cast<uint64_t>(static_cast<const cudaStreamSynchronize_v3020_params*>(params)->stream);
      default:
        return 0;
    }
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return reinterpret_cast<uint64_t>(static_cast<const cuLaunchKernel_params*>(params)->hStream);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* c = static_cast<const cuLaunchKernelEx_params*>(params)->config;
      return c ? reinterpret_cast<uint64_t>(c->hStream) : 0;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
      return reinterpret_cast<uint64_t>(static_cast<const cuStreamSynchronize_params*>(params)->hStream);
    default:
      return 0;
  }
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    *cb->correlationData = now_ns();
    return;
  }
  const uint64_t exit_ns = now_ns();
  if (!active(BackendId::kCuda) || cbid >= kMaxCbid) return;
  ThreadState* t = app_thread_state();
  if (!t) return;
  CudaState& s = cs();
  if (__builtin_expect(!s.api_named[domain][cbid].load(std::memory_order_relaxed), 0)) {
    s.api_named[domain][cbid].store(1, std::memory_order_relaxed);
    if (cb->functionName)
      emit_name(fmt::CudaNameKind::kApi, (uint64_t(domain) << 32) | cbid, std::string(cb->functionName));
  }
  fmt::Record rec{};
  auto& a = rec.cuda_api;
  a.kind = uint16_t(fmt::Kind::kCudaApi);
  a.api_class = s.api_class[domain][cbid];
  a.tid = t->tid;
  a.host_enter_ns = *cb->correlationData;
  a.host_exit_ns = exit_ns;
  a.correlation_id = cb->correlationId;
  a.cbid = cbid;
  a.domain = domain;
  a.result = cb->functionReturnValue ? *static_cast<const int32_t*>(cb->functionReturnValue) : 0;
  a.stream = stream_of(domain, cbid, cb->functionParams);
  a.time_domain = uint16_t(fmt::Domain::kHostMonotonic);
  emit(t, rec);
}

/// Which API calls are recorded, by the name CUPTI gives the callback id.
fmt::CudaApiClass classify(const char* n) {
  auto starts = [n](const char* p) { return strncmp(n, p, strlen(p)) == 0; };
  if (starts("cudaGraphLaunch") || starts("cuGraphLaunch")) return fmt::CudaApiClass::kGraphLaunch;
  if (starts("cudaLaunchKernel") || starts("cudaLaunchCooperativeKernel") || starts("cuLaunchKernel") ||
      starts("cuLaunchCooperativeKernel") || starts("cuLaunchGrid") || strcmp(n, "cuLaunch") == 0)
    return fmt::CudaApiClass::kLaunch;
  if (starts("cudaDeviceSynchronize") || starts("cudaStreamSynchronize") || starts("cudaEventSynchronize") ||
      starts("cuCtxSynchronize") || starts("cuStreamSynchronize") || starts("cuEventSynchronize"))
    return fmt::CudaApiClass::kSync;
  if (starts("cudaMemcpy") || starts("cuMemcpy")) return fmt::CudaApiClass::kMemcpy;
  if (starts("cudaMemset") || starts("cuMemset")) return fmt::CudaApiClass::kMemset;
  return fmt::CudaApiClass(0);
}

// ---- start-up ------------------------------------------------------------------------------

uint64_t CUPTIAPI monotonic_timestamp() { return now_ns(); }

int find_cupti_cb(struct dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name && strstr(info->dlpi_name, "libcupti.so")) {
    *static_cast<std::string*>(data) = info->dlpi_name;
    return 1;
  }
  return 0;
}

void* load_cupti(std::string& path) {
  // 1. explicitly named; 2. already in the process (PyTorch's own); 3. the usual names; 4. the build's.
  if (const char* p = getenv("TICKWISE_CUPTI_LIB"); p && *p)
    if (void* h = dlopen(p, RTLD_NOW | RTLD_GLOBAL)) return path = p, h;
  std::string loaded;
  dl_iterate_phdr(find_cupti_cb, &loaded);
  if (!loaded.empty())
    if (void* h = dlopen(loaded.c_str(), RTLD_NOW | RTLD_NOLOAD)) return path = loaded, h;
  for (const char* n : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
    if (void* h = dlopen(n, RTLD_NOW | RTLD_GLOBAL)) return path = n, h;
  for (const char* n : {TICKWISE_CUPTI_DEFAULT_PATH, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
                        "/usr/local/cuda/lib64/libcupti.so"})
    if (*n)
      if (void* h = dlopen(n, RTLD_NOW | RTLD_GLOBAL)) return path = n, h;
  return nullptr;
}

template <typename F>
void resolve(void* h, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(h, name));
}

bool fail(const std::string& why) {
  cs().status = "failed:" + why;
  cs().phase.store(-1, std::memory_order_release);
  debugf("cuda: %s", cs().status.c_str());
  return false;
}

void cuda_flush();

/// At exit, before the core finalizes: CUPTI's buffers out while the
/// application's threads may still push. On a thread of its own with a
/// deadline, since a runtime torn down before us could make the flush hang.
void at_exit_flush() {
  if (cs().phase.load(std::memory_order_acquire) != 1) return;
  struct Job {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto* job = new Job();  // leaked if the flush never returns
  pthread_t th;
  if (pthread_create(&th, nullptr, [](void* p) -> void* {
        auto* j = static_cast<Job*>(p);
        cuda_flush();
        std::lock_guard<std::mutex> g(j->mu);
        j->done = true;
        j->cv.notify_all();
        return nullptr;
      }, job) != 0) {
    delete job;
    return;
  }
  std::unique_lock<std::mutex> l(job->mu);
  const bool finished = job->cv.wait_for(l, std::chrono::seconds(5), [&] { return job->done; });
  l.unlock();
  if (finished) {
    pthread_join(th, nullptr);
    delete job;
  } else {
    pthread_detach(th);
    cs().exit_flush_timed_out.store(true);
  }
}

bool cuda_start() {
  CudaState& s = cs();
  if (s.started.exchange(true)) return s.phase.load() == 1;
  if (!active(BackendId::kCuda)) {
    s.status = "disabled";
    s.phase.store(-1);
    return false;
  }
  void* h = load_cupti(s.cupti_path);
  if (!h) return fail("dlopen libcupti (set TICKWISE_CUPTI_LIB)");
  Dl_info info{};
  if (void* sym = dlsym(h, "cuptiGetVersion"); sym && dladdr(sym, &info) && info.dli_fname) s.cupti_path = info.dli_fname;
  CuptiApi& a = s.api;
  resolve(h, a.get_version, "cuptiGetVersion");
  resolve(h, a.result_string, "cuptiGetResultString");
  resolve(h, a.subscribe, "cuptiSubscribe");
  resolve(h, a.enable_callback, "cuptiEnableCallback");
  resolve(h, a.callback_name, "cuptiGetCallbackName");
  resolve(h, a.register_buffers, "cuptiActivityRegisterCallbacks");
  resolve(h, a.register_timestamp, "cuptiActivityRegisterTimestampCallback");
  resolve(h, a.activity_enable, "cuptiActivityEnable");
  resolve(h, a.next_record, "cuptiActivityGetNextRecord");
  resolve(h, a.num_dropped, "cuptiActivityGetNumDroppedRecords");
  resolve(h, a.flush_all, "cuptiActivityFlushAll");
  resolve(h, a.get_timestamp, "cuptiGetTimestamp");
  resolve(h, a.enable_runtime_api, "cuptiActivityEnableRuntimeApi");
  resolve(h, a.enable_driver_api, "cuptiActivityEnableDriverApi");
  if (!a.register_buffers || !a.activity_enable || !a.next_record || !a.flush_all || !a.get_timestamp)
    return fail("resolve CUPTI activity API");
  if (a.get_version) a.get_version(&s.cupti_version);
  if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD))
    if (auto drv = reinterpret_cast<int (*)(int*)>(dlsym(cuda, "cuDriverGetVersion"))) drv(&s.driver_version);
  s.demangle = env_on("TICKWISE_CUDA_DEMANGLE", true);
  if (const char* mb = getenv("TICKWISE_CUDA_BUFFER_MB"); mb && *mb) {
    const long v = strtol(mb, nullptr, 10);
    if (v >= 1 && v <= 1024) s.buffer_bytes = size_t(v) << 20;
  }

  // API host times: "activity" (default) = CUPTI's RUNTIME/DRIVER activity
  // records of the chosen calls only; "callback" = our enter/exit callbacks
  // (stream handles too, but two callback invocations per call and domain);
  // "off" = kernels without host launch times.
  const char* mode = getenv("TICKWISE_CUDA_API");
  if (mode && (strcmp(mode, "off") == 0 || strcmp(mode, "0") == 0)) s.api_mode = ApiMode::kOff, s.api_mode_name = "off";
  else if (mode && strcmp(mode, "callback") == 0) s.api_mode = ApiMode::kCallback, s.api_mode_name = "callback";
  if (s.api_mode == ApiMode::kActivity && (!a.enable_runtime_api || !a.enable_driver_api || !a.callback_name))
    s.api_mode = ApiMode::kCallback, s.api_mode_name = "callback (no cuptiActivityEnable*Api)";
  if (s.api_mode == ApiMode::kCallback && (!a.subscribe || !a.enable_callback || !a.callback_name))
    s.api_mode = ApiMode::kOff, s.api_mode_name = "off (no callback API)";

  // The callback subscription first: it initialises CUPTI, which the
  // timestamp callback's registration needs; both before any activity kind.
  if (s.api_mode == ApiMode::kCallback) {
    const CUptiResult r = a.subscribe(&s.subscriber, on_callback, nullptr);
    if (r != CUPTI_SUCCESS) {
      debugf("cuda: cuptiSubscribe: %s (another CUPTI client?); launches without host times", result_str(r));
      s.subscriber = nullptr;
      s.api_mode = ApiMode::kOff;
      s.api_mode_name = "off (cuptiSubscribe failed)";
    }
  } else {
    uint64_t ignored = 0;
    a.get_timestamp(&ignored);  // initialises CUPTI
  }
  if (a.register_timestamp && a.register_timestamp(monotonic_timestamp) == CUPTI_SUCCESS) {
    s.timestamp_callback = true;
    s.time_domain = uint16_t(fmt::Domain::kHostMonotonic);
  }
  CUptiResult r = a.register_buffers(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) return fail(std::string("cuptiActivityRegisterCallbacks: ") + result_str(r));
  r = a.activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) return fail(std::string("cuptiActivityEnable(CONCURRENT_KERNEL): ") + result_str(r));
  if (env_on("TICKWISE_CUDA_MEMCPY", true)) {
    a.activity_enable(CUPTI_ACTIVITY_KIND_MEMCPY);
    a.activity_enable(CUPTI_ACTIVITY_KIND_MEMSET);
  }
  a.activity_enable(CUPTI_ACTIVITY_KIND_DEVICE);

  if (s.api_mode != ApiMode::kOff) {
    const struct { CUpti_CallbackDomain domain; uint32_t size; } domains[] = {
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE},
    };
    const bool driver = env_on("TICKWISE_CUDA_DRIVER_API", true);
    for (const auto& d : domains) {
      if (d.domain == CUPTI_CB_DOMAIN_DRIVER_API && !driver) continue;
      for (uint32_t cbid = 1; cbid < d.size && cbid < kMaxCbid; ++cbid) {
        const char* name = nullptr;
        if (a.callback_name(d.domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
        const auto cls = classify(name);
        if (cls == fmt::CudaApiClass(0)) continue;
        s.api_class[d.domain][cbid] = uint8_t(cls);
        CUptiResult e;
        if (s.api_mode == ApiMode::kCallback) e = a.enable_callback(1, s.subscriber, d.domain, cbid);
        else if (d.domain == CUPTI_CB_DOMAIN_RUNTIME_API) e = a.enable_runtime_api(cbid, 1);
        else e = a.enable_driver_api(cbid, 1);
        if (e == CUPTI_SUCCESS) ++s.enabled_cbids[d.domain];
      }
    }
    s.api_callbacks = s.enabled_cbids[CUPTI_CB_DOMAIN_RUNTIME_API] + s.enabled_cbids[CUPTI_CB_DOMAIN_DRIVER_API] > 0;
  }
  s.status = "active";
  s.phase.store(1, std::memory_order_release);
  // Runs before the core's own exit handler (registered earlier), so the
  // buffers reach the rings while the application thread can still push.
  atexit(at_exit_flush);
  request_clock_sample();
  debugf("cuda: CUPTI %u from %s, timestamps %s, API %s: %u runtime + %u driver calls", s.cupti_version,
         s.cupti_path.c_str(), s.timestamp_callback ? "CLOCK_MONOTONIC (callback)" : "CUPTI default", s.api_mode_name,
         s.enabled_cbids[CUPTI_CB_DOMAIN_RUNTIME_API], s.enabled_cbids[CUPTI_CB_DOMAIN_DRIVER_API]);
  return true;
}

// ---- hooks of the core -----------------------------------------------------------------

void cuda_flush() {
  if (cs().phase.load(std::memory_order_acquire) != 1) return;
  cs().api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void cuda_sample_clocks(ClockSink& sink, uint32_t tries) {
  CudaState& s = cs();
  if (s.phase.load(std::memory_order_acquire) != 1) return;
  uint64_t best = ~0ull, bb = 0, bv = 0, ba = 0;
  uint32_t ok = 0;
  for (uint32_t i = 0; i < tries; ++i) {
    uint64_t v = 0;
    const uint64_t b = now_ns();
    const CUptiResult r = s.api.get_timestamp(&v);
    const uint64_t a = now_ns();
    if (r != CUPTI_SUCCESS) continue;
    ++ok;
    if (a - b < best) best = a - b, bb = b, bv = v, ba = a;
  }
  if (ok) sink.add(fmt::Domain::kCuptiTimestamp, bb, bv, ba, ok);
}

void cuda_describe_domains(JsonWriter& w) {
  CudaState& s = cs();
  if (s.phase.load(std::memory_order_acquire) != 1) return;
  w.begin_object();
  w.key("id").value(unsigned(fmt::Domain::kCuptiTimestamp));
  w.key("name").value("cupti");
  w.key("kind").value("host");
  w.key("unit").value("ns");
  w.key("clock").value(s.timestamp_callback ? "CLOCK_MONOTONIC (the recorder's CUPTI timestamp callback)"
                                            : "CUPTI default (CLOCK_REALTIME on Linux)");
  w.key("source").value("cuptiGetTimestamp");
  w.end_object();
}

void cuda_describe(JsonWriter& w) {
  CudaState& s = cs();
  w.key("status").value(s.status);
  w.key("cupti_library").value(s.cupti_path);
  w.key("cupti_api_version").value(s.cupti_version);
  w.key("cupti_api_version_built").value(unsigned(CUPTI_API_VERSION));
  w.key("cuda_driver_version").value(s.driver_version);
  w.key("timestamp_callback").value(s.timestamp_callback);
  w.key("record_time_domain").value(unsigned(s.time_domain));
  w.key("api_mode").value(s.api_mode_name);
  w.key("api_calls_enabled").begin_object();
  w.key("runtime").value(s.enabled_cbids[CUPTI_CB_DOMAIN_RUNTIME_API]);
  w.key("driver").value(s.enabled_cbids[CUPTI_CB_DOMAIN_DRIVER_API]);
  w.end_object();
  w.key("kernel_records").value(s.kernels.load());
  w.key("memcpy_records").value(s.memcpys.load());
  w.key("memset_records").value(s.memsets.load());
  w.key("name_records").value(s.names.load());
  w.key("cupti_buffers").value(s.buffers.load());
  w.key("cupti_buffer_bytes").value(uint64_t(s.buffer_bytes));
  w.key("cupti_dropped_records").value(s.cupti_dropped.load());
  w.key("cupti_buffer_alloc_failures").value(s.buffer_alloc_failures.load());
  w.key("other_activity_records").value(s.unknown.load());
  w.key("exit_flush_timed_out").value(s.exit_flush_timed_out.load());
  w.key("devices").begin_array();
  {
    std::lock_guard<std::mutex> g(s.devices_mu);
    for (const auto& d : s.devices) {
      w.begin_object();
      w.key("id").value(d.id);
      w.key("name").value(d.name);
      w.key("compute_capability").value(std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
      w.key("sm_count").value(d.sm_count);
      w.key("global_memory_bytes").value_u64_string(d.global_memory_bytes);
      w.end_object();
    }
  }
  w.end_array();
}

void cuda_after_fork_child() {
  // CUDA is not usable in a forked child; CUPTI's buffers belong to the parent.
  cs().phase.store(-1);
  cs().status = "off in forked child";
}

}  // namespace

const BackendOps& cuda_backend() {
  static const BackendOps ops = {"cuda",          true,          cuda_sample_clocks, cuda_flush, cuda_describe_domains,
                                 cuda_describe,   nullptr,       cuda_after_fork_child};
  return ops;
}

}  // namespace tickwise::rec

/// The CUDA driver calls this once, during cuInit, in the library named by
/// CUDA_INJECTION64_PATH.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  tickwise::rec::ensure_init();
  tickwise::rec::cuda_start();  // its status goes to meta.json; never fail the application's cuInit
  return 1;
}

#else  // !TICKWISE_WITH_CUDA

namespace tickwise::rec {
namespace {
void cuda_describe(JsonWriter& w) { w.key("note").value("built without TICKWISE_CUDA (cmake -DTICKWISE_CUDA=ON)"); }
}  // namespace

const BackendOps& cuda_backend() {
  static const BackendOps ops = {"cuda", false, nullptr, nullptr, nullptr, cuda_describe, nullptr, nullptr};
  return ops;
}
}  // namespace tickwise::rec

#endif
