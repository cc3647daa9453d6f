// A fake libcupti for developing the cuda backend without a GPU: the entry
// points the backend resolves, plus fake_cupti_launch()/fake_cupti_sync() that
// a test app calls to play a launch (enter callback, kernel record, exit
// callback) or a device synchronize. Records are delivered on flush.
//   g++ -shared -fPIC -I/usr/local/cuda/include fake_cupti.cpp -o libcupti.so
#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

namespace {
CUpti_CallbackFunc g_cb = nullptr;
void* g_ud = nullptr;
bool g_enabled[3][2048] = {};
CUpti_BuffersCallbackRequestFunc g_req = nullptr;
CUpti_BuffersCallbackCompleteFunc g_done = nullptr;
CUpti_TimestampCallbackFunc g_ts = nullptr;
std::mutex g_mu;
std::vector<CUpti_ActivityKernel10> g_pending;
uint32_t g_corr = 0;
bool g_rt_api[2048] = {}, g_drv_api[2048] = {};

/// API activity record into a kernel-sized slot (the buffer has fixed-size slots).
void push_api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end, uint32_t corr) {
  CUpti_ActivityKernel10 slot{};
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.threadId = 4242;
  a.correlationId = corr;
  memcpy(&slot, &a, sizeof a);
  std::lock_guard<std::mutex> g(g_mu);
  g_pending.push_back(slot);
}
const char* kNames[] = {"_Z6kernelPf", "_ZN2at6native18elementwise_kernelILi128ELi4EEEviT1_", "not_mangled"};

uint64_t ts() {
  if (g_ts) return g_ts();
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec);
}

void call(CUpti_CallbackDomain d, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, uint32_t corr, uint64_t* cdata,
          const char* fn, const void* params, void* ret) {
  if (!g_cb || !g_enabled[d][cbid]) return;
  CUpti_CallbackData cb{};
  cb.callbackSite = site;
  cb.functionName = fn;
  cb.functionParams = params;
  cb.functionReturnValue = ret;
  cb.correlationId = corr;
  cb.correlationData = cdata;
  g_cb(g_ud, d, cbid, &cb);
}
}  // namespace

extern "C" {
CUptiResult cuptiGetVersion(uint32_t* v) { *v = CUPTI_API_VERSION; return CUPTI_SUCCESS; }
CUptiResult cuptiGetResultString(CUptiResult, const char** s) { *s = "fake"; return CUPTI_SUCCESS; }
CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud) {
  g_cb = cb; g_ud = ud; *s = reinterpret_cast<CUpti_SubscriberHandle>(1); return CUPTI_SUCCESS;
}
CUptiResult cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle, CUpti_CallbackDomain d, CUpti_CallbackId id) {
  g_enabled[d][id] = en; return CUPTI_SUCCESS;
}
CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t id, const char** name) {
  static char buf[3][2048][48];
  if (d == CUPTI_CB_DOMAIN_RUNTIME_API && id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) *name = "cudaLaunchKernel_v7000";
  else if (d == CUPTI_CB_DOMAIN_RUNTIME_API && id == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020) *name = "cudaDeviceSynchronize_v3020";
  else if (d == CUPTI_CB_DOMAIN_DRIVER_API && id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) *name = "cuLaunchKernel";
  else { snprintf(buf[d][id], 48, "%sOther%u", d == 1 ? "cu" : "cuda", id); *name = buf[d][id]; }
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c) {
  g_req = r; g_done = c; return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) { g_ts = f; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnable(CUpti_ActivityKind) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId id, uint8_t en) { g_rt_api[id] = en; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId id, uint8_t en) { g_drv_api[id] = en; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** rec) {
  uint8_t* p = *rec ? reinterpret_cast<uint8_t*>(*rec) + sizeof(CUpti_ActivityKernel10) : buffer;
  if (p + sizeof(CUpti_ActivityKernel10) > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *rec = reinterpret_cast<CUpti_Activity*>(p);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* d) { *d = 0; return CUPTI_SUCCESS; }
CUptiResult cuptiActivityFlushAll(uint32_t) {
  std::vector<CUpti_ActivityKernel10> v;
  { std::lock_guard<std::mutex> g(g_mu); v.swap(g_pending); }
  size_t i = 0;
  while (i < v.size()) {
    uint8_t* b = nullptr; size_t size = 0, maxr = 0;
    g_req(&b, &size, &maxr);
    size_t n = 0;
    while (i < v.size() && (n + 1) * sizeof(CUpti_ActivityKernel10) <= size) memcpy(b + n++ * sizeof(CUpti_ActivityKernel10), &v[i++], sizeof(CUpti_ActivityKernel10));
    g_done(nullptr, 0, b, size, n * sizeof(CUpti_ActivityKernel10));
  }
  return CUPTI_SUCCESS;
}
CUptiResult cuptiGetTimestamp(uint64_t* t) { *t = ts(); return CUPTI_SUCCESS; }

/// Plays one runtime launch of kernel `which` (0..2) that runs `dur_ns` on the "GPU".
void fake_cupti_launch(int which, uint64_t dur_ns) {
  const uint32_t corr = ++g_corr;
  uint64_t cdata = 0;
  cudaLaunchKernel_v7000_params p{};
  p.stream = reinterpret_cast<cudaStream_t>(0x1234);
  const uint64_t enter = ts();
  call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, corr, &cdata, "cudaLaunchKernel", &p, nullptr);
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = ts() + 2000;
  k.end = k.start + dur_ns;
  k.correlationId = corr;
  k.streamId = 7;
  k.gridX = 4; k.gridY = 2; k.gridZ = 1; k.blockX = 128; k.blockY = 1; k.blockZ = 1;
  k.registersPerThread = 32;
  k.name = kNames[which % 3];
  { std::lock_guard<std::mutex> g(g_mu); g_pending.push_back(k); }
  int ret = 0;
  call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, corr, &cdata, "cudaLaunchKernel", &p, &ret);
  if (g_rt_api[CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000])
    push_api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, enter, ts(), corr);
}

void fake_cupti_sync(uint64_t wait_ns) {
  const uint32_t corr = ++g_corr;
  uint64_t cdata = 0;
  const uint64_t enter = ts();
  call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, CUPTI_API_ENTER, corr, &cdata, "cudaDeviceSynchronize", nullptr, nullptr);
  timespec t{0, long(wait_ns)};
  nanosleep(&t, nullptr);
  int ret = 0;
  call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, CUPTI_API_EXIT, corr, &cdata, "cudaDeviceSynchronize", nullptr, &ret);
  if (g_rt_api[CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020])
    push_api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, enter, ts(), corr);
}
}
