// A do-nothing rocprofiler-sdk tool: buffered KERNEL_DISPATCH tracing whose
// callback only counts. The benchmark's baseline for "the SDK's tracing
// without tickwise" (scripts/bench-recorder, configuration sdk-only).
#include <dlfcn.h>

#include <atomic>

#include "abi/rocprofiler_abi.h"

namespace {
std::atomic<unsigned long> g_records{0};
rocprofiler_context_id_t g_ctx{0};

void on_buffer(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**, size_t n, void*,
               uint64_t) {
  g_records.fetch_add(n, std::memory_order_relaxed);
}

int init(rocprofiler_client_finalize_t, void*) {
  auto create_context = reinterpret_cast<rocprofiler_create_context_fn>(dlsym(RTLD_DEFAULT, "rocprofiler_create_context"));
  auto create_buffer = reinterpret_cast<rocprofiler_create_buffer_fn>(dlsym(RTLD_DEFAULT, "rocprofiler_create_buffer"));
  auto configure = reinterpret_cast<rocprofiler_configure_buffer_tracing_service_fn>(
      dlsym(RTLD_DEFAULT, "rocprofiler_configure_buffer_tracing_service"));
  auto start = reinterpret_cast<rocprofiler_start_context_fn>(dlsym(RTLD_DEFAULT, "rocprofiler_start_context"));
  if (!create_context || !create_buffer || !configure || !start) return -1;
  rocprofiler_buffer_id_t buf{0};
  if (create_context(&g_ctx) || create_buffer(g_ctx, 1u << 20, 1u << 19, kRocpBufferPolicyLossless, on_buffer, nullptr, &buf) ||
      configure(g_ctx, kRocpBufferTracingKernelDispatch, nullptr, 0, buf) || start(g_ctx))
    return -1;
  return 0;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) rocprofiler_tool_configure_result_t* rocprofiler_configure(
    uint32_t, const char*, uint32_t, rocprofiler_client_id_t* id) {
  if (id) id->name = "null-tool";
  static rocprofiler_tool_configure_result_t r = {sizeof r, init, nullptr, nullptr};
  return &r;
}
