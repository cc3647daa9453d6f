// Plays the driver's part (InitializeInjection from CUDA_INJECTION64_PATH) and
// a few launches against fake_cupti. Usage: fake_app N_LAUNCHES
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 100;
  void* cupti = dlopen(getenv("TICKWISE_CUPTI_LIB"), RTLD_NOW | RTLD_GLOBAL);
  void* inj = dlopen(getenv("CUDA_INJECTION64_PATH"), RTLD_NOW);
  if (!cupti || !inj) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
  auto init = reinterpret_cast<int (*)()>(dlsym(inj, "InitializeInjection"));
  auto launch = reinterpret_cast<void (*)(int, uint64_t)>(dlsym(cupti, "fake_cupti_launch"));
  auto sync = reinterpret_cast<void (*)(uint64_t)>(dlsym(cupti, "fake_cupti_sync"));
  printf("InitializeInjection -> %d\n", init());
  for (int i = 0; i < n; ++i) {
    launch(i % 3, 5000);
    if (i % 10 == 9) sync(20000);
  }
  sync(20000);
  return 0;
}
