// Forks while another thread is launching: the parent keeps launching, the
// child launches its own kernels and exits. Prints both counts as JSON.
//   app_fork --parent-launches 3000 --child-launches 500 --out summary.json
#include <sys/wait.h>

#include <atomic>
#include <thread>

#include "app_common.h"

int main(int argc, char** argv) {
  const long parent_launches = app::arg(argc, argv, "--parent-launches", 3000);
  const long child_launches = app::arg(argc, argv, "--child-launches", 500);
  const char* out = app::arg_str(argc, argv, "--out", nullptr);
  app::register_kernels();
  void* args[1] = {nullptr};
  auto launch = [&] {
    return hipLaunchKernel(reinterpret_cast<const void*>(&app::kernel_rmsnorm), dim3{1, 1, 1}, dim3{64, 1, 1}, args,
                           0, nullptr);
  };
  std::atomic<long> bg_done{0};
  std::atomic<bool> forked{false};
  std::thread bg([&] {
    for (long i = 0; i < parent_launches; ++i) {
      launch();
      bg_done++;
      if (i == parent_launches / 4) {
        while (!forked.load()) std::this_thread::yield();
      }
    }
  });
  while (bg_done.load() < parent_launches / 8) std::this_thread::yield();
  const pid_t child = fork();
  if (child == 0) {
    for (long i = 0; i < child_launches; ++i) launch();
    hipDeviceSynchronize();
    exit(0);  // exit(), not _exit(): the recorder flushes the child's capture at exit
  }
  forked.store(true);
  long main_launches = 0;
  for (long i = 0; i < 100; ++i, ++main_launches) launch();
  bg.join();
  int status = 0;
  waitpid(child, &status, 0);
  hipDeviceSynchronize();
  char buf[256];
  snprintf(buf, sizeof buf, "{\"parent_launches\":%ld,\"child_launches\":%ld,\"child_pid\":%d,\"child_status\":%d}\n",
           parent_launches + main_launches, child_launches, int(child), status);
  app::write_file(out, buf);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
