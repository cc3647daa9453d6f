#!/usr/bin/env bash
# Validates the recorder's cuda backend on an NVIDIA GPU, in one go:
#   1. builds the recorder with -DTICKWISE_CUDA=ON (or plain g++ when cmake is absent)
#      and the empty-kernel launch benchmark (nvcc);
#   2. captures a small PyTorch transformer prefill under the recorder
#      (CUDA_INJECTION64_PATH) and runs the same prefill under torch.profiler;
#   3. checks the capture: every kernel between its launch call's enter and the
#      exit of the next device synchronize; kernel count and totals vs the profiler;
#   4. launch overhead of an empty kernel without / with the recorder (same binary).
# Everything lands in $OUT (default /tmp/tw-cuda-validate), and packed as $OUT/results.tgz.
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
modes="${TW_API_MODES:-activity callback}"

for mode in $modes; do
  log "prefill under the recorder (TICKWISE_CUDA_API=$mode)"
  rm -rf "$OUT/capture-$mode"
  run timeout 240 env "${rec_env[@]}" TICKWISE_CUDA_API="$mode" TICKWISE_CAPTURE_DIR="$OUT/capture-$mode" "$py" \
    "$here/prefill.py" --mode record --out "$OUT/record-$mode.json" ${TW_PREFILL_ARGS:-} >"$OUT/record-$mode.log" 2>&1
  echo "rc=$?" >>"$OUT/record-$mode.log"
  tail -3 "$OUT/record-$mode.log"
done

log "prefill under torch.profiler (separate process: CUPTI takes one subscriber)"
run timeout 240 "$py" "$here/prefill.py" --mode profile --out "$OUT/profiler.json" --trace "$OUT/profiler-trace.json.gz" \
  ${TW_PREFILL_ARGS:-} >"$OUT/profile.log" 2>&1; echo "rc=$?" >>"$OUT/profile.log"
tail -3 "$OUT/profile.log"

for mode in $modes; do
  log "check capture-$mode"
  [[ -x "$build/bin/tw-dump" ]] && run "$build/bin/tw-dump" "$OUT/capture-$mode" >"$OUT/tw-dump-$mode.txt" 2>&1
  cat "$OUT/tw-dump-$mode.txt" 2>/dev/null
  run "$py" "$here/twr_cuda.py" check "$OUT/capture-$mode" --windows "$OUT/record-$mode.json" --profiler "$OUT/profiler.json" \
    --out "$OUT/check-$mode.json" >"$OUT/check-$mode.txt" 2>&1; echo "rc=$?" >>"$OUT/check-$mode.txt"
  grep -v '^  "\(name\|state\|cupti_\|memcpy_\|memset_\|name_\|other_\|exit_\)' "$OUT/check-$mode.txt" | head -120
  run "$py" "$here/twr_cuda.py" summary "$OUT/capture-$mode" >"$OUT/summary-$mode.txt" 2>&1
done

if [[ "${TW_SKIP_BENCH:-0}" != 1 ]]; then
  n="${TW_BENCH_N:-50000}"
  passes="${TW_BENCH_PASSES:-6}"
  pin=(); command -v taskset >/dev/null && pin=(taskset -c "${TW_BENCH_CPUS:-4-7}")
  log "launch overhead: empty kernel, us per launch; same binary; $passes passes of interleaved configurations, $n launches x 5 rounds each; ${pin[*]}"
  bench=(timeout 60 "${pin[@]}" "$build/bin/empty_launch_bench" "$n" 5)
  # A ring big enough that the launch burst never drops between drains (10 ms).
  brec=("${rec_env[@]}" TICKWISE_RING_RECORDS=65536)
  : >"$OUT/bench.jsonl"
  for pass in $(seq "$passes"); do
    run "${bench[@]}" none >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err"
    for mode in off activity callback; do
      rm -rf /tmp/tw-bench-cap
      run env "${brec[@]}" TICKWISE_CUDA_API=$mode TICKWISE_CAPTURE_DIR=/tmp/tw-bench-cap "${bench[@]}" "recorder-api-$mode" \
        >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err"
      if [[ $pass == 1 ]]; then
        cp /tmp/tw-bench-cap/meta.json "$OUT/bench-meta-$mode.json"
        "$py" "$here/twr_cuda.py" summary /tmp/tw-bench-cap >"$OUT/bench-summary-$mode.txt" 2>&1
      fi
    done
    rm -rf /tmp/tw-bench-cap
    run env "${rec_env[@]}" "${bench[@]}" injected-inert >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err"
  done
  "$py" - "$OUT/bench.jsonl" >"$OUT/bench-summary.json" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
by, passes, cur = {}, [], {}
for r in rows:
    by.setdefault(r["label"], []).extend(r["rounds_us_per_launch"])
    if r["label"] == "none":
        cur = {}
        passes.append(cur)
    cur[r["label"]] = r["us_per_launch_median"]
out = {}
for k, v in by.items():
    diffs = [p[k] - p["none"] for p in passes if k in p and "none" in p]
    out[k] = dict(median_us=round(statistics.median(v), 4), min_us=round(min(v), 4), rounds=len(v),
                  added_us_median_of_paired_pass_diffs=round(statistics.median(diffs), 4) if diffs else None,
                  paired_pass_diffs_us=[round(x, 4) for x in diffs])
print(json.dumps(out, indent=1))
PY
  cat "$OUT/bench-summary.json"
fi
log "done"
# One archive for everything (what comes back from a device run is limited in count).
tar czf /tmp/tw-results.tgz -C "$OUT" --exclude=results.tgz . && mv /tmp/tw-results.tgz "$OUT/results.tgz"
ls -la "$OUT/results.tgz"
