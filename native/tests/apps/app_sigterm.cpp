// Launches until killed. After each launch returns it stores the number of
// launches done into a shared counter file, which survives the process.
//   app_sigterm --counter FILE [--self-term N]
// --self-term N: after launch N the app sends itself SIGTERM (from the main
// thread, between launches) and, should the handler return, notes that in
// the file's second word: an app thread in its own code must be held there
// until the capture is finished, never let run on.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>

#include <atomic>

#include "app_common.h"

int main(int argc, char** argv) {
  const char* path = app::arg_str(argc, argv, "--counter", nullptr);
  if (!path) return 2;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return 2;
  auto* counter = static_cast<std::atomic<uint64_t>*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  if (counter == MAP_FAILED) return 2;
  const uint64_t self_term = uint64_t(app::arg(argc, argv, "--self-term", 0));
  app::register_kernels();
  void* args[1] = {nullptr};
  for (uint64_t i = 1;; ++i) {
    hipLaunchKernel(reinterpret_cast<const void*>(&app::kernel_softmax), dim3{1, 1, 1}, dim3{64, 1, 1}, args, 0,
                    nullptr);
    counter->store(i);
    if (i == self_term) {
      kill(getpid(), SIGTERM);
      counter[1].store(1);  // the handler returned: the app runs on
    }
    usleep(50);
  }
}
