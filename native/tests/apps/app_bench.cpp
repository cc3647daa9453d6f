// Per-call host cost of a HIP launch and of an amdxdna EXEC_CMD ioctl against
// the fakes; run with and without the recorder by scripts/bench-recorder.
// Prints {"launch_ns": ..., "ioctl_ns": ..., "sync_ioctl_ns": ...} (the best
// round's mean per call).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <time.h>

#include <algorithm>

#include "abi/amdxdna_abi.h"
#include "app_common.h"

namespace abi = tickwise::abi;

static uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

int main(int argc, char** argv) {
  const long n = app::arg(argc, argv, "--calls", 200000);
  const int rounds = int(app::arg(argc, argv, "--rounds", 5));
  app::register_kernels();
  hipStream_t stream;
  hipStreamCreate(&stream);
  void* args[1] = {nullptr};
  double best_launch = 1e30, best_ioctl = 1e30, best_other = 1e30;
  int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
  abi::AmdxdnaCreateHwctx h{};
  if (fd < 0 || ioctl(fd, abi::xdna_request(0, 56), &h) != 0) {
    fprintf(stderr, "no (fake) amdxdna device\n");
    return 1;
  }
  for (int r = 0; r < rounds; ++r) {
    uint64_t t0 = mono_ns();
    for (long i = 0; i < n; ++i)
      hipLaunchKernel(reinterpret_cast<const void*>(&app::kernel_rmsnorm), dim3{1, 1, 1}, dim3{64, 1, 1}, args, 0,
                      stream);
    uint64_t t1 = mono_ns();
    best_launch = std::min(best_launch, double(t1 - t0) / double(n));
    hipStreamSynchronize(stream);
    abi::AmdxdnaExecCmd e{};
    e.hwctx = h.handle;
    e.cmd_handles = 1;
    e.cmd_count = 1;
    t0 = mono_ns();
    for (long i = 0; i < n; ++i) ioctl(fd, abi::xdna_request(6, 56), &e);
    t1 = mono_ns();
    best_ioctl = std::min(best_ioctl, double(t1 - t0) / double(n));
    // A DRM ioctl the recorder recognises but does not record (GET_INFO).
    char info[16] = {};
    t0 = mono_ns();
    for (long i = 0; i < n; ++i) ioctl(fd, abi::xdna_request(7, 16), info);
    t1 = mono_ns();
    best_other = std::min(best_other, double(t1 - t0) / double(n));
  }
  printf("{\"launch_ns\":%.1f,\"ioctl_ns\":%.1f,\"unrecorded_ioctl_ns\":%.1f,\"calls\":%ld,\"rounds\":%d}\n",
         best_launch, best_ioctl, best_other, n, rounds);
  return 0;
}
