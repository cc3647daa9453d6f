#!/usr/bin/env bash
# Validates the recorder's cuda backend on an NVIDIA GPU, in one go:
#   1. builds the recorder with -DTICKWISE_CUDA=ON (or plain g++ when cmake is absent)
#      and the empty-kernel launch benchmark (nvcc);
#   2. captures a small PyTorch transformer prefill under the recorder
#      (CUDA_INJECTION64_PATH) and runs the same prefill under torch.profiler;
#   3. checks the capture: every kernel between its launch call's enter and the
#      exit of the next device synchronize; kernel count and totals vs the profiler;
#   4. launch overhead of an empty kernel without / with the recorder (same binary).
# Everything lands in $OUT (default /tmp/tw-cuda-validate).
#   native/cuda/validate.sh                 # all
#   TW_SKIP_BENCH=1 native/cuda/validate.sh
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
OUT="${OUT:-/tmp/tw-cuda-validate}"
mkdir -p "$OUT"
build="${TW_CUDA_BUILD:-$root/native/build-cuda}"
lib="$build/lib/libtickwise_recorder.so"
py="${PYTHON:-python3}"
log() { echo "== $*" | tee -a "$OUT/validate.log"; }
run() { echo "+ $*" >>"$OUT/validate.log"; "$@"; }

log "environment $(date -u +%FT%TZ)"
{
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,pstate --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
  "$py" -c 'import torch,sys; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' 2>&1
  cmake --version 2>&1 | head -1
  g++ --version 2>&1 | head -1
  echo "libcupti candidates:"; find / -xdev -name 'libcupti.so*' 2>/dev/null | head -20
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

log "build ($build)"
cuda_home="${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}"
if command -v cmake >/dev/null; then
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  run cmake -S "$root/native" -B "$build" "${gen[@]}" -DTICKWISE_CUDA=ON -DTICKWISE_TESTS=OFF \
    -DCUDAToolkit_ROOT="$cuda_home" >"$OUT/build.log" 2>&1 &&
    run cmake --build "$build" -j "$(nproc)" >>"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
else
  mkdir -p "$build/lib" "$build/bin"
  inc=$(dirname "$(find "$cuda_home" / -xdev -name cupti.h 2>/dev/null | head -1)")
  run g++ -std=c++17 -O2 -g -shared -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -I"$root/native/include" -I"$root/native/src" \
    -isystem "$inc" -isystem "$cuda_home/include" -DTICKWISE_WITH_CUDA=1 -DTICKWISE_VERSION=\"0.1.0\" \
    "$root"/native/src/recorder/{core,provenance,backend_hip,backend_amdxdna,backend_cuda}.cpp -o "$lib" -ldl -lpthread \
    >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
  run g++ -std=c++17 -O2 -I"$root/native/include" -I"$root/native/tools" "$root"/native/tools/{reader,tw_dump}.cpp \
    -o "$build/bin/tw-dump" >>"$OUT/build.log" 2>&1
fi
run nvcc -O2 -arch=sm_90 -o "$build/bin/empty_launch_bench" "$here/empty_launch_bench.cu" >>"$OUT/build.log" 2>&1 ||
  run nvcc -O2 -o "$build/bin/empty_launch_bench" "$here/empty_launch_bench.cu" >>"$OUT/build.log" 2>&1
ls -la "$lib" "$build/bin" | tee -a "$OUT/validate.log"
sha256sum "$lib" >>"$OUT/env.txt"

# The recorder, for CUDA: the driver loads the library named here at cuInit and
# calls its InitializeInjection; TICKWISE_CAPTURE_DIR turns recording on.
rec_env=(CUDA_INJECTION64_PATH="$lib" TICKWISE_BACKENDS=cuda)

log "prefill under the recorder"
rm -rf "$OUT/capture"
run env "${rec_env[@]}" TICKWISE_CAPTURE_DIR="$OUT/capture" "$py" "$here/prefill.py" --mode record --out "$OUT/record.json" \
  ${TW_PREFILL_ARGS:-} >"$OUT/record.log" 2>&1; echo "rc=$?" >>"$OUT/record.log"
tail -5 "$OUT/record.log"

log "prefill under torch.profiler (separate process: CUPTI takes one subscriber)"
run "$py" "$here/prefill.py" --mode profile --out "$OUT/profiler.json" --trace "$OUT/profiler-trace.json.gz" \
  ${TW_PREFILL_ARGS:-} >"$OUT/profile.log" 2>&1; echo "rc=$?" >>"$OUT/profile.log"
tail -5 "$OUT/profile.log"

log "check"
[[ -x "$build/bin/tw-dump" ]] && run "$build/bin/tw-dump" "$OUT/capture" >"$OUT/tw-dump.txt" 2>&1
cat "$OUT/tw-dump.txt" 2>/dev/null
run "$py" "$here/twr_cuda.py" check "$OUT/capture" --windows "$OUT/record.json" --profiler "$OUT/profiler.json" \
  --out "$OUT/check.json" >"$OUT/check.txt" 2>&1; echo "rc=$?" >>"$OUT/check.txt"
cat "$OUT/check.txt"
run "$py" "$here/twr_cuda.py" summary "$OUT/capture" >"$OUT/summary.txt" 2>&1

if [[ "${TW_SKIP_BENCH:-0}" != 1 ]]; then
  log "launch overhead: empty kernel, us per launch (same binary; configurations interleaved, 2 runs each)"
  bench="$build/bin/empty_launch_bench"
  n="${TW_BENCH_N:-100000}"
  : >"$OUT/bench.jsonl"
  for pass in 1 2; do
    run "$bench" "$n" 7 "none" >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err"
    rm -rf /tmp/tw-bench-cap
    run env "${rec_env[@]}" TICKWISE_CAPTURE_DIR=/tmp/tw-bench-cap "$bench" "$n" 7 "recorder" >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err"
    [[ $pass == 1 ]] && cp /tmp/tw-bench-cap/meta.json "$OUT/bench-recorder-meta.json" &&
      "$py" "$here/twr_cuda.py" summary /tmp/tw-bench-cap >"$OUT/bench-recorder-summary.txt" 2>&1
    rm -rf /tmp/tw-bench-cap
    run env "${rec_env[@]}" TICKWISE_CUDA_DRIVER_API=0 TICKWISE_CAPTURE_DIR=/tmp/tw-bench-cap "$bench" "$n" 7 "recorder-runtime-api-only" >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err"
    rm -rf /tmp/tw-bench-cap
    run env "${rec_env[@]}" TICKWISE_CUDA_API=0 TICKWISE_CAPTURE_DIR=/tmp/tw-bench-cap "$bench" "$n" 7 "recorder-activity-only" >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err"
    rm -rf /tmp/tw-bench-cap
    run env "${rec_env[@]}" "$bench" "$n" 7 "injected-inert" >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err"
  done
  cat "$OUT/bench.jsonl"
  "$py" - "$OUT/bench.jsonl" >"$OUT/bench-summary.json" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
by = {}
for r in rows:
    by.setdefault(r["label"], []).extend(r["rounds_us_per_launch"])
out = {k: dict(median_us=statistics.median(v), min_us=min(v), rounds=len(v)) for k, v in by.items()}
base = out.get("none", {}).get("median_us")
for k, v in out.items():
    if base: v["added_us_vs_none"] = v["median_us"] - base
print(json.dumps(out, indent=1))
PY
  cat "$OUT/bench-summary.json"
fi
log "done"
