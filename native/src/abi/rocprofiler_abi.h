// Hand-written declarations of the few rocprofiler-sdk types and entry points
// that tickwise's tool library uses (and its stand-in implements). Each
// mirrors the declaration named above it, from rocprofiler-sdk's public
// headers (fwd.h, registration.h, buffer.h, buffer_tracing.h,
// external_correlation.h, context.h). Nothing here is copied from the SDK.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// mirrors: typedef enum { ROCPROFILER_STATUS_SUCCESS = 0, ... } rocprofiler_status_t;
typedef int rocprofiler_status_t;
constexpr rocprofiler_status_t kRocpStatusSuccess = 0;
constexpr rocprofiler_status_t kRocpStatusError = 1;

// mirrors: rocprofiler_buffer_category_t: ROCPROFILER_BUFFER_CATEGORY_TRACING = 1
constexpr uint32_t kRocpBufferCategoryTracing = 1;
// mirrors: rocprofiler_buffer_tracing_kind_t: ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH = 11
typedef int rocprofiler_buffer_tracing_kind_t;
constexpr rocprofiler_buffer_tracing_kind_t kRocpBufferTracingKernelDispatch = 11;
// mirrors: rocprofiler_kernel_dispatch_operation_t: ROCPROFILER_KERNEL_DISPATCH_COMPLETE = 2
constexpr int kRocpKernelDispatchComplete = 2;
// mirrors: rocprofiler_buffer_policy_t: ROCPROFILER_BUFFER_POLICY_LOSSLESS = 2
typedef int rocprofiler_buffer_policy_t;
constexpr rocprofiler_buffer_policy_t kRocpBufferPolicyLossless = 2;

// mirrors: typedef int32_t rocprofiler_tracing_operation_t;
typedef int32_t rocprofiler_tracing_operation_t;
// mirrors: typedef uint64_t rocprofiler_timestamp_t; rocprofiler_thread_id_t; rocprofiler_kernel_id_t; rocprofiler_dispatch_id_t;
typedef uint64_t rocprofiler_timestamp_t;
typedef uint64_t rocprofiler_thread_id_t;
typedef uint64_t rocprofiler_kernel_id_t;
typedef uint64_t rocprofiler_dispatch_id_t;

// mirrors: typedef union rocprofiler_user_data_t { uint64_t value; void* ptr; } rocprofiler_user_data_t;
typedef union rocprofiler_user_data_t {
  uint64_t value;
  void* ptr;
} rocprofiler_user_data_t;

// mirrors: typedef struct rocprofiler_context_id_t { uint64_t handle; } (and the other id structs)
typedef struct { uint64_t handle; } rocprofiler_context_id_t;
typedef struct { uint64_t handle; } rocprofiler_buffer_id_t;
typedef struct { uint64_t handle; } rocprofiler_agent_id_t;
typedef struct { uint64_t handle; } rocprofiler_queue_id_t;

// mirrors: typedef struct rocprofiler_correlation_id_t { uint64_t internal; rocprofiler_user_data_t external; }
typedef struct {
  uint64_t internal;
  rocprofiler_user_data_t external;
} rocprofiler_correlation_id_t;

// mirrors: typedef struct rocprofiler_dim3_t { uint32_t x; uint32_t y; uint32_t z; }
typedef struct {
  uint32_t x, y, z;
} rocprofiler_dim3_t;

// mirrors: typedef struct { union { struct { uint32_t category; uint32_t kind; }; uint64_t hash; };
//   void* payload; } rocprofiler_record_header_t;
typedef struct {
  uint32_t category;
  uint32_t kind;
  void* payload;
} rocprofiler_record_header_t;

// mirrors: typedef struct rocprofiler_kernel_dispatch_info_t { uint64_t size; rocprofiler_agent_id_t agent_id;
//   rocprofiler_queue_id_t queue_id; rocprofiler_kernel_id_t kernel_id; rocprofiler_dispatch_id_t dispatch_id;
//   uint32_t private_segment_size; uint32_t group_segment_size; rocprofiler_dim3_t workgroup_size;
//   rocprofiler_dim3_t grid_size; uint8_t reserved_padding[56]; }
typedef struct {
  uint64_t size;
  rocprofiler_agent_id_t agent_id;
  rocprofiler_queue_id_t queue_id;
  rocprofiler_kernel_id_t kernel_id;
  rocprofiler_dispatch_id_t dispatch_id;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  rocprofiler_dim3_t workgroup_size;
  rocprofiler_dim3_t grid_size;
  uint8_t reserved_padding[56];
} rocprofiler_kernel_dispatch_info_t;

// mirrors: typedef struct rocprofiler_buffer_tracing_kernel_dispatch_record_t { uint64_t size;
//   rocprofiler_buffer_tracing_kind_t kind; rocprofiler_kernel_dispatch_operation_t operation;
//   rocprofiler_correlation_id_t correlation_id; rocprofiler_thread_id_t thread_id;
//   rocprofiler_timestamp_t start_timestamp; rocprofiler_timestamp_t end_timestamp;
//   rocprofiler_kernel_dispatch_info_t dispatch_info; }
// start/end are nanoseconds on CLOCK_BOOTTIME (the SDK converts HSA ticks).
typedef struct {
  uint64_t size;
  rocprofiler_buffer_tracing_kind_t kind;
  int32_t operation;
  rocprofiler_correlation_id_t correlation_id;
  rocprofiler_thread_id_t thread_id;
  rocprofiler_timestamp_t start_timestamp;
  rocprofiler_timestamp_t end_timestamp;
  rocprofiler_kernel_dispatch_info_t dispatch_info;
} rocprofiler_buffer_tracing_kernel_dispatch_record_t;

// mirrors: typedef struct rocprofiler_client_id_t { const char* name; const uint32_t handle; }
typedef struct {
  const char* name;
  uint32_t handle;
} rocprofiler_client_id_t;

// mirrors: typedef void (*rocprofiler_client_finalize_t)(rocprofiler_client_id_t);
typedef void (*rocprofiler_client_finalize_t)(rocprofiler_client_id_t);
// mirrors: typedef int (*rocprofiler_tool_initialize_t)(rocprofiler_client_finalize_t finalize_func, void* tool_data);
typedef int (*rocprofiler_tool_initialize_t)(rocprofiler_client_finalize_t finalize_func, void* tool_data);
// mirrors: typedef void (*rocprofiler_tool_finalize_t)(void* tool_data);
typedef void (*rocprofiler_tool_finalize_t)(void* tool_data);

// mirrors: typedef struct rocprofiler_tool_configure_result_t { size_t size;
//   rocprofiler_tool_initialize_t initialize; rocprofiler_tool_finalize_t finalize; void* tool_data; }
typedef struct {
  size_t size;
  rocprofiler_tool_initialize_t initialize;
  rocprofiler_tool_finalize_t finalize;
  void* tool_data;
} rocprofiler_tool_configure_result_t;

// mirrors: typedef rocprofiler_tool_configure_result_t* (*rocprofiler_configure_func_t)(uint32_t version,
//   const char* runtime_version, uint32_t priority, rocprofiler_client_id_t* client_id);
typedef rocprofiler_tool_configure_result_t* (*rocprofiler_configure_func_t)(uint32_t version,
                                                                              const char* runtime_version,
                                                                              uint32_t priority,
                                                                              rocprofiler_client_id_t* client_id);

// mirrors: typedef void (*rocprofiler_buffer_tracing_cb_t)(rocprofiler_context_id_t context,
//   rocprofiler_buffer_id_t buffer_id, rocprofiler_record_header_t** headers, size_t num_headers,
//   void* data, uint64_t drop_count);
typedef void (*rocprofiler_buffer_tracing_cb_t)(rocprofiler_context_id_t context, rocprofiler_buffer_id_t buffer_id,
                                                rocprofiler_record_header_t** headers, size_t num_headers,
                                                void* data, uint64_t drop_count);

// Entry points, as function-pointer types so that the tool resolves them at
// run time (the SDK is optional):
// mirrors: rocprofiler_status_t rocprofiler_create_context(rocprofiler_context_id_t* context_id);
typedef rocprofiler_status_t (*rocprofiler_create_context_fn)(rocprofiler_context_id_t* context_id);
// mirrors: rocprofiler_status_t rocprofiler_start_context(rocprofiler_context_id_t context_id);
typedef rocprofiler_status_t (*rocprofiler_start_context_fn)(rocprofiler_context_id_t context_id);
// mirrors: rocprofiler_status_t rocprofiler_create_buffer(rocprofiler_context_id_t context, size_t size,
//   size_t watermark, rocprofiler_buffer_policy_t policy, rocprofiler_buffer_tracing_cb_t callback,
//   void* callback_data, rocprofiler_buffer_id_t* buffer_id);
typedef rocprofiler_status_t (*rocprofiler_create_buffer_fn)(rocprofiler_context_id_t context, size_t size,
                                                             size_t watermark, rocprofiler_buffer_policy_t policy,
                                                             rocprofiler_buffer_tracing_cb_t callback,
                                                             void* callback_data, rocprofiler_buffer_id_t* buffer_id);
// mirrors: rocprofiler_status_t rocprofiler_configure_buffer_tracing_service(rocprofiler_context_id_t context_id,
//   rocprofiler_buffer_tracing_kind_t kind, const rocprofiler_tracing_operation_t* operations,
//   size_t operations_count, rocprofiler_buffer_id_t buffer_id);
typedef rocprofiler_status_t (*rocprofiler_configure_buffer_tracing_service_fn)(
    rocprofiler_context_id_t context_id, rocprofiler_buffer_tracing_kind_t kind,
    const rocprofiler_tracing_operation_t* operations, size_t operations_count, rocprofiler_buffer_id_t buffer_id);
// mirrors: rocprofiler_status_t rocprofiler_flush_buffer(rocprofiler_buffer_id_t buffer_id);
typedef rocprofiler_status_t (*rocprofiler_flush_buffer_fn)(rocprofiler_buffer_id_t buffer_id);
// mirrors: rocprofiler_status_t rocprofiler_get_thread_id(rocprofiler_thread_id_t* tid);
typedef rocprofiler_status_t (*rocprofiler_get_thread_id_fn)(rocprofiler_thread_id_t* tid);
// mirrors: rocprofiler_status_t rocprofiler_push_external_correlation_id(rocprofiler_context_id_t context,
//   rocprofiler_thread_id_t tid, rocprofiler_user_data_t external_correlation_id);
typedef rocprofiler_status_t (*rocprofiler_push_external_correlation_id_fn)(rocprofiler_context_id_t context,
                                                                             rocprofiler_thread_id_t tid,
                                                                             rocprofiler_user_data_t external);
// mirrors: rocprofiler_status_t rocprofiler_pop_external_correlation_id(rocprofiler_context_id_t context,
//   rocprofiler_thread_id_t tid, rocprofiler_user_data_t* external_correlation_id);
typedef rocprofiler_status_t (*rocprofiler_pop_external_correlation_id_fn)(rocprofiler_context_id_t context,
                                                                            rocprofiler_thread_id_t tid,
                                                                            rocprofiler_user_data_t* external);
// mirrors (rocprofiler-register): int rocprofiler_set_api_table(const char* name, uint64_t lib_version,
//   uint64_t lib_instance, void** tables, uint64_t num_tables);
typedef int (*rocprofiler_set_api_table_fn)(const char* name, uint64_t lib_version, uint64_t lib_instance,
                                            void** tables, uint64_t num_tables);

}  // extern "C"
