// Shared bits of the test applications: argument parsing, summaries, and
// kernel "registration" the way hipcc-generated code does it.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "abi/hip_abi.h"

namespace app {

inline long arg(int argc, char** argv, const char* name, long dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], name) == 0) return strtol(argv[i + 1], nullptr, 10);
  return dflt;
}
inline const char* arg_str(int argc, char** argv, const char* name, const char* dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], name) == 0) return argv[i + 1];
  return dflt;
}
inline void write_file(const char* path, const std::string& text) {
  if (!path) {
    fputs(text.c_str(), stdout);
    return;
  }
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(3);
  }
  fputs(text.c_str(), f);
  fclose(f);
}
inline unsigned tid() { return unsigned(syscall(SYS_gettid)); }

// Host stubs of "kernels" (their addresses are the keys hipLaunchKernel sees).
extern "C" inline void kernel_rmsnorm() {}
extern "C" inline void kernel_rope() {}
extern "C" inline void kernel_softmax() {}

inline void register_kernels() {
  void** mod = __hipRegisterFatBinary(nullptr);
  __hipRegisterFunction(mod, reinterpret_cast<const void*>(&kernel_rmsnorm), nullptr, "rms_norm_f32", 0, nullptr,
                        nullptr, nullptr, nullptr, nullptr);
  __hipRegisterFunction(mod, reinterpret_cast<const void*>(&kernel_rope), nullptr, "rope_neox_f32", 0, nullptr,
                        nullptr, nullptr, nullptr, nullptr);
  __hipRegisterFunction(mod, reinterpret_cast<const void*>(&kernel_softmax), nullptr, "soft_max_f32", 0, nullptr,
                        nullptr, nullptr, nullptr, nullptr);
}

}  // namespace app
