// Multi-threaded HIP launcher: N threads launch through every intercepted
// entry point (and graphs), then print what they did as JSON.
//   app_launcher --threads 8 --launches 2000 --duration-ms 0 --graph-every 50 --out summary.json
#include <thread>
#include <vector>
#include <atomic>
#include <chrono>

#include "app_common.h"

struct PerThread {
  unsigned tid = 0;
  long api[8] = {};
  long graph_launches = 0, syncs = 0, calls = 0;
};

int main(int argc, char** argv) {
  const int threads = int(app::arg(argc, argv, "--threads", 8));
  const long launches = app::arg(argc, argv, "--launches", 2000);
  const long duration_ms = app::arg(argc, argv, "--duration-ms", 0);
  const long graph_every = app::arg(argc, argv, "--graph-every", 50);
  const char* out = app::arg_str(argc, argv, "--out", nullptr);
  app::register_kernels();
  hipModule_t mod;
  hipFunction_t fgemm, fattn;
  if (hipModuleLoadData(&mod, "fake") != 0 || hipModuleGetFunction(&fgemm, mod, "mul_mat_q4_K_rows") != 0 ||
      hipModuleGetFunction(&fattn, mod, "flash_attn_ext_f16") != 0) {
    fprintf(stderr, "module setup failed\n");
    return 1;
  }
  hipGraph_t graph;
  hipGraphExec_t exec;
  hipGraphCreate(&graph, 0);
  for (const void* fn : {reinterpret_cast<const void*>(&app::kernel_rmsnorm),
                         reinterpret_cast<const void*>(&app::kernel_rope),
                         reinterpret_cast<const void*>(&app::kernel_softmax)}) {
    hipKernelNodeParams p{};
    p.func = const_cast<void*>(fn);
    p.gridDim = {64, 1, 1};
    p.blockDim = {256, 1, 1};
    hipGraphAddKernelNode(nullptr, graph, nullptr, 0, &p);
  }
  hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0);
  const long graph_nodes = 3;

  std::vector<PerThread> stats(static_cast<size_t>(threads));
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      PerThread& s = stats[size_t(t)];
      s.tid = app::tid();
      hipStream_t stream = nullptr;
      if (t != 0) hipStreamCreate(&stream);
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      const auto t0 = std::chrono::steady_clock::now();
      for (long i = 0; i < launches; ++i) {
        if (duration_ms > 0) {
          const auto due = t0 + std::chrono::microseconds(duration_ms * 1000 * i / launches);
          std::this_thread::sleep_until(due);
        }
        hipError_t rc = 0;
        if (graph_every > 0 && i % graph_every == graph_every - 1) {
          rc = hipGraphLaunch(exec, stream);
          ++s.graph_launches;
        } else {
          const int api = int(i % 6);
          void* args[1] = {nullptr};
          switch (api) {
            case 0:
              rc = hipLaunchKernel(reinterpret_cast<const void*>(&app::kernel_rmsnorm), dim3{32, 1, 1},
                                   dim3{256, 1, 1}, args, 0, stream);
              break;
            case 1:
              rc = hipModuleLaunchKernel(fgemm, 128, 4, 1, 256, 1, 1, 16384, stream, args, nullptr);
              break;
            case 2:
              rc = hipExtModuleLaunchKernel(fattn, 8192, 1, 1, 128, 1, 1, 0, stream, args, nullptr, nullptr,
                                            nullptr, 0);
              break;
            case 3: {
              hipLaunchConfig_t cfg{};
              cfg.gridDim = {16, 16, 1};
              cfg.blockDim = {64, 1, 1};
              cfg.stream = stream;
              rc = hipLaunchKernelExC(&cfg, reinterpret_cast<const void*>(&app::kernel_rope), args);
              break;
            }
            case 4:
              rc = hipLaunchCooperativeKernel(reinterpret_cast<const void*>(&app::kernel_softmax), dim3{8, 1, 1},
                                              dim3{1024, 1, 1}, args, 0, stream);
              break;
            case 5:
              rc = hipExtLaunchKernel(reinterpret_cast<const void*>(&app::kernel_rope), dim3{4, 1, 1},
                                      dim3{64, 1, 1}, args, 0, stream, nullptr, nullptr, 0);
              break;
          }
          ++s.api[api];
        }
        ++s.calls;
        if (rc != 0) {
          fprintf(stderr, "launch failed: %d\n", rc);
          exit(1);
        }
        if (i % 100 == 99) {
          hipStreamSynchronize(stream);
          ++s.syncs;
        }
      }
      hipStreamSynchronize(stream);
      ++s.syncs;
      if (stream) hipStreamDestroy(stream);
    });
  for (auto& th : pool) th.join();
  hipDeviceSynchronize();

  long api_total[8] = {}, graphs = 0, syncs = 1, calls = 0;
  std::string threads_json;
  for (const auto& s : stats) {
    for (int a = 0; a < 8; ++a) api_total[a] += s.api[a];
    graphs += s.graph_launches;
    syncs += s.syncs;
    calls += s.calls;
    threads_json += (threads_json.empty() ? "" : ",") + std::string("{\"tid\":") + std::to_string(s.tid) +
                    ",\"launch_calls\":" + std::to_string(s.calls) + ",\"syncs\":" + std::to_string(s.syncs) + "}";
  }
  const long kernels = calls - graphs + graphs * graph_nodes;
  char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"launch_calls\":%ld,\"hipLaunchKernel\":%ld,\"hipModuleLaunchKernel\":%ld,"
           "\"hipExtModuleLaunchKernel\":%ld,\"hipLaunchKernelExC\":%ld,\"hipLaunchCooperativeKernel\":%ld,"
           "\"hipExtLaunchKernel\":%ld,\"hipGraphLaunch\":%ld,\"graph_nodes\":%ld,\"kernels\":%ld,"
           "\"sync_calls\":%ld,\"threads\":[",
           calls, api_total[0], api_total[1], api_total[2], api_total[3], api_total[4], api_total[5], graphs,
           graph_nodes, kernels, syncs);
  app::write_file(out, std::string(buf) + threads_json + "]}\n");
  hipGraphExecDestroy(exec);
  hipGraphDestroy(graph);
  return 0;
}
