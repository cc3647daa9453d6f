// Host cost of launching an empty kernel, in us per launch: `rounds` rounds of
// `n` back-to-back launches (<<<1,1>>> on the default stream, i.e.
// cudaLaunchKernel), timed on CLOCK_MONOTONIC around the launch loop only; a
// cudaDeviceSynchronize after each round. Prints one JSON line.
//   nvcc -O2 -o empty_launch_bench empty_launch_bench.cu
//   empty_launch_bench [n=100000] [rounds=7] [label]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

__global__ void empty_kernel() {}

static double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 100000;
  const int rounds = argc > 2 ? atoi(argv[2]) : 7;
  const char* label = argc > 3 ? argv[3] : "";
  if (cudaFree(nullptr) != cudaSuccess) { fprintf(stderr, "no CUDA device\n"); return 2; }
  for (int i = 0; i < 2000; ++i) empty_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  std::vector<double> launch_us, round_us;
  for (int r = 0; r < rounds; ++r) {
    cudaDeviceSynchronize();
    const double t0 = now_us();
    for (int i = 0; i < n; ++i) empty_kernel<<<1, 1>>>();
    const double t1 = now_us();
    cudaDeviceSynchronize();
    const double t2 = now_us();
    launch_us.push_back((t1 - t0) / n);
    round_us.push_back((t2 - t0) / n);
  }
  if (cudaGetLastError() != cudaSuccess) { fprintf(stderr, "launch failed\n"); return 1; }
  std::vector<double> s = launch_us;
  std::sort(s.begin(), s.end());
  std::vector<double> w = round_us;
  std::sort(w.begin(), w.end());
  printf("{\"label\":\"%s\",\"launches_per_round\":%d,\"rounds\":%d,\"us_per_launch_median\":%.4f,"
         "\"us_per_launch_min\":%.4f,\"us_per_launch_max\":%.4f,\"us_per_launch_incl_sync_median\":%.4f,\"rounds_us_per_launch\":[",
         label, n, rounds, s[s.size() / 2], s.front(), s.back(), w[w.size() / 2]);
  for (size_t i = 0; i < launch_us.size(); ++i) printf("%s%.4f", i ? "," : "", launch_us[i]);
  printf("]}\n");
  return 0;
}
