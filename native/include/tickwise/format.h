// tickwise recorder: on-disk format of a capture's record file (records.twr).
//
// This header is the single source of truth for the layout; native/FORMAT.md
// documents the same layout for readers in other languages. Every struct is
// little-endian, naturally aligned, and checked with static_assert.
//
// Units: a field ending in `_ns` is CLOCK_MONOTONIC nanoseconds (the host
// timeline) unless FORMAT.md says otherwise for that kind; device values are
// raw and named for their domain (`device_value`, `start`, `end` with a
// `time_domain` beside them).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tickwise::fmt {

constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kRecordSize = 64;
constexpr char kFileMagic[8] = {'T', 'W', 'R', 'E', 'C', 'v', '1', '\0'};
constexpr uint32_t kChunkMagic = 0x4B435754u;  // bytes "TWCK"

/// File header: the first 64 bytes of records.twr.
struct FileHeader {
  char magic[8];                        //  0 "TWRECv1\0"
  uint32_t format_version;              //  8
  uint32_t record_size;                 // 12 (64)
  uint32_t header_size;                 // 16 (64)
  uint32_t pid;                         // 20
  uint64_t host_start_ns;               // 24 CLOCK_MONOTONIC at capture start
  int64_t boottime_minus_monotonic_ns;  // 32 CLOCK_BOOTTIME - CLOCK_MONOTONIC at start
  uint32_t parent_pid;                  // 40 pid of the process this one forked from, or 0
  uint32_t flags;                       // 44 bit 0: this capture belongs to a forked child
  uint64_t reserved;                    // 48
  uint32_t reserved2;                   // 56
  uint32_t header_crc32;                // 60 CRC-32 (IEEE) of bytes 0..59
};
static_assert(sizeof(FileHeader) == 64);
static_assert(offsetof(FileHeader, header_crc32) == 60);

enum class ChunkType : uint16_t {
  kRecords = 1,  // payload: item_count records of 64 bytes
  kStrings = 2,  // payload: item_count StringEntry + bytes, each padded to 8
};

/// Chunk header: precedes every chunk's payload.
struct ChunkHeader {
  uint32_t magic;          //  0 kChunkMagic
  uint16_t type;           //  4 ChunkType
  uint16_t header_size;    //  6 (32)
  uint32_t payload_bytes;  //  8
  uint32_t item_count;     // 12
  uint64_t seq;            // 16 0, 1, 2, ... per file
  uint32_t payload_crc32;  // 24 CRC-32 (IEEE) of the payload
  uint32_t header_crc32;   // 28 CRC-32 of bytes 0..27
};
static_assert(sizeof(ChunkHeader) == 32);

/// One string of a kStrings chunk; `byte_len` UTF-8 bytes follow (no NUL),
/// then zero padding up to a multiple of 8.
struct StringEntry {
  uint64_t key;       // the value that records carry (a function handle, ...)
  uint32_t key_kind;  // StringKeyKind
  uint32_t byte_len;
};
static_assert(sizeof(StringEntry) == 16);

enum class StringKeyKind : uint32_t {
  kHipFunction = 1,      // hipFunction_t of the module API (HipLaunch.function)
  kHipHostFunction = 2,  // host stub address of hipLaunchKernel & co (HipLaunch.function)
};
// The cuda backend carries its names in-band (CudaName records), not in
// kStrings chunks: the strings writer of the core only knows HipLaunch keys.

enum class Kind : uint16_t {
  kHipLaunch = 1,
  kHipSync = 2,
  kHipDispatch = 3,
  kXdnaDevice = 16,
  kXdnaHwctxCreate = 17,
  kXdnaHwctxDestroy = 18,
  kXdnaExecCmd = 19,
  kXdnaSyncobjTimelineWait = 20,
  kXdnaWaitCmd = 21,
  kXdnaSyncBo = 22,
  kXdnaUnknownIoctl = 23,
  kXdnaSyncobjWait = 24,
  kClockSample = 32,
  kThreadStats = 33,
  kCudaKernel = 48,   // a kernel execution (CUPTI CONCURRENT_KERNEL activity)
  kCudaMemcpy = 49,   // a memory copy (CUPTI MEMCPY activity)
  kCudaMemset = 50,   // a memset (CUPTI MEMSET activity)
  kCudaApi = 51,      // a launch / synchronize / memcpy / memset API call (CUPTI callback API)
  kCudaName = 52,     // a fragment of a name that CudaKernel / CudaApi records carry as a key
};

/// Which launch entry point a HipLaunch came through.
enum class HipApi : uint16_t {
  kLaunchKernel = 1,
  kModuleLaunchKernel = 2,
  kExtModuleLaunchKernel = 3,
  kLaunchKernelExC = 4,
  kGraphLaunch = 5,
  kExtLaunchKernel = 6,
  kLaunchCooperativeKernel = 7,
  kDeviceSynchronize = 32,
  kStreamSynchronize = 33,
};

/// Clock domain ids (meta.json "clock_domains" describes each one).
enum class Domain : uint16_t {
  kHostMonotonic = 0,  // ns, the host timeline
  kHostBoottime = 1,   // ns, CLOCK_BOOTTIME
  kCuptiTimestamp = 2, // ns, CUPTI's normalized clock (cuptiGetTimestamp); CLOCK_REALTIME unless the
                       // recorder registered its timestamp callback (then CudaKernel & co use kHostMonotonic)
  kHipDevice0 = 16,    // raw ticks of HIP device 0; device d is 16 + d
};

enum class ClockReason : uint32_t { kStart = 0, kPeriodic = 1, kExit = 2 };

// ---- records: 64 bytes each, common prefix kind/aux/tid -------------------

struct RecordPrefix {
  uint16_t kind;  // Kind
  uint16_t aux;   // kind-specific (api, domain, index)
  uint32_t tid;   // kernel thread id (gettid) of the producing thread
};

struct HipLaunch {
  uint16_t kind;             //  0 kHipLaunch
  uint16_t api;              //  2 HipApi
  uint32_t tid;              //  4
  uint64_t host_enter_ns;    //  8
  uint64_t host_exit_ns;     // 16
  uint64_t launch_id;        // 24 unique per process; = rocprofiler external correlation id
  uint64_t function;         // 32 hipFunction_t, host stub address, or hipGraphExec_t
  uint64_t stream;           // 40 hipStream_t (0 = null stream)
  int32_t result;            // 48 hipError_t returned
  uint32_t grid_blocks;      // 52 gridDim.x*y*z (saturated to 2^32-1)
  uint32_t block_threads;    // 56 blockDim.x*y*z (saturated)
  uint32_t shared_mem_bytes; // 60 dynamic shared memory (saturated)
};

struct HipSync {
  uint16_t kind;           //  0 kHipSync
  uint16_t api;            //  2 HipApi (kDeviceSynchronize, kStreamSynchronize)
  uint32_t tid;            //  4
  uint64_t host_enter_ns;  //  8
  uint64_t host_exit_ns;   // 16
  uint64_t stream;         // 24
  int32_t result;          // 32
  uint32_t pad;            // 36
  uint64_t reserved[3];    // 40
};

/// A kernel execution as rocprofiler-sdk's buffered KERNEL_DISPATCH tracing
/// reports it. start/end are in `time_domain` (kHostBoottime ns for the SDK).
struct HipDispatch {
  uint16_t kind;                  //  0 kHipDispatch
  uint16_t time_domain;           //  2 Domain of start/end
  uint32_t tid;                   //  4 thread that launched (rocprofiler thread_id, truncated)
  uint64_t start;                 //  8
  uint64_t end;                   // 16
  uint64_t correlation_external;  // 24 = HipLaunch.launch_id (0 if none pushed)
  uint64_t dispatch_id;           // 32
  uint64_t agent_handle;          // 40 rocprofiler_agent_id_t
  uint64_t queue_handle;          // 48 rocprofiler_queue_id_t
  uint64_t kernel_id;             // 56 rocprofiler_kernel_id_t
};

/// The 32-byte header every amdxdna record (kinds 16..24) starts with, written
/// once here: each Xdna* struct below opens with TW_XDNA_HEADER_FIELDS, so the
/// header's fields cannot differ between kinds. `aux_name` is the name of the
/// u16 at offset 2 for that kind (`aux`, or `index` for the syncobj waits).
///   F(type, name) is called once per field, in order.
#define TW_XDNA_HEADER_FIELDS(F, aux_name)                                       \
  F(uint16_t, kind)          /*  0 Kind */                                      \
  F(uint16_t, aux_name)      /*  2 kind-specific */                             \
  F(uint32_t, tid)           /*  4 gettid of the calling thread */              \
  F(uint64_t, host_enter_ns) /*  8 before the ioctl */                          \
  F(uint64_t, host_exit_ns)  /* 16 after it returned */                         \
  F(int32_t, fd)             /* 24 */                                           \
  F(int32_t, result)         /* 28 ioctl return; -errno when it returned -1 */
#define TW_DECLARE_FIELD(type, name) type name;
#define TW_XDNA_HEADER(aux_name) TW_XDNA_HEADER_FIELDS(TW_DECLARE_FIELD, aux_name)

/// The amdxdna header alone: Record::xdna reads it for any amdxdna kind.
struct XdnaPrefix {
  TW_XDNA_HEADER(aux)
};
static_assert(sizeof(XdnaPrefix) == 32);

struct XdnaDevice {  // an fd recognised as amdxdna by DRM_IOCTL_VERSION
  TW_XDNA_HEADER(aux)
  uint32_t version_major;  // 32
  uint32_t version_minor;  // 36
  uint32_t version_patch;  // 40
  uint32_t reserved0;      // 44
  uint64_t reserved[2];    // 48
};

struct XdnaHwctxCreate {
  TW_XDNA_HEADER(aux)
  uint32_t hwctx;         // 32 returned handle
  uint32_t syncobj;       // 36 returned timeline syncobj handle
  uint32_t max_opc;       // 40
  uint32_t num_tiles;     // 44
  uint32_t mem_size;      // 48
  uint32_t request_size;  // 52 ioctl size field
  uint64_t reserved;      // 56
};

struct XdnaHwctxDestroy {
  TW_XDNA_HEADER(aux)
  uint32_t hwctx;  // 32
  uint32_t pad;
  uint64_t reserved[3];
};

struct XdnaExecCmd {
  TW_XDNA_HEADER(aux)
  uint32_t hwctx;             // 32
  uint32_t type;              // 36
  uint64_t seq;               // 40 returned point on the hwctx's timeline syncobj
  uint32_t cmd_count;         // 48
  uint32_t arg_count;         // 52
  uint32_t first_cmd_handle;  // 56 the handle when cmd_count == 1, else 0
  uint32_t request_size;      // 60
};

/// One (syncobj, point) pair of a DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT (one record
/// per pair, aux = index of the pair), or of a binary DRM_IOCTL_SYNCOBJ_WAIT
/// (kind kXdnaSyncobjWait, point 0).
struct XdnaSyncobjWait {
  TW_XDNA_HEADER(index)
  uint32_t syncobj;         // 32
  uint32_t flags;           // 36 DRM_SYNCOBJ_WAIT_FLAGS_*
  uint64_t point;           // 40
  int64_t timeout_abs_ns;   // 48 as passed: absolute CLOCK_MONOTONIC ns
  uint32_t count_handles;   // 56
  uint32_t first_signaled;  // 60 as returned
};

struct XdnaWaitCmd {
  TW_XDNA_HEADER(aux)
  uint32_t hwctx;       // 32
  uint32_t timeout_ms;  // 36
  uint64_t seq;         // 40
  uint64_t reserved[2];
};

struct XdnaSyncBo {
  TW_XDNA_HEADER(aux)
  uint32_t bo;          // 32
  uint32_t direction;   // 36
  uint64_t offset;      // 40 bytes
  uint64_t size;        // 48 bytes
  uint64_t reserved;
};

struct XdnaUnknownIoctl {
  TW_XDNA_HEADER(aux)
  uint32_t request;  // 32 full request value
  uint32_t nr;       // 36 _IOC_NR
  uint32_t size;     // 40 _IOC_SIZE
  uint32_t dir;      // 44 _IOC_DIR
  uint64_t reserved[2];
};

/// A clock-correlation triple: host before, device value, host after; the
/// narrowest bracket of `tries` attempts.
struct ClockSample {
  uint16_t kind;            //  0 kClockSample
  uint16_t domain;          //  2 Domain of device_value
  uint32_t tid;             //  4
  uint64_t host_before_ns;  //  8
  uint64_t host_after_ns;   // 16
  uint64_t device_value;    // 24 raw: ticks for device domains, ns for kHostBoottime
  uint32_t tries;           // 32
  uint32_t reason;          // 36 ClockReason
  uint64_t sample_seq;      // 40 per domain: 0, 1, 2, ...
  uint64_t reserved[2];
};

/// Per-thread counters, cumulative; the last record of a tid holds its totals.
struct ThreadStats {
  uint16_t kind;          //  0 kThreadStats
  uint16_t flags;         //  2 bit 0: the thread has exited; bit 1: final (capture end)
  uint32_t tid;           //  4 the thread the counters belong to
  uint64_t host_ns;       //  8 when written
  uint64_t pushed_total;  // 16 records the thread put into its ring
  uint64_t dropped_total; // 24 records lost because its ring was full
  uint64_t ring_records;  // 32 ring capacity
  uint64_t reserved[3];
};

/// Which API class a CudaApi record is (its aux).
enum class CudaApiClass : uint16_t { kLaunch = 1, kSync = 2, kMemcpy = 3, kMemset = 4, kGraphLaunch = 5 };

/// CUPTI callback domains a CudaApi record comes from (CUpti_CallbackDomain).
enum class CudaDomain : uint32_t { kDriver = 1, kRuntime = 2 };

/// What a CudaName record names (its aux).
enum class CudaNameKind : uint16_t {
  kKernel = 1,  // key = CudaKernel.name_key (FNV-1a 64 of the mangled name); text demangled where possible
  kApi = 2,     // key = (CudaDomain << 32) | cbid; text = the API function's name ("cudaLaunchKernel")
};

/// A kernel execution from CUPTI's CONCURRENT_KERNEL activity. start/end are
/// ns in `time_domain`: kHostMonotonic when CUPTI's timestamp callback is
/// ours (the normal case), else kCuptiTimestamp (fit with its clock samples).
struct CudaKernel {
  uint16_t kind;                // 0 kCudaKernel
  uint16_t time_domain;         // 2 Domain of start/end
  uint32_t tid;                 // 4 thread that delivered the CUPTI buffer (not the launching thread)
  uint64_t start;               // 8
  uint64_t end;                 // 16
  uint32_t correlation_id;      // 24 = CudaApi.correlation_id of the launch call
  uint32_t device_id;           // 28 CUDA device ordinal
  uint32_t stream_id;           // 32 CUPTI stream id (not the cudaStream_t)
  uint32_t context_id;          // 36 CUPTI context id
  uint64_t name_key;            // 40 CudaName key (kind kKernel)
  uint32_t grid_blocks;         // 48 gridX*Y*Z (saturated)
  uint32_t block_threads;       // 52 blockX*Y*Z (saturated)
  uint32_t shared_mem_bytes;    // 56 static + dynamic (saturated)
  uint16_t registers_per_thread;// 60
  uint16_t flags;               // 62 bit 0: launched from a CUDA graph; bit 1: device-launched
};

/// A memory copy from CUPTI's MEMCPY activity (times as CudaKernel).
struct CudaMemcpy {
  uint16_t kind;                    // 0 kCudaMemcpy
  uint16_t time_domain;             // 2
  uint32_t tid;                     // 4
  uint64_t start;                   // 8
  uint64_t end;                     // 16
  uint32_t correlation_id;          // 24 the driver call's correlation id
  uint32_t device_id;               // 28
  uint32_t stream_id;               // 32
  uint32_t context_id;              // 36
  uint64_t bytes;                   // 40
  uint32_t runtime_correlation_id;  // 48 the runtime call's, 0 if none
  uint8_t copy_kind;                // 52 CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, ...)
  uint8_t src_kind;                 // 53 CUpti_ActivityMemoryKind
  uint8_t dst_kind;                 // 54
  uint8_t cupti_flags;              // 55 CUpti_ActivityFlag bits (bit 0: async)
  uint64_t reserved;                // 56
};

/// A memset from CUPTI's MEMSET activity (times as CudaKernel).
struct CudaMemset {
  uint16_t kind;            // 0 kCudaMemset
  uint16_t time_domain;     // 2
  uint32_t tid;             // 4
  uint64_t start;           // 8
  uint64_t end;             // 16
  uint32_t correlation_id;  // 24
  uint32_t device_id;       // 28
  uint32_t stream_id;       // 32
  uint32_t context_id;      // 36
  uint64_t bytes;           // 40
  uint32_t value;           // 48
  uint16_t memory_kind;     // 52 CUpti_ActivityMemoryKind
  uint16_t cupti_flags;     // 54
  uint64_t reserved;        // 56
};

/// One API call seen through CUPTI's callback API, on the calling thread:
/// enter/exit bracket the call (taken inside CUPTI's enter/exit callbacks).
struct CudaApi {
  uint16_t kind;            //  0 kCudaApi
  uint16_t api_class;       //  2 CudaApiClass
  uint32_t tid;             //  4 the calling thread
  uint64_t host_enter_ns;   //  8
  uint64_t host_exit_ns;    // 16
  uint32_t correlation_id;  // 24 CUPTI's; = CudaKernel/CudaMemcpy/CudaMemset.correlation_id
  uint32_t cbid;            // 28 CUPTI callback id within the domain
  uint32_t domain;          // 32 CudaDomain
  int32_t result;           // 36 cudaError_t / CUresult returned
  uint64_t stream;          // 40 cudaStream_t / CUstream where the call names one (callback mode), else 0
  uint16_t flags;           // 48 bit 0: timed by CUPTI's API activity (tid = CUPTI's thread id), else by
                            //    the recorder's enter/exit callbacks (tid = gettid of the caller)
  uint16_t time_domain;     // 50 Domain of host_enter_ns/host_exit_ns: kHostMonotonic, or kCuptiTimestamp
                            //    when activity-timed and CUPTI's timestamp callback was unavailable
  uint32_t pad;             // 52
  uint64_t reserved;        // 56
};

/// A fragment of a name: names longer than 40 bytes span several records
/// with the same (aux, key); `offset` orders them.
struct CudaName {
  uint16_t kind;        //  0 kCudaName
  uint16_t name_kind;   //  2 CudaNameKind
  uint32_t tid;         //  4
  uint64_t key;         //  8
  uint32_t total_len;   // 16 bytes of the whole name (UTF-8, no NUL)
  uint32_t offset;      // 20 where this fragment starts
  char text[40];        // 24 min(40, total_len - offset) bytes, zero padded
};

struct Record {
  union {
    RecordPrefix prefix;
    HipLaunch hip_launch;
    HipSync hip_sync;
    HipDispatch hip_dispatch;
    XdnaPrefix xdna;
    XdnaDevice xdna_device;
    XdnaHwctxCreate xdna_hwctx_create;
    XdnaHwctxDestroy xdna_hwctx_destroy;
    XdnaExecCmd xdna_exec;
    XdnaSyncobjWait xdna_wait;
    XdnaWaitCmd xdna_wait_cmd;
    XdnaSyncBo xdna_sync_bo;
    XdnaUnknownIoctl xdna_unknown;
    ClockSample clock;
    ThreadStats thread_stats;
    CudaKernel cuda_kernel;
    CudaMemcpy cuda_memcpy;
    CudaMemset cuda_memset;
    CudaApi cuda_api;
    CudaName cuda_name;
    unsigned char bytes[64];
  };
};

static_assert(sizeof(HipLaunch) == 64 && sizeof(HipSync) == 64 && sizeof(HipDispatch) == 64);
static_assert(sizeof(XdnaDevice) == 64 && sizeof(XdnaHwctxCreate) == 64 && sizeof(XdnaHwctxDestroy) == 64);
static_assert(sizeof(XdnaExecCmd) == 64 && sizeof(XdnaSyncobjWait) == 64 && sizeof(XdnaWaitCmd) == 64);
static_assert(sizeof(XdnaSyncBo) == 64 && sizeof(XdnaUnknownIoctl) == 64);
static_assert(sizeof(ClockSample) == 64 && sizeof(ThreadStats) == 64 && sizeof(Record) == 64);
static_assert(offsetof(XdnaExecCmd, seq) == 40 && offsetof(XdnaSyncobjWait, timeout_abs_ns) == 48);
static_assert(sizeof(CudaKernel) == 64 && sizeof(CudaMemcpy) == 64 && sizeof(CudaMemset) == 64);
static_assert(sizeof(CudaApi) == 64 && sizeof(CudaName) == 64);
static_assert(offsetof(CudaKernel, name_key) == 40 && offsetof(CudaKernel, flags) == 62);
static_assert(offsetof(CudaMemcpy, runtime_correlation_id) == 48 && offsetof(CudaApi, stream) == 40);
static_assert(offsetof(CudaApi, flags) == 48 && offsetof(CudaApi, time_domain) == 50);
static_assert(offsetof(CudaName, text) == 24);
static_assert(offsetof(HipDispatch, kernel_id) == 56 && offsetof(HipLaunch, shared_mem_bytes) == 60);

}  // namespace tickwise::fmt
