// NPU submitter over raw amdxdna ioctls (against the fake device): per
// thread a hw context, commands completed through timeline-syncobj waits,
// WAIT_CMD, a two-point wait, BO syncs, and requests the recorder must call
// unknown. Prints what it did as JSON.
//   app_npu --threads 4 --cmds 200 --out summary.json
#include <fcntl.h>
#include <sys/ioctl.h>
#include <time.h>

#include <atomic>
#include <thread>
#include <vector>

#include "abi/amdxdna_abi.h"
#include "app_common.h"

namespace abi = tickwise::abi;

struct Counts {
  std::atomic<long> exec{0}, wait_cmd{0}, timeline_pairs{0}, timeline_waits{0}, sync_bo{0}, unknown{0}, hwctx{0},
      failures{0};
};

static uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

static void worker(Counts& c, long cmds, const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    perror(path);
    c.failures++;
    return;
  }
  char name[32] = {};
  abi::DrmVersion v{};
  v.name = name;
  v.name_len = sizeof name - 1;
  if (ioctl(fd, abi::kDrmIoctlVersion, &v) != 0 || strcmp(name, "amdxdna") != 0) c.failures++;
  abi::AmdxdnaCreateHwctx h{};
  h.max_opc = 0x800;
  h.num_tiles = 4;
  if (ioctl(fd, abi::xdna_request(0, 56), &h) != 0) {
    c.failures++;
    return;
  }
  c.hwctx++;
  abi::AmdxdnaCreateBo bo{};
  bo.size = 4096;
  bo.type = 2;
  if (ioctl(fd, abi::xdna_request(3, 32), &bo) != 0) c.failures++;
  auto exec = [&](uint64_t* seq) {
    abi::AmdxdnaExecCmd e{};
    e.hwctx = h.handle;
    e.cmd_handles = bo.handle;
    e.cmd_count = 1;
    if (ioctl(fd, abi::xdna_request(6, 56), &e) != 0) return c.failures++, false;
    c.exec++;
    *seq = e.seq;
    return true;
  };
  auto timeline_wait = [&](uint32_t n, const uint32_t* handles, const uint64_t* points) {
    abi::DrmSyncobjTimelineWait w{};
    w.handles = reinterpret_cast<uint64_t>(handles);
    w.points = reinterpret_cast<uint64_t>(points);
    w.count_handles = n;
    w.flags = abi::kDrmSyncobjWaitFlagsWaitAll;
    w.timeout_nsec = int64_t(mono_ns() + 2000000000ull);
    const unsigned long req = abi::ioc(abi::kIocWrite | abi::kIocRead, 'd', abi::kDrmSyncobjTimelineWaitNr, 40);
    if (ioctl(fd, req, &w) != 0) return void(c.failures++);
    c.timeline_waits++;
    c.timeline_pairs += n;
  };
  for (long i = 0; i < cmds; ++i) {
    if (i % 10 == 0) {
      abi::AmdxdnaSyncBo s{bo.handle, 0, 0, 4096};
      if (ioctl(fd, abi::xdna_request(5, 24), &s) == 0) c.sync_bo++;
    }
    uint64_t seq = 0;
    if (!exec(&seq)) continue;
    if (i % 3 == 0) {
      // WAIT_CMD, in the write-only encoding newer out-of-tree headers use.
      abi::AmdxdnaWaitCmd w{h.handle, 1000, seq};
      if (ioctl(fd, abi::xdna_request(9, 16, abi::kIocWrite), &w) == 0) c.wait_cmd++;
      else c.failures++;
    } else if (i % 3 == 1) {
      uint64_t seq2 = 0;
      if (!exec(&seq2)) continue;
      ++i;
      const uint32_t handles[2] = {h.syncobj_handle, h.syncobj_handle};
      const uint64_t points[2] = {seq, seq2};
      timeline_wait(2, handles, points);
    } else {
      const uint32_t handle = h.syncobj_handle;
      timeline_wait(1, &handle, &seq);
    }
  }
  // Requests the recorder must report as unknown: an unused number, and
  // EXEC_CMD's number with a size no known driver version uses.
  char junk[48] = {};
  if (ioctl(fd, abi::xdna_request(0x1F, 16), junk) != 0) c.unknown++;
  if (ioctl(fd, abi::xdna_request(6, 48), junk) != 0) c.unknown++;
  abi::AmdxdnaDestroyHwctx d{h.handle, 0};
  if (ioctl(fd, abi::xdna_request(1, 8), &d) != 0) c.failures++;
  close(fd);
}

int main(int argc, char** argv) {
  const int threads = int(app::arg(argc, argv, "--threads", 4));
  const long cmds = app::arg(argc, argv, "--cmds", 200);
  const char* path = app::arg_str(argc, argv, "--device", "/dev/accel/accel0");
  const char* out = app::arg_str(argc, argv, "--out", nullptr);
  Counts c;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, std::ref(c), cmds, path);
  for (auto& th : pool) th.join();
  char buf[512];
  snprintf(buf, sizeof buf,
           "{\"exec\":%ld,\"wait_cmd\":%ld,\"timeline_waits\":%ld,\"timeline_pairs\":%ld,\"sync_bo\":%ld,"
           "\"unknown\":%ld,\"hwctx\":%ld,\"failures\":%ld}\n",
           c.exec.load(), c.wait_cmd.load(), c.timeline_waits.load(), c.timeline_pairs.load(), c.sync_bo.load(),
           c.unknown.load(), c.hwctx.load(), c.failures.load());
  app::write_file(out, buf);
  return c.failures.load() ? 1 : 0;
}
