// cuda backend: reserved. A later CUPTI activity backend (loaded through
// CUDA_INJECTION64_PATH, entry point InitializeInjection) fills these hooks;
// until then the registry lists it as "not_built" (or "stub" when the build
// asked for it with -DTICKWISE_CUDA=ON).
#include "recorder/json.h"
#include "recorder/recorder.h"

namespace tickwise::rec {
namespace {

void cuda_describe(JsonWriter& w) { w.key("note").value("CUPTI backend not implemented yet"); }

}  // namespace

const BackendOps& cuda_backend() {
#ifdef TICKWISE_WITH_CUDA
  static const BackendOps ops = {"cuda", false, nullptr, nullptr, nullptr, cuda_describe, nullptr, nullptr};
#else
  static const BackendOps ops = {"cuda", false, nullptr, nullptr, nullptr, cuda_describe, nullptr, nullptr};
#endif
  return ops;
}

}  // namespace tickwise::rec
