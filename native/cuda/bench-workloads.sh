#!/usr/bin/env bash
# The recorder's wall-time cost on real workloads, and its kernels against
# torch.profiler's, on an NVIDIA GPU (issue 19, items 1 and 2). In one go:
#   build    the recorder (-DTICKWISE_CUDA=ON) and cupti_floor.cpp (CUPTI tracing, records counted, nothing else);
#   captures graph, multistream and multithread under the recorder (default settings: 1 warm-up + 2 repetitions)
#            and each again in its own process under torch.profiler; per-name comparison (compare_workloads.py);
#   bench    prefill, graph and multistream (workloads.py), one process per (workload, arm), arms interleaved
#            within each round (the starting arm rotates per round), rounds until TW_ROUNDS or the time budget;
#            nvidia-smi's clocks before and after each round; bench_summary.py: median and IQR of per-repetition
#            wall time per arm, ratio to plain.
# Arms: plain; inert (the recorder injected, TICKWISE_CAPTURE_DIR unset); cupti (cupti_floor: CUPTI kernel/
# memcpy/memset activity alone); kernels (recorder, TICKWISE_CUDA_API=off); default (recorder as shipped);
# callback (TICKWISE_CUDA_API=callback); torchprof (torch.profiler, CPU+CUDA, around the measured repetitions).
#   OUT=/tmp/tw TW_PHASES="build captures bench" TW_ROUNDS=10 TW_BUDGET_S=420 native/cuda/bench-workloads.sh
# Everything lands in $OUT; results.tgz packs it (a device run returns few files).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
OUT="${OUT:-/tmp/tw-bench-workloads}"
mkdir -p "$OUT"
build="${TW_CUDA_BUILD:-$root/native/build-cuda}"
lib="$build/lib/libtickwise_recorder.so"
floor="$build/lib/libcupti_floor.so"
py="${PYTHON:-python3}"
phases="${TW_PHASES:-build captures bench}"
arms="${TW_ARMS:-plain inert cupti kernels default callback torchprof}"
bench_workloads="${TW_WORKLOADS:-prefill graph multistream}"
rounds="${TW_ROUNDS:-10}"
round0="${TW_ROUND_START:-1}"  # first round's number (a later call continues the numbering)
budget_s="${TW_BUDGET_S:-420}"
pin=(); command -v taskset >/dev/null && pin=(taskset -c "${TW_CPUS:-2-9}")
t_begin=$SECONDS
log() { echo "== [$((SECONDS - t_begin))s] $*" | tee -a "$OUT/bench.log"; }
has() { [[ " $phases " == *" $1 "* ]]; }

if has build; then
  log "environment $(date -u +%FT%TZ)"
  {
    uname -a; nproc
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,pstate,temperature.gpu --format=csv 2>&1
    nvcc --version 2>&1 | tail -2
    "$py" -c 'import torch,sys; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
    cmake --version 2>&1 | head -1; g++ --version 2>&1 | head -1
    echo "libcupti candidates:"; find / -xdev -name 'libcupti.so*' 2>/dev/null | head -10
  } >"$OUT/env.txt" 2>&1
  cat "$OUT/env.txt"
  log "build ($build)"
  cuda_home="${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}"
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  { cmake -S "$root/native" -B "$build" "${gen[@]}" -DTICKWISE_CUDA=ON -DTICKWISE_TESTS=OFF -DCUDAToolkit_ROOT="$cuda_home" &&
    cmake --build "$build" -j "$(nproc)"; } >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  inc=$(dirname "$(find "$cuda_home" /usr/local/cuda* -name cupti.h 2>/dev/null | head -1)")
  g++ -O2 -shared -fPIC -isystem "$inc" -isystem "$cuda_home/include" "$here/cupti_floor.cpp" -o "$floor" -ldl \
    >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  ls -la "$lib" "$floor" | tee -a "$OUT/bench.log"
  sha256sum "$lib" "$floor" >>"$OUT/env.txt"
fi

# arm_env ARM CAPDIR -> the environment words of that arm
arm_env() {
  case "$1" in
    plain | torchprof) ;;
    inert) echo "CUDA_INJECTION64_PATH=$lib" ;;
    cupti) echo "CUDA_INJECTION64_PATH=$floor" ;;
    kernels) echo "CUDA_INJECTION64_PATH=$lib TICKWISE_CAPTURE_DIR=$2 TICKWISE_CUDA_API=off" ;;
    default) echo "CUDA_INJECTION64_PATH=$lib TICKWISE_CAPTURE_DIR=$2" ;;
    callback) echo "CUDA_INJECTION64_PATH=$lib TICKWISE_CAPTURE_DIR=$2 TICKWISE_CUDA_API=callback" ;;
    *) echo "unknown arm $1" >&2; return 1 ;;
  esac
}

if has captures; then
  log "captures: recorder (default settings) and torch.profiler, per workload, separate processes"
  mkdir -p "$OUT/captures"
  for wl in graph multistream multithread; do
    cap_reps=20; [[ $wl == graph ]] && cap_reps=6
    rm -rf "$OUT/captures/$wl"
    timeout 120 env CUDA_INJECTION64_PATH="$lib" TICKWISE_CAPTURE_DIR="$OUT/captures/$wl" "$py" "$here/workloads.py" "$wl" \
      --mode run --spin-ms 300 --warmup 1 --reps "$cap_reps" --out "$OUT/captures/$wl.windows.json" --label recorder 2>&1 | tail -3
    timeout 120 "$py" "$here/workloads.py" "$wl" --mode profile --spin-ms 300 --warmup 1 --reps "$cap_reps" --table \
      --out "$OUT/captures/$wl.profile-run.json" --trace "$OUT/captures/$wl.torch-profiler.pt.trace.json.gz" --label torchprof 2>&1 | tail -3
    "$py" "$here/twr_cuda.py" check "$OUT/captures/$wl" --windows "$OUT/captures/$wl.windows.json" \
      --out "$OUT/captures/$wl.check.json" >/dev/null 2>&1
    echo "check rc=$? ($wl)"
  done
  "$py" "$here/compare_workloads.py" "$OUT/captures" graph multistream multithread | tee "$OUT/captures/compare.txt"
fi

if has bench; then
  raw="$OUT/raw"; mkdir -p "$raw"
  read -r -a arm_list <<<"$arms"
  read -r -a wl_list <<<"$bench_workloads"
  reps_of() { case "$1" in prefill) echo 30 ;; graph) echo 20 ;; *) echo 50 ;; esac; }
  log "bench: workloads ${wl_list[*]}, arms ${arm_list[*]}, up to $rounds rounds within ${budget_s}s; ${pin[*]}"
  t_bench=$SECONDS
  if [[ "${TW_FRESH:-0}" == 1 ]]; then
  # every process started afresh (python3 + import torch: about 3-4 s more per process than forked ones)
  for r in $(seq "$round0" $((round0 + rounds - 1))); do
    elapsed=$((SECONDS - t_bench)) done_r=$((r - round0))
    if ((done_r > 0)) && ((elapsed + elapsed / done_r > budget_s)); then
      log "stopping before round $r: ${elapsed}s used, a round takes about $((elapsed / done_r))s"
      break
    fi
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw \
      --format=csv,noheader 2>&1 | sed "s/^/round $r before, /" >>"$OUT/clocks.txt"
    n=${#arm_list[@]}
    for wl in "${wl_list[@]}"; do
      for i in $(seq 0 $((n - 1))); do
        arm=${arm_list[$(((i + r - 1) % n))]}
        cap="/tmp/tw-bench-cap/$wl.$arm.$r"
        rm -rf "$cap"
        mode=run; [[ $arm == torchprof ]] && mode=profile
        t0=$SECONDS
        # shellcheck disable=SC2046
        timeout 120 env $(arm_env "$arm" "$cap") "${pin[@]}" "$py" "$here/workloads.py" "$wl" --mode $mode --spin-ms 100 --warmup 5 \
          --reps "$(reps_of "$wl")" --out "$raw/$wl.$arm.$r.json" --label "$arm" >>"$OUT/bench-runs.log" 2>&1 ||
          echo "FAILED rc=$? $wl $arm round $r" | tee -a "$OUT/bench.log"
        echo "$wl $arm $r $((SECONDS - t0))s" >>"$OUT/process-seconds.txt"
      done
    done
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw \
      --format=csv,noheader 2>&1 | sed "s/^/round $r after, /" >>"$OUT/clocks.txt"
    log "round $r done"
  done
  else
  # one process per job, forked from a parent that imported torch (workloads.py --serve)
  : >"$OUT/jobs.jsonl"
  n=${#arm_list[@]}
  for r in $(seq "$round0" $((round0 + rounds - 1))); do
    for wl in "${wl_list[@]}"; do
      for i in $(seq 0 $((n - 1))); do
        arm=${arm_list[$(((i + r - 1) % n))]}
        mode=run; [[ $arm == torchprof ]] && mode=profile
        ARM_ENV="$(arm_env "$arm" "/tmp/tw-bench-cap/$wl.$arm.$r")" "$py" -c '
import json, os, sys
r, wl, arm, mode, reps, raw, log, cpus = sys.argv[1:9]
env = dict(kv.split("=", 1) for kv in os.environ["ARM_ENV"].split())
lo, hi = map(int, cpus.split("-")) if cpus else (0, -1)
print(json.dumps(dict(round=int(r), label=f"{wl}.{arm}", env=env, cpus=list(range(lo, hi + 1)), log=log,
                      argv=[wl, "--mode", mode, "--spin-ms", "100", "--warmup", "5", "--reps", reps,
                            "--out", f"{raw}/{wl}.{arm}.{r}.json", "--label", arm])))' \
          "$r" "$wl" "$arm" "$mode" "$(reps_of "$wl")" "$raw" "$OUT/bench-runs.log" "${TW_CPUS:-2-9}" >>"$OUT/jobs.jsonl"
      done
    done
  done
  "$py" "$here/workloads.py" --serve "$OUT/jobs.jsonl" "$budget_s" "$OUT/clocks.txt" 2>&1 | tee -a "$OUT/bench.log" |
    grep -v ' rc=0 ' || true
  fi
  # the recorder's own account of each capture: records, drops, CUPTI drops
  "$py" - "$raw/captures-meta.jsonl" /tmp/tw-bench-cap <<'PY'
import glob, json, os, sys
with open(sys.argv[1], "w") as out:
    for m in sorted(glob.glob(os.path.join(sys.argv[2], "*", "meta.json"))):
        j = json.load(open(m))
        cuda = next((b for b in j.get("backends", []) if b.get("name") == "cuda"), {})
        keep = {k: cuda.get(k) for k in ("status", "api_mode", "kernel_records", "memcpy_records", "memset_records",
                                          "cupti_dropped_records", "cupti_buffers", "exit_flush_timed_out")}
        out.write(json.dumps(dict(capture=os.path.basename(os.path.dirname(m)), cuda=keep,
                                  rings={k: v for k, v in j.items() if "drop" in k or k == "records"}),
                             separators=(",", ":")) + "\n")
PY
  wc -l "$raw/captures-meta.jsonl"
  "$py" "$here/bench_summary.py" "$raw" --clocks "$OUT/clocks.txt" --jsonl "$OUT/per-process.jsonl" \
    --out "$OUT/summary.json" | tee "$OUT/summary.md"
fi
log "done"
tar czf /tmp/tw-results.tgz -C "$OUT" --exclude=results.tgz . && mv /tmp/tw-results.tgz "$OUT/results.tgz"
ls -la "$OUT/results.tgz"
