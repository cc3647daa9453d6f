// The real HIP runtime, with no AMD GPU: linked against libamdhip64.so.5
// (Debian's libamdhip64-5, HIP 5.2.3; no hipcc, the entry points are the
// hand-written declarations of abi/hip_abi.h), so each call below is a
// versioned reference (hipLaunchKernel@hip_4.2, hipGraphLaunch@hip_4.3, the
// C++-named hipExtModuleLaunchKernel@hip_4.2) that the dynamic linker binds to
// the recorder when it is preloaded, else to the real library.
//
// Every call the recorder's HIP shim hooks is made twice: once through the
// program's own reference (what the recorder sees), once through the real
// library's own definition of that version (dlvsym on the real library's
// handle, which no preload can interpose). The test compares the two return
// codes, the codes of a run without the recorder, and the records.
//   app_real_hip --out summary.json
// Prints JSON: {"device_count":n,"device_count_rc":rc,"real_library":path,
//   "absent_in_real":[names],"calls":[{"name","api","kind","rc","rc_real","resolved_in",
//   "function","grid_blocks","block_threads","shared_mem_bytes"}]}
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "abi/hip_abi.h"

// mirrors: const char* hipGetErrorName(hipError_t hip_error);
extern "C" const char* hipGetErrorName(hipError_t hip_error);

namespace {

// Host stubs whose addresses stand for kernels (no code object is registered:
// with no device the runtime refuses the launch before looking them up).
extern "C" void real_hip_stub_a() {}
extern "C" void real_hip_stub_b() {}

struct Call {
  std::string name;
  int api;           // fmt::HipApi
  const char* kind;  // "launch" | "sync" | "other"
  hipError_t rc = -1, rc_real = -1;
  std::string resolved_in;
  const void* function = nullptr;
  uint64_t grid_blocks = 0, block_threads = 0, shared_mem_bytes = 0;
};

void* g_real = nullptr;

std::string where(const void* addr) {
  Dl_info i{};
  return dladdr(addr, &i) && i.dli_fname ? std::string(i.dli_fname) : std::string("?");
}

/// The real library's own definition of name@version: no preload interposes on it.
template <typename F>
F real_fn(const char* name, const char* version) {
  void* p = dlvsym(g_real, name, version);
  if (!p) {
    fprintf(stderr, "app_real_hip: %s@%s is not in the real library\n", name, version);
    exit(3);
  }
  return reinterpret_cast<F>(p);
}

// The name this program references for hipExtModuleLaunchKernel (the compiler's
// mangling of hip_abi.h's C++ declaration), read off the bound definition.
std::string linked_name(const void* addr) {
  Dl_info i{};
  return dladdr(addr, &i) && i.dli_sname ? std::string(i.dli_sname) : std::string();
}

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  const char* out = nullptr;
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--out") == 0) out = argv[i + 1];
  g_real = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD);
  if (!g_real) {
    fprintf(stderr, "app_real_hip: libamdhip64.so.5 is not loaded: %s\n", dlerror());
    return 3;
  }
  Dl_info real_info{};
  dladdr(dlsym(g_real, "hipGetDeviceCount"), &real_info);

  int device_count = -1;
  const hipError_t count_rc = hipGetDeviceCount(&device_count);

  std::vector<Call> calls;
  void* args[1] = {nullptr};
  const hipStream_t stream = nullptr;  // the null stream: no stream exists without a device
  // One entry point: its HipApi number (tickwise/format.h), the address the
  // program's reference is bound to, the call through that reference and the
  // same call through the real library's own definition.
  auto add = [&](const char* name, int api, const char* kind, const void* linked,
                 const std::function<hipError_t()>& via_link, const std::function<hipError_t()>& via_real,
                 const void* function, uint64_t grid, uint64_t block, uint64_t shm) {
    Call c;
    c.name = name, c.api = api, c.kind = kind, c.function = function;
    c.grid_blocks = grid, c.block_threads = block, c.shared_mem_bytes = shm;
    c.resolved_in = where(linked);
    c.rc = via_link();
    c.rc_real = via_real();
    calls.push_back(c);
  };
  const void* stub_a = reinterpret_cast<const void*>(&real_hip_stub_a);
  const void* stub_b = reinterpret_cast<const void*>(&real_hip_stub_b);

  add("hipLaunchKernel", 1, "launch", reinterpret_cast<const void*>(&hipLaunchKernel),
      [&] { return hipLaunchKernel(stub_a, dim3{3, 2, 1}, dim3{64, 1, 1}, args, 128, stream); },
      [&] {
        return real_fn<decltype(&hipLaunchKernel)>("hipLaunchKernel", "hip_4.2")(stub_a, dim3{3, 2, 1},
                                                                                 dim3{64, 1, 1}, args, 128, stream);
      },
      stub_a, 6, 64, 128);
  // No module can be loaded without a device: a null function handle, which the
  // runtime must refuse without dereferencing.
  add("hipModuleLaunchKernel", 2, "launch", reinterpret_cast<const void*>(&hipModuleLaunchKernel),
      [&] { return hipModuleLaunchKernel(nullptr, 5, 1, 1, 32, 2, 1, 256, stream, args, nullptr); },
      [&] {
        return real_fn<decltype(&hipModuleLaunchKernel)>("hipModuleLaunchKernel", "hip_4.2")(
            nullptr, 5, 1, 1, 32, 2, 1, 256, stream, args, nullptr);
      },
      nullptr, 5, 64, 256);
  // C++ linkage: the program references the mangled name, as hip_ext.h makes it do.
  const void* ext_module = reinterpret_cast<const void*>(&hipExtModuleLaunchKernel);
  const std::string ext_module_name = linked_name(ext_module);
  add("hipExtModuleLaunchKernel", 3, "launch", ext_module,
      [&] { return hipExtModuleLaunchKernel(nullptr, 1000, 1, 1, 100, 1, 1, 512, stream, args, nullptr, nullptr,
                                            nullptr, 0); },
      [&] {
        return real_fn<decltype(&hipExtModuleLaunchKernel)>(ext_module_name.c_str(), "hip_4.2")(
            nullptr, 1000, 1, 1, 100, 1, 1, 512, stream, args, nullptr, nullptr, nullptr, 0);
      },
      nullptr, 10, 100, 512);
  add("hipGraphLaunch", 5, "launch", reinterpret_cast<const void*>(&hipGraphLaunch),
      [&] { return hipGraphLaunch(nullptr, stream); },
      [&] { return real_fn<decltype(&hipGraphLaunch)>("hipGraphLaunch", "hip_4.3")(nullptr, stream); }, nullptr, 0,
      0, 0);
  add("hipExtLaunchKernel", 6, "launch", reinterpret_cast<const void*>(&hipExtLaunchKernel),
      [&] { return hipExtLaunchKernel(stub_b, dim3{7, 1, 1}, dim3{16, 4, 1}, args, 0, stream, nullptr, nullptr, 0); },
      [&] {
        return real_fn<decltype(&hipExtLaunchKernel)>("hipExtLaunchKernel", "hip_4.2")(
            stub_b, dim3{7, 1, 1}, dim3{16, 4, 1}, args, 0, stream, nullptr, nullptr, 0);
      },
      stub_b, 7, 64, 0);
  add("hipLaunchCooperativeKernel", 7, "launch", reinterpret_cast<const void*>(&hipLaunchCooperativeKernel),
      [&] { return hipLaunchCooperativeKernel(stub_a, dim3{2, 2, 2}, dim3{8, 8, 1}, args, 64, stream); },
      [&] {
        return real_fn<decltype(&hipLaunchCooperativeKernel)>("hipLaunchCooperativeKernel", "hip_4.2")(
            stub_a, dim3{2, 2, 2}, dim3{8, 8, 1}, args, 64, stream);
      },
      stub_a, 8, 64, 64);
  add("hipStreamSynchronize", 33, "sync", reinterpret_cast<const void*>(&hipStreamSynchronize),
      [&] { return hipStreamSynchronize(stream); },
      [&] { return real_fn<decltype(&hipStreamSynchronize)>("hipStreamSynchronize", "hip_4.2")(stream); }, nullptr,
      0, 0, 0);
  add("hipDeviceSynchronize", 32, "sync", reinterpret_cast<const void*>(&hipDeviceSynchronize),
      [&] { return hipDeviceSynchronize(); },
      [&] { return real_fn<decltype(&hipDeviceSynchronize)>("hipDeviceSynchronize", "hip_4.2")(); }, nullptr, 0, 0,
      0);
  hipFunction_t fn = nullptr;
  add("hipModuleGetFunction", 0, "other", reinterpret_cast<const void*>(&hipModuleGetFunction),
      [&] { return hipModuleGetFunction(&fn, nullptr, "rms_norm_f32"); },
      [&] {
        return real_fn<decltype(&hipModuleGetFunction)>("hipModuleGetFunction", "hip_4.2")(&fn, nullptr,
                                                                                           "rms_norm_f32");
      },
      nullptr, 0, 0, 0);

  // Entry points the shim hooks that this library does not define at all.
  std::vector<std::string> absent;
  for (const char* n : {"hipLaunchKernelExC", "hipExtModuleLaunchKernel"})
    if (!dlsym(g_real, n)) absent.push_back(n);

  std::string j = "{\"device_count\":" + std::to_string(device_count) +
                  ",\"device_count_rc\":" + std::to_string(count_rc) +
                  ",\"device_count_rc_name\":" + json_str(hipGetErrorName(count_rc)) +
                  ",\"real_library\":" + json_str(real_info.dli_fname ? real_info.dli_fname : "?") +
                  ",\"ext_module_symbol\":" + json_str(ext_module_name) + ",\"absent_in_real\":[";
  for (size_t i = 0; i < absent.size(); ++i) j += (i ? "," : "") + json_str(absent[i]);
  j += "],\"calls\":[";
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    char fn_hex[32];
    snprintf(fn_hex, sizeof fn_hex, "%llu", (unsigned long long)reinterpret_cast<uintptr_t>(c.function));
    j += std::string(i ? "," : "") + "{\"name\":" + json_str(c.name) + ",\"api\":" + std::to_string(c.api) +
         ",\"kind\":" + json_str(c.kind) + ",\"rc\":" + std::to_string(c.rc) +
         ",\"rc_name\":" + json_str(hipGetErrorName(c.rc)) + ",\"rc_real\":" + std::to_string(c.rc_real) +
         ",\"resolved_in\":" + json_str(c.resolved_in) + ",\"function\":" + fn_hex +
         ",\"grid_blocks\":" + std::to_string(c.grid_blocks) + ",\"block_threads\":" + std::to_string(c.block_threads) +
         ",\"shared_mem_bytes\":" + std::to_string(c.shared_mem_bytes) + "}";
  }
  j += "]}\n";
  if (out) {
    FILE* f = fopen(out, "w");
    if (!f) {
      perror(out);
      return 3;
    }
    fputs(j.c_str(), f);
    fclose(f);
  } else {
    fputs(j.c_str(), stdout);
  }
  return 0;
}
