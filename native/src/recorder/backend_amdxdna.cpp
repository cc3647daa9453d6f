// amdxdna backend: interposes ioctl() and recognises amdxdna device fds by the
// driver name DRM_IOCTL_VERSION returns (not by path). Records hw-context
// creation (and its timeline syncobj), EXEC_CMD (enter, exit, seq), the
// completion the host observes (timeline syncobj waits, WAIT_CMD), SYNC_BO,
// and any amdxdna request whose (nr, size) is not in the known table.
//
// Deliberately not including <sys/ioctl.h>: this file defines ioctl().
#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstring>

#include "abi/amdxdna_abi.h"
#include "recorder/json.h"
#include "recorder/recorder.h"

namespace tickwise::rec {
namespace {

namespace abi = tickwise::abi;

using ioctl_fn = int (*)(int, unsigned long, ...);
using close_fn = int (*)(int);
using dup2_fn = int (*)(int, int);
using dup3_fn = int (*)(int, int, int);

enum : uint8_t { kFdUnknown = 0, kFdOther = 1, kFdXdna = 2 };
constexpr int kMaxFd = 1 << 16;  // fds above this are passed through unrecorded
std::atomic<uint8_t> g_fd_class[kMaxFd];

std::atomic<uint64_t> g_xdna_fds{0}, g_unknown{0}, g_recorded{0};

ioctl_fn real_ioctl() {
  static const ioctl_fn f = reinterpret_cast<ioctl_fn>(dlsym(RTLD_NEXT, "ioctl"));
  return f;
}

inline int result_of(int rc, int err) { return rc == -1 ? -err : rc; }

void fill_prefix(fmt::Record& rec, fmt::Kind kind, ThreadState* t, int fd, uint64_t enter, uint64_t exit, int rc) {
  auto& p = rec.xdna;
  p.kind = uint16_t(kind);
  p.tid = t->tid;
  p.host_enter_ns = enter;
  p.host_exit_ns = exit;
  p.fd = fd;
  p.result = rc;
}

uint8_t classify(ioctl_fn real, int fd, ThreadState* t) {
  uint8_t c = g_fd_class[fd].load(std::memory_order_relaxed);
  if (c != kFdUnknown) return c;
  char name[32] = {};
  abi::DrmVersion v{};
  v.name = name;
  v.name_len = sizeof name - 1;
  const int saved = errno;
  const uint64_t enter = host_stamp();
  const int rc = real(fd, abi::kDrmIoctlVersion, &v);
  const uint64_t exit = host_stamp();
  errno = saved;
  const bool is = rc == 0 && v.name_len == 7 && memcmp(name, "amdxdna", 7) == 0;
  c = is ? kFdXdna : kFdOther;
  g_fd_class[fd].store(c, std::memory_order_relaxed);
  if (is && t) {
    g_xdna_fds.fetch_add(1, std::memory_order_relaxed);
    fmt::Record rec{};
    fill_prefix(rec, fmt::Kind::kXdnaDevice, t, fd, enter, exit, rc);
    rec.xdna_device.version_major = uint32_t(v.version_major);
    rec.xdna_device.version_minor = uint32_t(v.version_minor);
    rec.xdna_device.version_patch = uint32_t(v.version_patchlevel);
    emit(t, rec);
  }
  return c;
}

constexpr size_t kMaxWaitPairs = 16;

int timeline_wait(ioctl_fn real, ThreadState* t, int fd, unsigned long req, void* arg, bool timeline) {
  uint32_t handles[kMaxWaitPairs] = {};
  uint64_t points[kMaxWaitPairs] = {};
  uint32_t count = 0, flags = 0;
  int64_t timeout = 0;
  if (timeline) {
    const auto* w = static_cast<const abi::DrmSyncobjTimelineWait*>(arg);
    count = w->count_handles;
    flags = w->flags;
    timeout = w->timeout_nsec;
    const uint32_t n = count < kMaxWaitPairs ? count : kMaxWaitPairs;
    if (w->handles) memcpy(handles, reinterpret_cast<const void*>(w->handles), n * sizeof(uint32_t));
    if (w->points) memcpy(points, reinterpret_cast<const void*>(w->points), n * sizeof(uint64_t));
  } else {
    const auto* w = static_cast<const abi::DrmSyncobjWait*>(arg);
    count = w->count_handles;
    flags = w->flags;
    timeout = w->timeout_nsec;
    const uint32_t n = count < kMaxWaitPairs ? count : kMaxWaitPairs;
    if (w->handles) memcpy(handles, reinterpret_cast<const void*>(w->handles), n * sizeof(uint32_t));
  }
  const uint64_t enter = host_stamp();
  const int rc = real(fd, req, arg);
  const int err = errno;
  const uint64_t exit = host_stamp();
  const uint32_t first = timeline ? static_cast<const abi::DrmSyncobjTimelineWait*>(arg)->first_signaled
                                  : static_cast<const abi::DrmSyncobjWait*>(arg)->first_signaled;
  const uint32_t n = count < kMaxWaitPairs ? count : kMaxWaitPairs;
  for (uint32_t i = 0; i < n; ++i) {
    fmt::Record rec{};
    fill_prefix(rec, timeline ? fmt::Kind::kXdnaSyncobjTimelineWait : fmt::Kind::kXdnaSyncobjWait, t, fd, enter, exit,
                result_of(rc, err));
    auto& w = rec.xdna_wait;
    w.index = uint16_t(i);
    w.syncobj = handles[i];
    w.flags = flags;
    w.point = points[i];
    w.timeout_abs_ns = timeout;
    w.count_handles = count;
    w.first_signaled = first;
    emit(t, rec);
  }
  g_recorded.fetch_add(n, std::memory_order_relaxed);
  errno = err;
  return rc;
}

int xdna_ioctl(ioctl_fn real, int fd, unsigned long req, void* arg) {
  const uint8_t cls = g_fd_class[fd].load(std::memory_order_relaxed);
  if (cls == kFdOther) return real(fd, req, arg);
  ThreadState* t = app_thread_state();
  if (!t || t->busy) return real(fd, req, arg);
  if (cls == kFdUnknown && classify(real, fd, t) != kFdXdna) return real(fd, req, arg);
  const uint32_t nr = abi::ioc_nr(req), size = abi::ioc_size(req);

  if (nr == abi::kDrmSyncobjTimelineWaitNr && (size == 40 || size == 48) && arg)
    return timeline_wait(real, t, fd, req, arg, true);
  if (nr == abi::kDrmSyncobjWaitNr && (size == 32 || size == 40) && arg)
    return timeline_wait(real, t, fd, req, arg, false);
  if (nr < abi::kDrmCommandBase || nr >= abi::kDrmCommandEnd) return real(fd, req, arg);  // other core DRM

  const abi::XdnaOp op = abi::xdna_lookup(req);
  fmt::Record rec{};
  uint64_t enter = 0;
  int rc = 0, err = 0;
  auto call = [&] {
    enter = host_stamp();
    rc = real(fd, req, arg);
    err = errno;
  };
  switch (op) {
    case abi::XdnaOp::kCreateHwctx: {
      call();
      const uint64_t exit = host_stamp();
      const auto* a = static_cast<const abi::AmdxdnaCreateHwctx*>(arg);
      fill_prefix(rec, fmt::Kind::kXdnaHwctxCreate, t, fd, enter, exit, result_of(rc, err));
      auto& h = rec.xdna_hwctx_create;
      h.hwctx = a->handle;
      h.syncobj = a->syncobj_handle;
      h.max_opc = a->max_opc;
      h.num_tiles = a->num_tiles;
      h.mem_size = a->mem_size;
      h.request_size = size;
      break;
    }
    case abi::XdnaOp::kDestroyHwctx: {
      const uint32_t handle = static_cast<const abi::AmdxdnaDestroyHwctx*>(arg)->handle;
      call();
      fill_prefix(rec, fmt::Kind::kXdnaHwctxDestroy, t, fd, enter, host_stamp(), result_of(rc, err));
      rec.xdna_hwctx_destroy.hwctx = handle;
      break;
    }
    case abi::XdnaOp::kExecCmd: {
      const auto* a = static_cast<const abi::AmdxdnaExecCmd*>(arg);
      const uint32_t hwctx = a->hwctx, type = a->type, cmd_count = a->cmd_count, arg_count = a->arg_count;
      const uint64_t handles = a->cmd_handles;
      call();
      const uint64_t exit = host_stamp();
      fill_prefix(rec, fmt::Kind::kXdnaExecCmd, t, fd, enter, exit, result_of(rc, err));
      auto& e = rec.xdna_exec;
      e.hwctx = hwctx;
      e.type = type;
      e.seq = a->seq;
      e.cmd_count = cmd_count;
      e.arg_count = arg_count;
      e.first_cmd_handle = cmd_count == 1 ? uint32_t(handles) : 0;
      e.request_size = size;
      break;
    }
    case abi::XdnaOp::kWaitCmd: {
      const auto* a = static_cast<const abi::AmdxdnaWaitCmd*>(arg);
      const uint32_t hwctx = a->hwctx, timeout = a->timeout;
      const uint64_t seq = a->seq;
      call();
      fill_prefix(rec, fmt::Kind::kXdnaWaitCmd, t, fd, enter, host_stamp(), result_of(rc, err));
      rec.xdna_wait_cmd.hwctx = hwctx;
      rec.xdna_wait_cmd.timeout_ms = timeout;
      rec.xdna_wait_cmd.seq = seq;
      break;
    }
    case abi::XdnaOp::kSyncBo: {
      const auto* a = static_cast<const abi::AmdxdnaSyncBo*>(arg);
      const abi::AmdxdnaSyncBo copy = *a;
      call();
      fill_prefix(rec, fmt::Kind::kXdnaSyncBo, t, fd, enter, host_stamp(), result_of(rc, err));
      rec.xdna_sync_bo.bo = copy.handle;
      rec.xdna_sync_bo.direction = copy.direction;
      rec.xdna_sync_bo.offset = copy.offset;
      rec.xdna_sync_bo.size = copy.size;
      break;
    }
    case abi::XdnaOp::kUnknown: {
      call();
      fill_prefix(rec, fmt::Kind::kXdnaUnknownIoctl, t, fd, enter, host_stamp(), result_of(rc, err));
      auto& u = rec.xdna_unknown;
      u.request = uint32_t(req);
      u.nr = nr;
      u.size = size;
      u.dir = abi::ioc_dir(req);
      g_unknown.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    default:
      return real(fd, req, arg);  // known, not recorded (CREATE_BO, GET_INFO, ...)
  }
  emit(t, rec);
  g_recorded.fetch_add(1, std::memory_order_relaxed);
  errno = err;
  return rc;
}

void forget_fd(int fd) {
  if (fd >= 0 && fd < kMaxFd) g_fd_class[fd].store(kFdUnknown, std::memory_order_relaxed);
}

void xdna_describe(JsonWriter& w) {
  w.key("devices_recognised").value(g_xdna_fds.load());
  w.key("requests_recorded").value(g_recorded.load());
  w.key("unknown_requests").value(g_unknown.load());
  w.key("recognised_by").value("DRM_IOCTL_VERSION name \"amdxdna\"");
  w.key("device_clock").value("none: completion is host-observed (syncobj wait / WAIT_CMD exit)");
  w.key("ioctl_table").begin_array();
  for (const auto& e : abi::kXdnaIoctlTable) {
    w.begin_object();
    w.key("nr").value(e.index + abi::kDrmCommandBase);
    w.key("size").value(e.size);
    w.key("op").value(unsigned(e.op));
    w.key("abi").value(e.abi);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

const BackendOps& amdxdna_backend() {
  static const BackendOps ops = {"amdxdna", true, nullptr, nullptr, nullptr, xdna_describe, nullptr, nullptr};
  return ops;
}

}  // namespace tickwise::rec

extern "C" __attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...) __THROW {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  using namespace tickwise::rec;
  const ioctl_fn real = real_ioctl();
  if (__builtin_expect(!real, 0)) {
    errno = ENOSYS;
    return -1;
  }
  if (tickwise::abi::ioc_type(request) != tickwise::abi::kDrmIoctlBase || unsigned(fd) >= unsigned(kMaxFd) ||
      !active(BackendId::kAmdxdna))
    return real(fd, request, arg);
  return xdna_ioctl(real, fd, request, arg);
}

extern "C" __attribute__((visibility("default"))) int close(int fd) {
  static const auto real = reinterpret_cast<tickwise::rec::close_fn>(dlsym(RTLD_NEXT, "close"));
  tickwise::rec::forget_fd(fd);
  return real(fd);
}

extern "C" __attribute__((visibility("default"))) int dup2(int oldfd, int newfd) __THROW {
  static const auto real = reinterpret_cast<tickwise::rec::dup2_fn>(dlsym(RTLD_NEXT, "dup2"));
  tickwise::rec::forget_fd(newfd);
  return real(oldfd, newfd);
}

extern "C" __attribute__((visibility("default"))) int dup3(int oldfd, int newfd, int flags) __THROW {
  static const auto real = reinterpret_cast<tickwise::rec::dup3_fn>(dlsym(RTLD_NEXT, "dup3"));
  tickwise::rec::forget_fd(newfd);
  return real(oldfd, newfd, flags);
}
