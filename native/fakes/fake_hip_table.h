// Private contract between the fake HIP runtime and the fake rocprofiler-sdk,
// standing in for the HIP dispatch table that the real runtime hands to
// rocprofiler-register (rocprofiler_set_api_table("hip", ...)), which the real
// SDK wraps to see kernel enqueues and completions.
#pragma once

#include <cstdint>

struct FakeDispatch {
  uint64_t thread_id;      // gettid of the launching thread
  uint64_t start_boot_ns;  // CLOCK_BOOTTIME ns, as rocprofiler-sdk reports
  uint64_t end_boot_ns;
  uint64_t agent_handle;
  uint64_t queue_handle;
  uint64_t kernel_id;
  uint64_t dispatch_id;
  uint32_t grid[3];
  uint32_t workgroup[3];
};

struct FakeHipProfilerTable {
  uint64_t size;
  /// Set by the SDK: called on the launching thread when a kernel is enqueued
  /// (the SDK captures that thread's external correlation id there).
  void (*report_dispatch)(const FakeDispatch* d);
};
