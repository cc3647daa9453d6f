// Hand-written declarations of the DRM and amdxdna ioctl structures that the
// recorder decodes and the fake device answers. Each mirrors the struct named
// above it from include/uapi/drm/drm.h or include/uapi/drm/amdxdna_accel.h
// (Linux mainline; WAIT_CMD from amd/xdna-driver's out-of-tree header).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tickwise::abi {

// _IOC encoding (asm-generic/ioctl.h): nr bits 0-7, type 8-15, size 16-29, dir 30-31.
constexpr uint32_t ioc_nr(unsigned long req) { return uint32_t(req & 0xFF); }
constexpr uint32_t ioc_type(unsigned long req) { return uint32_t((req >> 8) & 0xFF); }
constexpr uint32_t ioc_size(unsigned long req) { return uint32_t((req >> 16) & 0x3FFF); }
constexpr uint32_t ioc_dir(unsigned long req) { return uint32_t((req >> 30) & 0x3); }
constexpr unsigned long ioc(uint32_t dir, uint32_t type, uint32_t nr, uint32_t size) {
  return (unsigned long)((dir << 30) | (size << 16) | (type << 8) | nr);
}
constexpr uint32_t kIocWrite = 1, kIocRead = 2;
constexpr uint32_t kDrmIoctlBase = 'd';
constexpr uint32_t kDrmCommandBase = 0x40;  // DRM_COMMAND_BASE
constexpr uint32_t kDrmCommandEnd = 0xA0;   // DRM_COMMAND_END

// mirrors: struct drm_version { int version_major; int version_minor; int version_patchlevel;
//   __kernel_size_t name_len; char __user *name; __kernel_size_t date_len; char __user *date;
//   __kernel_size_t desc_len; char __user *desc; };
struct DrmVersion {
  int32_t version_major;
  int32_t version_minor;
  int32_t version_patchlevel;
  uint64_t name_len;
  char* name;
  uint64_t date_len;
  char* date;
  uint64_t desc_len;
  char* desc;
};
static_assert(sizeof(DrmVersion) == 64);
// DRM_IOCTL_VERSION = DRM_IOWR(0x00, struct drm_version)
constexpr unsigned long kDrmIoctlVersion = ioc(kIocWrite | kIocRead, kDrmIoctlBase, 0x00, sizeof(DrmVersion));

// mirrors: struct drm_syncobj_wait { __u64 handles; __s64 timeout_nsec; __u32 count_handles;
//   __u32 flags; __u32 first_signaled; __u32 pad; [__u64 deadline_nsec;] };  nr 0xC3, size 32 or 40
struct DrmSyncobjWait {
  uint64_t handles;
  int64_t timeout_nsec;
  uint32_t count_handles;
  uint32_t flags;
  uint32_t first_signaled;
  uint32_t pad;
  uint64_t deadline_nsec;  // only in the 40-byte version
};
constexpr uint32_t kDrmSyncobjWaitNr = 0xC3;

// mirrors: struct drm_syncobj_timeline_wait { __u64 handles; __u64 points; __u32 count_handles;
//   __u32 flags; __s64 timeout_nsec; __u32 first_signaled; __u32 pad; [__u64 deadline_nsec;] };
//   nr 0xCA, size 40 or 48
struct DrmSyncobjTimelineWait {
  uint64_t handles;
  uint64_t points;
  uint32_t count_handles;
  uint32_t flags;
  int64_t timeout_nsec;
  uint32_t first_signaled;
  uint32_t pad;
  uint64_t deadline_nsec;  // only in the 48-byte version
};
constexpr uint32_t kDrmSyncobjTimelineWaitNr = 0xCA;
constexpr uint32_t kDrmSyncobjWaitFlagsWaitAll = 1u << 0;
constexpr uint32_t kDrmSyncobjWaitFlagsWaitForSubmit = 1u << 1;

// mirrors: struct amdxdna_drm_create_hwctx { __u64 ext; __u64 ext_flags; __u64 qos_p; __u32 umq_bo;
//   __u32 log_buf_bo; __u32 max_opc; __u32 num_tiles; __u32 mem_size; __u32 umq_doorbell;
//   __u32 handle; __u32 syncobj_handle; };
struct AmdxdnaCreateHwctx {
  uint64_t ext;
  uint64_t ext_flags;
  uint64_t qos_p;
  uint32_t umq_bo;
  uint32_t log_buf_bo;
  uint32_t max_opc;
  uint32_t num_tiles;
  uint32_t mem_size;
  uint32_t umq_doorbell;
  uint32_t handle;
  uint32_t syncobj_handle;
};
static_assert(sizeof(AmdxdnaCreateHwctx) == 56);

// mirrors: struct amdxdna_drm_destroy_hwctx { __u32 handle; __u32 pad; };
struct AmdxdnaDestroyHwctx {
  uint32_t handle;
  uint32_t pad;
};
static_assert(sizeof(AmdxdnaDestroyHwctx) == 8);

// mirrors: struct amdxdna_drm_create_bo { __u64 flags; __u64 vaddr; __u64 size; __u32 type; __u32 handle; };
struct AmdxdnaCreateBo {
  uint64_t flags;
  uint64_t vaddr;
  uint64_t size;
  uint32_t type;
  uint32_t handle;
};
static_assert(sizeof(AmdxdnaCreateBo) == 32);

// mirrors: struct amdxdna_drm_sync_bo { __u32 handle; __u32 direction; __u64 offset; __u64 size; };
struct AmdxdnaSyncBo {
  uint32_t handle;
  uint32_t direction;
  uint64_t offset;
  uint64_t size;
};
static_assert(sizeof(AmdxdnaSyncBo) == 24);

// mirrors: struct amdxdna_drm_exec_cmd { __u64 ext; __u64 ext_flags; __u32 hwctx; __u32 type;
//   __u64 cmd_handles; __u64 args; __u32 cmd_count; __u32 arg_count; __u64 seq; };
struct AmdxdnaExecCmd {
  uint64_t ext;
  uint64_t ext_flags;
  uint32_t hwctx;
  uint32_t type;
  uint64_t cmd_handles;
  uint64_t args;
  uint32_t cmd_count;
  uint32_t arg_count;
  uint64_t seq;
};
static_assert(sizeof(AmdxdnaExecCmd) == 56);

// mirrors (amd/xdna-driver, out of tree): struct amdxdna_drm_wait_cmd { __u32 hwctx; __u32 timeout; __u64 seq; };
struct AmdxdnaWaitCmd {
  uint32_t hwctx;
  uint32_t timeout;  // ms, 0 = infinite
  uint64_t seq;
};
static_assert(sizeof(AmdxdnaWaitCmd) == 16);

/// The amdxdna operations tickwise knows. kUnknown: type/nr/size matched no table entry.
enum class XdnaOp : uint8_t {
  kUnknown = 0,
  kCreateHwctx,
  kDestroyHwctx,
  kConfigHwctx,
  kCreateBo,
  kGetBoInfo,
  kSyncBo,
  kExecCmd,
  kGetInfo,
  kSetState,
  kWaitCmd,
  kGetArray,
};

/// One known (nr, size) pair: nr is the index above DRM_COMMAND_BASE.
struct XdnaIoctlEntry {
  uint32_t index;  // nr - DRM_COMMAND_BASE
  uint32_t size;
  XdnaOp op;
  const char* abi;  // where the pair comes from
};

// Requests are matched by type 'd', nr and the size field, never by the whole
// request value (direction bits changed for WAIT_CMD; sizes changed across
// versions). A pair absent here is recorded as unknown, not guessed.
inline constexpr XdnaIoctlEntry kXdnaIoctlTable[] = {
    {0, 56, XdnaOp::kCreateHwctx, "mainline (6.14+)"},
    {1, 8, XdnaOp::kDestroyHwctx, "mainline (6.14+)"},
    {2, 24, XdnaOp::kConfigHwctx, "mainline (6.14+)"},
    {3, 32, XdnaOp::kCreateBo, "mainline (6.14+)"},
    {4, 48, XdnaOp::kGetBoInfo, "mainline (6.14+)"},
    {5, 24, XdnaOp::kSyncBo, "mainline (6.14+)"},
    {6, 56, XdnaOp::kExecCmd, "mainline (6.14+)"},
    {7, 16, XdnaOp::kGetInfo, "mainline (6.14+)"},
    {8, 16, XdnaOp::kSetState, "mainline (6.14+)"},
    {9, 16, XdnaOp::kWaitCmd, "amd/xdna-driver out-of-tree"},
    {10, 24, XdnaOp::kGetArray, "mainline (6.18+)"},
    // Early out-of-tree headers numbered EXEC_CMD 7 with the same 56-byte
    // struct; the size tells it apart from GET_INFO (16 bytes).
    {7, 56, XdnaOp::kExecCmd, "early out-of-tree"},
};

inline XdnaOp xdna_lookup(unsigned long req) {
  const uint32_t nr = ioc_nr(req), size = ioc_size(req);
  if (nr < kDrmCommandBase || nr >= kDrmCommandEnd) return XdnaOp::kUnknown;
  for (const auto& e : kXdnaIoctlTable)
    if (e.index == nr - kDrmCommandBase && e.size == size) return e.op;
  return XdnaOp::kUnknown;
}

constexpr unsigned long xdna_request(uint32_t index, uint32_t size, uint32_t dir = kIocWrite | kIocRead) {
  return ioc(dir, kDrmIoctlBase, kDrmCommandBase + index, size);
}

}  // namespace tickwise::abi
