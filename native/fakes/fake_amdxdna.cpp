// A fake amdxdna device, preloaded: open() of TICKWISE_FAKE_XDNA_PATH
// (/dev/accel/accel0) returns a real fd (a memfd) that this library answers
// ioctls on, like the driver: DRM_IOCTL_VERSION says "amdxdna"; CREATE_HWCTX
// returns a handle and a timeline syncobj; EXEC_CMD returns the next seq and
// the command completes TICKWISE_FAKE_XDNA_DELAY_US (200) after it may start
// (commands of one hw context run in order); DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
// DRM_IOCTL_SYNCOBJ_WAIT and WAIT_CMD block until completion or timeout.
// A rendezvous with another fake device (files, shared across processes):
// the process's first EXEC_CMD creates TICKWISE_FAKE_XDNA_STARTED_FILE (the
// command is in flight) and, with TICKWISE_FAKE_XDNA_HOLD_FILE set, holds the
// submission until that file exists (at most 30 s); the command then
// completes DELAY after. See fake_hip.cpp's START/IDLE files.
// Preload it AFTER the recorder (LD_PRELOAD=recorder:fake) so that the
// recorder's ioctl() sees the calls first.
//
// Deliberately not including <sys/ioctl.h> or <fcntl.h>: this file defines
// ioctl() and open().
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "abi/amdxdna_abi.h"

namespace abi = tickwise::abi;

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using open_fn = int (*)(const char*, int, ...);
using openat_fn = int (*)(int, const char*, int, ...);
using ioctl_fn = int (*)(int, unsigned long, ...);
using close_fn = int (*)(int);

constexpr int kMaxFd = 1 << 16;
std::atomic<uint8_t> g_fake_fd[kMaxFd];

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
void sleep_until(uint64_t t) {
  timespec ts{time_t(t / 1000000000ull), long(t % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

struct Hwctx {
  uint32_t syncobj;
  uint64_t last_done_ns = 0;
  std::vector<uint64_t> done_ns;  // by seq - 1
};

struct Device {
  std::mutex mu;
  std::map<uint32_t, Hwctx> hwctx;
  std::map<uint32_t, uint32_t> syncobj_to_hwctx;
  uint32_t next_hwctx = 1, next_syncobj = 1, next_bo = 1;
  uint64_t delay_ns = 200000;
  std::string path = "/dev/accel/accel0";
  std::string started_file, hold_file;
  std::atomic<bool> first_exec{true};
};

Device& dev() {
  static Device* d = [] {
    auto* x = new Device();
    if (const char* p = getenv("TICKWISE_FAKE_XDNA_PATH")) x->path = p;
    if (const char* v = getenv("TICKWISE_FAKE_XDNA_DELAY_US")) x->delay_ns = strtoull(v, nullptr, 10) * 1000;
    if (const char* v = getenv("TICKWISE_FAKE_XDNA_STARTED_FILE")) x->started_file = v;
    if (const char* v = getenv("TICKWISE_FAKE_XDNA_HOLD_FILE")) x->hold_file = v;
    return x;
  }();
  return *d;
}

/// The first command's rendezvous: say it is in flight, then wait for the hold file.
void first_exec_rendezvous(Device& d) {
  if (!d.started_file.empty()) {
    const std::string tmp = d.started_file + ".tmp";
    if (FILE* f = fopen(tmp.c_str(), "w")) {
      fprintf(f, "%llu\n", (unsigned long long)mono_ns());
      fclose(f);
      rename(tmp.c_str(), d.started_file.c_str());
    }
  }
  if (d.hold_file.empty()) return;
  const uint64_t deadline = mono_ns() + 30000000000ull;
  while (access(d.hold_file.c_str(), F_OK) != 0) {
    if (mono_ns() > deadline) {
      fprintf(stderr, "fake amdxdna: TICKWISE_FAKE_XDNA_HOLD_FILE %s did not appear within 30 s; going on\n",
              d.hold_file.c_str());
      return;
    }
    usleep(100);
  }
}

int fake_open() {
  int fd = memfd_create("tickwise-fake-amdxdna", MFD_CLOEXEC);
  if (fd >= 0 && fd < kMaxFd) g_fake_fd[fd].store(1);
  return fd;
}

bool is_fake(int fd) { return fd >= 0 && fd < kMaxFd && g_fake_fd[fd].load(std::memory_order_relaxed); }

int fail(int e) {
  errno = e;
  return -1;
}

void copy_field(char* dst, uint64_t* len, const char* value) {
  const size_t n = strlen(value);
  if (dst && *len) memcpy(dst, value, n < *len ? n : size_t(*len));
  *len = n;
}

/// Completion time of `point` on `syncobj`, or 0 if never submitted.
uint64_t point_done(Device& d, uint32_t syncobj, uint64_t point, bool* known) {
  auto it = d.syncobj_to_hwctx.find(syncobj);
  *known = it != d.syncobj_to_hwctx.end();
  if (!*known) return 0;
  const Hwctx& h = d.hwctx[it->second];
  if (point == 0) return h.done_ns.empty() ? 1 : h.done_ns.back();
  if (point > h.done_ns.size()) return 0;
  return h.done_ns[point - 1];
}

int wait_until(uint64_t target, int64_t timeout_abs_ns) {
  if (target == 0 || (timeout_abs_ns >= 0 && target > uint64_t(timeout_abs_ns))) {
    if (timeout_abs_ns > 0) sleep_until(uint64_t(timeout_abs_ns));
    return fail(ETIME);
  }
  sleep_until(target);
  return 0;
}

int syncobj_wait(unsigned long req, void* arg, bool timeline) {
  Device& d = dev();
  const uint32_t size = abi::ioc_size(req);
  uint32_t count, flags;
  int64_t timeout;
  const uint32_t* handles;
  const uint64_t* points = nullptr;
  if (timeline) {
    if (size != 40 && size != 48) return fail(EINVAL);
    auto* w = static_cast<abi::DrmSyncobjTimelineWait*>(arg);
    count = w->count_handles, flags = w->flags, timeout = w->timeout_nsec;
    handles = reinterpret_cast<const uint32_t*>(w->handles);
    points = reinterpret_cast<const uint64_t*>(w->points);
  } else {
    if (size != 32 && size != 40) return fail(EINVAL);
    auto* w = static_cast<abi::DrmSyncobjWait*>(arg);
    count = w->count_handles, flags = w->flags, timeout = w->timeout_nsec;
    handles = reinterpret_cast<const uint32_t*>(w->handles);
  }
  if (count == 0 || !handles) return fail(EINVAL);
  const bool all = flags & abi::kDrmSyncobjWaitFlagsWaitAll;
  uint64_t target = all ? 0 : ~0ull;
  uint32_t first = 0;
  {
    std::lock_guard<std::mutex> l(d.mu);
    for (uint32_t i = 0; i < count; ++i) {
      bool known;
      const uint64_t t = point_done(d, handles[i], points ? points[i] : 0, &known);
      if (!known) return fail(EINVAL);
      const uint64_t eff = t == 0 ? ~0ull : t;  // never submitted: waits out the timeout
      if (all ? eff > target : eff < target) target = eff, first = i;
    }
  }
  const int rc = wait_until(target == ~0ull ? 0 : target, timeout);
  if (rc == 0) {
    if (timeline) static_cast<abi::DrmSyncobjTimelineWait*>(arg)->first_signaled = first;
    else static_cast<abi::DrmSyncobjWait*>(arg)->first_signaled = first;
  }
  return rc;
}

int fake_ioctl(int, unsigned long req, void* arg) {
  if (abi::ioc_type(req) != abi::kDrmIoctlBase || !arg) return fail(ENOTTY);
  Device& d = dev();
  const uint32_t nr = abi::ioc_nr(req);
  if (nr == 0 && abi::ioc_size(req) == sizeof(abi::DrmVersion)) {
    auto* v = static_cast<abi::DrmVersion*>(arg);
    v->version_major = 0;
    v->version_minor = 1;
    v->version_patchlevel = 0;
    copy_field(v->name, &v->name_len, "amdxdna");
    copy_field(v->date, &v->date_len, "0");
    copy_field(v->desc, &v->desc_len, "tickwise fake amdxdna");
    return 0;
  }
  if (nr == abi::kDrmSyncobjTimelineWaitNr) return syncobj_wait(req, arg, true);
  if (nr == abi::kDrmSyncobjWaitNr) return syncobj_wait(req, arg, false);
  switch (abi::xdna_lookup(req)) {
    case abi::XdnaOp::kCreateHwctx: {
      auto* a = static_cast<abi::AmdxdnaCreateHwctx*>(arg);
      std::lock_guard<std::mutex> l(d.mu);
      a->handle = d.next_hwctx++;
      a->syncobj_handle = d.next_syncobj++;
      d.hwctx[a->handle].syncobj = a->syncobj_handle;
      d.syncobj_to_hwctx[a->syncobj_handle] = a->handle;
      return 0;
    }
    case abi::XdnaOp::kDestroyHwctx: {
      auto* a = static_cast<abi::AmdxdnaDestroyHwctx*>(arg);
      std::lock_guard<std::mutex> l(d.mu);
      auto it = d.hwctx.find(a->handle);
      if (it == d.hwctx.end()) return fail(EINVAL);
      d.syncobj_to_hwctx.erase(it->second.syncobj);
      d.hwctx.erase(it);
      return 0;
    }
    case abi::XdnaOp::kCreateBo: {
      auto* a = static_cast<abi::AmdxdnaCreateBo*>(arg);
      std::lock_guard<std::mutex> l(d.mu);
      a->handle = d.next_bo++;
      return 0;
    }
    case abi::XdnaOp::kExecCmd: {
      auto* a = static_cast<abi::AmdxdnaExecCmd*>(arg);
      if ((!d.started_file.empty() || !d.hold_file.empty()) && d.first_exec.exchange(false))
        first_exec_rendezvous(d);  // outside the lock: other contexts go on meanwhile
      std::lock_guard<std::mutex> l(d.mu);
      auto it = d.hwctx.find(a->hwctx);
      if (it == d.hwctx.end() || a->cmd_count == 0) return fail(EINVAL);
      Hwctx& h = it->second;
      const uint64_t now = mono_ns();
      h.last_done_ns = (now > h.last_done_ns ? now : h.last_done_ns) + d.delay_ns;
      h.done_ns.push_back(h.last_done_ns);
      a->seq = h.done_ns.size();
      return 0;
    }
    case abi::XdnaOp::kWaitCmd: {
      auto* a = static_cast<abi::AmdxdnaWaitCmd*>(arg);
      uint64_t target;
      {
        std::lock_guard<std::mutex> l(d.mu);
        auto it = d.hwctx.find(a->hwctx);
        if (it == d.hwctx.end() || a->seq == 0 || a->seq > it->second.done_ns.size()) return fail(EINVAL);
        target = it->second.done_ns[a->seq - 1];
      }
      const int64_t deadline = a->timeout ? int64_t(mono_ns() + uint64_t(a->timeout) * 1000000ull) : -1;
      return wait_until(target, deadline);
    }
    case abi::XdnaOp::kSyncBo:
    case abi::XdnaOp::kConfigHwctx:
    case abi::XdnaOp::kGetBoInfo:
    case abi::XdnaOp::kGetInfo:
    case abi::XdnaOp::kSetState:
    case abi::XdnaOp::kGetArray:
      return 0;
    case abi::XdnaOp::kUnknown:
      break;
  }
  return fail(ENOTTY);
}

}  // namespace

FAKE_EXPORT int open(const char* path, int flags, ...) {
  static const auto real = reinterpret_cast<open_fn>(dlsym(RTLD_NEXT, "open"));
  va_list ap;
  va_start(ap, flags);
  const unsigned mode = va_arg(ap, unsigned);
  va_end(ap);
  if (path && dev().path == path) return fake_open();
  return real(path, flags, mode);
}

FAKE_EXPORT int open64(const char* path, int flags, ...) {
  static const auto real = reinterpret_cast<open_fn>(dlsym(RTLD_NEXT, "open64"));
  va_list ap;
  va_start(ap, flags);
  const unsigned mode = va_arg(ap, unsigned);
  va_end(ap);
  if (path && dev().path == path) return fake_open();
  return real(path, flags, mode);
}

FAKE_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  static const auto real = reinterpret_cast<openat_fn>(dlsym(RTLD_NEXT, "openat"));
  va_list ap;
  va_start(ap, flags);
  const unsigned mode = va_arg(ap, unsigned);
  va_end(ap);
  if (path && dev().path == path) return fake_open();
  return real(dirfd, path, flags, mode);
}

FAKE_EXPORT int ioctl(int fd, unsigned long request, ...) __THROW {
  static const auto real = reinterpret_cast<ioctl_fn>(dlsym(RTLD_NEXT, "ioctl"));
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (is_fake(fd)) return fake_ioctl(fd, request, arg);
  return real(fd, request, arg);
}

FAKE_EXPORT int close(int fd) {
  static const auto real = reinterpret_cast<close_fn>(dlsym(RTLD_NEXT, "close"));
  if (fd >= 0 && fd < kMaxFd) g_fake_fd[fd].store(0);
  return real(fd);
}
