// tw-layout: prints the byte layout of records.twr as include/tickwise/format.h
// declares it (offsetof / sizeof / type of every field of every struct), as
// JSON. native/layout.json is its committed output: the ctest format.layout
// fails when the two differ (format.h changed, layout.json not regenerated),
// and packages/capture/test/recorder-layout.test.ts checks the TypeScript
// reader's field table and native/FORMAT.md against layout.json.
//   tw-layout            JSON on stdout; exit 1 when a struct's listed fields
//                        do not tile it exactly (a field missing from the list)
//   tw-layout --check F  exit 1 (saying what differs) unless F holds the same text
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tickwise/format.h"

using namespace tickwise::fmt;

namespace {

template <class T> struct TypeName;
template <> struct TypeName<uint8_t> { static std::string get() { return "u8"; } };
template <> struct TypeName<uint16_t> { static std::string get() { return "u16"; } };
template <> struct TypeName<uint32_t> { static std::string get() { return "u32"; } };
template <> struct TypeName<int32_t> { static std::string get() { return "i32"; } };
template <> struct TypeName<uint64_t> { static std::string get() { return "u64"; } };
template <> struct TypeName<int64_t> { static std::string get() { return "i64"; } };
template <> struct TypeName<char> { static std::string get() { return "char"; } };
template <class T, size_t N> struct TypeName<T[N]> {
  static std::string get() { return TypeName<T>::get() + "[" + std::to_string(N) + "]"; }
};

struct Field {
  std::string name;
  size_t offset, size;
  std::string type;
};

struct Struct {
  std::string name;
  size_t size;
  std::vector<Field> fields;
};

#define TW_FIELD(S, f) \
  Field{#f, offsetof(S, f), sizeof(static_cast<S*>(nullptr)->f), TypeName<decltype(S::f)>::get()},

std::vector<Struct> structs() {
  std::vector<Struct> out;
#define STRUCT(S, ...) out.push_back(Struct{#S, sizeof(S), {__VA_ARGS__}});
#define F(S, f) TW_FIELD(S, f)
  STRUCT(FileHeader, F(FileHeader, magic) F(FileHeader, format_version) F(FileHeader, record_size)
         F(FileHeader, header_size) F(FileHeader, pid) F(FileHeader, host_start_ns)
         F(FileHeader, boottime_minus_monotonic_ns) F(FileHeader, parent_pid) F(FileHeader, flags)
         F(FileHeader, reserved) F(FileHeader, reserved2) F(FileHeader, header_crc32))
  STRUCT(ChunkHeader, F(ChunkHeader, magic) F(ChunkHeader, type) F(ChunkHeader, header_size)
         F(ChunkHeader, payload_bytes) F(ChunkHeader, item_count) F(ChunkHeader, seq) F(ChunkHeader, payload_crc32)
         F(ChunkHeader, header_crc32))
  STRUCT(StringEntry, F(StringEntry, key) F(StringEntry, key_kind) F(StringEntry, byte_len))
  STRUCT(HipLaunch, F(HipLaunch, kind) F(HipLaunch, api) F(HipLaunch, tid) F(HipLaunch, host_enter_ns)
         F(HipLaunch, host_exit_ns) F(HipLaunch, launch_id) F(HipLaunch, function) F(HipLaunch, stream)
         F(HipLaunch, result) F(HipLaunch, grid_blocks) F(HipLaunch, block_threads) F(HipLaunch, shared_mem_bytes))
  STRUCT(HipSync, F(HipSync, kind) F(HipSync, api) F(HipSync, tid) F(HipSync, host_enter_ns) F(HipSync, host_exit_ns)
         F(HipSync, stream) F(HipSync, result) F(HipSync, pad) F(HipSync, reserved))
  STRUCT(HipDispatch, F(HipDispatch, kind) F(HipDispatch, time_domain) F(HipDispatch, tid) F(HipDispatch, start)
         F(HipDispatch, end) F(HipDispatch, correlation_external) F(HipDispatch, dispatch_id)
         F(HipDispatch, agent_handle) F(HipDispatch, queue_handle) F(HipDispatch, kernel_id))
// the shared amdxdna header, listed by the same macro format.h declares it with (TW_CUR is the struct)
#define TW_HEADER_FIELD(type, name) TW_FIELD(TW_CUR, name)
#define X(S, aux) TW_XDNA_HEADER_FIELDS(TW_HEADER_FIELD, aux)
#undef TW_CUR
#define TW_CUR XdnaPrefix
  STRUCT(XdnaPrefix, X(XdnaPrefix, aux))
#undef TW_CUR
#define TW_CUR XdnaDevice
  STRUCT(XdnaDevice, X(XdnaDevice, aux) F(XdnaDevice, version_major) F(XdnaDevice, version_minor)
         F(XdnaDevice, version_patch) F(XdnaDevice, reserved0) F(XdnaDevice, reserved))
#undef TW_CUR
#define TW_CUR XdnaHwctxCreate
  STRUCT(XdnaHwctxCreate, X(XdnaHwctxCreate, aux) F(XdnaHwctxCreate, hwctx) F(XdnaHwctxCreate, syncobj)
         F(XdnaHwctxCreate, max_opc) F(XdnaHwctxCreate, num_tiles) F(XdnaHwctxCreate, mem_size)
         F(XdnaHwctxCreate, request_size) F(XdnaHwctxCreate, reserved))
#undef TW_CUR
#define TW_CUR XdnaHwctxDestroy
  STRUCT(XdnaHwctxDestroy, X(XdnaHwctxDestroy, aux) F(XdnaHwctxDestroy, hwctx) F(XdnaHwctxDestroy, pad)
         F(XdnaHwctxDestroy, reserved))
#undef TW_CUR
#define TW_CUR XdnaExecCmd
  STRUCT(XdnaExecCmd, X(XdnaExecCmd, aux) F(XdnaExecCmd, hwctx) F(XdnaExecCmd, type) F(XdnaExecCmd, seq)
         F(XdnaExecCmd, cmd_count) F(XdnaExecCmd, arg_count) F(XdnaExecCmd, first_cmd_handle)
         F(XdnaExecCmd, request_size))
#undef TW_CUR
#define TW_CUR XdnaSyncobjWait
  STRUCT(XdnaSyncobjWait, X(XdnaSyncobjWait, index) F(XdnaSyncobjWait, syncobj) F(XdnaSyncobjWait, flags)
         F(XdnaSyncobjWait, point) F(XdnaSyncobjWait, timeout_abs_ns) F(XdnaSyncobjWait, count_handles)
         F(XdnaSyncobjWait, first_signaled))
#undef TW_CUR
#define TW_CUR XdnaWaitCmd
  STRUCT(XdnaWaitCmd, X(XdnaWaitCmd, aux) F(XdnaWaitCmd, hwctx) F(XdnaWaitCmd, timeout_ms) F(XdnaWaitCmd, seq)
         F(XdnaWaitCmd, reserved))
#undef TW_CUR
#define TW_CUR XdnaSyncBo
  STRUCT(XdnaSyncBo, X(XdnaSyncBo, aux) F(XdnaSyncBo, bo) F(XdnaSyncBo, direction) F(XdnaSyncBo, offset)
         F(XdnaSyncBo, size) F(XdnaSyncBo, reserved))
#undef TW_CUR
#define TW_CUR XdnaUnknownIoctl
  STRUCT(XdnaUnknownIoctl, X(XdnaUnknownIoctl, aux) F(XdnaUnknownIoctl, request) F(XdnaUnknownIoctl, nr)
         F(XdnaUnknownIoctl, size) F(XdnaUnknownIoctl, dir) F(XdnaUnknownIoctl, reserved))
#undef X
#undef TW_CUR
  STRUCT(ClockSample, F(ClockSample, kind) F(ClockSample, domain) F(ClockSample, tid) F(ClockSample, host_before_ns)
         F(ClockSample, host_after_ns) F(ClockSample, device_value) F(ClockSample, tries) F(ClockSample, reason)
         F(ClockSample, sample_seq) F(ClockSample, reserved))
  STRUCT(ThreadStats, F(ThreadStats, kind) F(ThreadStats, flags) F(ThreadStats, tid) F(ThreadStats, host_ns)
         F(ThreadStats, pushed_total) F(ThreadStats, dropped_total) F(ThreadStats, ring_records)
         F(ThreadStats, reserved))
  STRUCT(CudaKernel, F(CudaKernel, kind) F(CudaKernel, time_domain) F(CudaKernel, tid) F(CudaKernel, start)
         F(CudaKernel, end) F(CudaKernel, correlation_id) F(CudaKernel, device_id) F(CudaKernel, stream_id)
         F(CudaKernel, context_id) F(CudaKernel, name_key) F(CudaKernel, grid_blocks) F(CudaKernel, block_threads)
         F(CudaKernel, shared_mem_bytes) F(CudaKernel, registers_per_thread) F(CudaKernel, flags))
  STRUCT(CudaMemcpy, F(CudaMemcpy, kind) F(CudaMemcpy, time_domain) F(CudaMemcpy, tid) F(CudaMemcpy, start)
         F(CudaMemcpy, end) F(CudaMemcpy, correlation_id) F(CudaMemcpy, device_id) F(CudaMemcpy, stream_id)
         F(CudaMemcpy, context_id) F(CudaMemcpy, bytes) F(CudaMemcpy, runtime_correlation_id)
         F(CudaMemcpy, copy_kind) F(CudaMemcpy, src_kind) F(CudaMemcpy, dst_kind) F(CudaMemcpy, cupti_flags)
         F(CudaMemcpy, reserved))
  STRUCT(CudaMemset, F(CudaMemset, kind) F(CudaMemset, time_domain) F(CudaMemset, tid) F(CudaMemset, start)
         F(CudaMemset, end) F(CudaMemset, correlation_id) F(CudaMemset, device_id) F(CudaMemset, stream_id)
         F(CudaMemset, context_id) F(CudaMemset, bytes) F(CudaMemset, value) F(CudaMemset, memory_kind)
         F(CudaMemset, cupti_flags) F(CudaMemset, reserved))
  STRUCT(CudaApi, F(CudaApi, kind) F(CudaApi, api_class) F(CudaApi, tid) F(CudaApi, host_enter_ns)
         F(CudaApi, host_exit_ns) F(CudaApi, correlation_id) F(CudaApi, cbid) F(CudaApi, domain) F(CudaApi, result)
         F(CudaApi, stream) F(CudaApi, flags) F(CudaApi, time_domain) F(CudaApi, pad) F(CudaApi, reserved))
  STRUCT(CudaName, F(CudaName, kind) F(CudaName, name_kind) F(CudaName, tid) F(CudaName, key) F(CudaName, total_len)
         F(CudaName, offset) F(CudaName, text))
#undef F
#undef STRUCT
  return out;
}

struct KindEntry {
  Kind kind;
  const char* name;  // the reader's name of the kind
  const char* st;    // its struct
};

// every Kind of format.h with its struct; kind_count() below makes a Kind added to
// format.h without an entry here a compile error
constexpr KindEntry kKinds[] = {
    {Kind::kHipLaunch, "hip_launch", "HipLaunch"},
    {Kind::kHipSync, "hip_sync", "HipSync"},
    {Kind::kHipDispatch, "hip_dispatch", "HipDispatch"},
    {Kind::kXdnaDevice, "xdna_device", "XdnaDevice"},
    {Kind::kXdnaHwctxCreate, "xdna_hwctx_create", "XdnaHwctxCreate"},
    {Kind::kXdnaHwctxDestroy, "xdna_hwctx_destroy", "XdnaHwctxDestroy"},
    {Kind::kXdnaExecCmd, "xdna_exec_cmd", "XdnaExecCmd"},
    {Kind::kXdnaSyncobjTimelineWait, "xdna_syncobj_timeline_wait", "XdnaSyncobjWait"},
    {Kind::kXdnaWaitCmd, "xdna_wait_cmd", "XdnaWaitCmd"},
    {Kind::kXdnaSyncBo, "xdna_sync_bo", "XdnaSyncBo"},
    {Kind::kXdnaUnknownIoctl, "xdna_unknown_ioctl", "XdnaUnknownIoctl"},
    {Kind::kXdnaSyncobjWait, "xdna_syncobj_wait", "XdnaSyncobjWait"},
    {Kind::kClockSample, "clock_sample", "ClockSample"},
    {Kind::kThreadStats, "thread_stats", "ThreadStats"},
    {Kind::kCudaKernel, "cuda_kernel", "CudaKernel"},
    {Kind::kCudaMemcpy, "cuda_memcpy", "CudaMemcpy"},
    {Kind::kCudaMemset, "cuda_memset", "CudaMemset"},
    {Kind::kCudaApi, "cuda_api", "CudaApi"},
    {Kind::kCudaName, "cuda_name", "CudaName"},
};

// A switch over Kind with no default: -Werror=switch (set for this file in
// CMakeLists.txt) fails the build when format.h gains a Kind this tool lacks.
constexpr bool listed(Kind k) {
  switch (k) {
    case Kind::kHipLaunch: case Kind::kHipSync: case Kind::kHipDispatch: case Kind::kXdnaDevice:
    case Kind::kXdnaHwctxCreate: case Kind::kXdnaHwctxDestroy: case Kind::kXdnaExecCmd:
    case Kind::kXdnaSyncobjTimelineWait: case Kind::kXdnaWaitCmd: case Kind::kXdnaSyncBo:
    case Kind::kXdnaUnknownIoctl: case Kind::kXdnaSyncobjWait: case Kind::kClockSample: case Kind::kThreadStats:
    case Kind::kCudaKernel: case Kind::kCudaMemcpy: case Kind::kCudaMemset: case Kind::kCudaApi:
    case Kind::kCudaName:
      return true;
  }
  return false;
}
constexpr bool all_listed() {
  for (const auto& k : kKinds)
    if (!listed(k.kind)) return false;
  return sizeof(kKinds) / sizeof(kKinds[0]) == 19;
}
static_assert(all_listed(), "kKinds must list every Kind once");

std::string render(std::string& problems) {
  std::ostringstream o;
  const auto all = structs();
  o << "{\n  \"generated_by\": \"native/tools/tw_layout.cpp from native/include/tickwise/format.h; regenerate: "
       "native/build/bin/tw-layout > native/layout.json\",\n";
  o << "  \"format_version\": " << kFormatVersion << ",\n  \"record_size\": " << kRecordSize
    << ",\n  \"file_magic\": \"" << std::string(kFileMagic, 7) << "\",\n  \"chunk_magic\": " << kChunkMagic
    << ",\n  \"chunk_types\": {\"records\": " << unsigned(ChunkType::kRecords)
    << ", \"strings\": " << unsigned(ChunkType::kStrings) << "},\n  \"structs\": {\n";
  for (size_t s = 0; s < all.size(); ++s) {
    const Struct& st = all[s];
    o << "    \"" << st.name << "\": {\"size\": " << st.size << ", \"fields\": [\n";
    size_t at = 0;
    for (size_t i = 0; i < st.fields.size(); ++i) {
      const Field& f = st.fields[i];
      if (f.offset != at)
        problems += st.name + ": bytes " + std::to_string(at) + ".." + std::to_string(f.offset) +
                    " are in no listed field (is a field of format.h missing from tw_layout.cpp?)\n";
      at = f.offset + f.size;
      o << "      {\"name\": \"" << f.name << "\", \"offset\": " << f.offset << ", \"size\": " << f.size
        << ", \"type\": \"" << f.type << "\"}" << (i + 1 < st.fields.size() ? "," : "") << "\n";
    }
    if (at != st.size)
      problems += st.name + ": listed fields end at byte " + std::to_string(at) + " of " + std::to_string(st.size) + "\n";
    o << "    ]}" << (s + 1 < all.size() ? "," : "") << "\n";
  }
  o << "  },\n  \"kinds\": [\n";
  const size_t n = sizeof(kKinds) / sizeof(kKinds[0]);
  for (size_t i = 0; i < n; ++i)
    o << "    {\"kind\": " << unsigned(kKinds[i].kind) << ", \"name\": \"" << kKinds[i].name << "\", \"struct\": \""
      << kKinds[i].st << "\"}" << (i + 1 < n ? "," : "") << "\n";
  o << "  ]\n}\n";
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string problems;
  const std::string text = render(problems);
  if (!problems.empty()) {
    fprintf(stderr, "tw-layout: %s", problems.c_str());
    return 1;
  }
  if (argc == 3 && strcmp(argv[1], "--check") == 0) {
    std::ifstream in(argv[2]);
    std::stringstream committed;
    committed << in.rdbuf();
    if (committed.str() == text) return 0;
    fprintf(stderr,
            "tw-layout: %s differs from the layout of format.h; regenerate it (native/build/bin/tw-layout > %s), "
            "then update packages/capture/src/readers/recorder-layout.ts and native/FORMAT.md to match\n",
            argv[2], argv[2]);
    return 1;
  }
  if (argc != 1) {
    fprintf(stderr, "usage: tw-layout [--check native/layout.json]\n");
    return 2;
  }
  fputs(text.c_str(), stdout);
  return 0;
}
