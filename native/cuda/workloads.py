#!/usr/bin/env python3
"""GPU workloads for measuring the recorder's cost and checking its kernels
against torch.profiler (PyTorch, random data, no downloads).

  workloads.py WORKLOAD --mode run     --out R.json [--warmup N] [--reps N]
  workloads.py WORKLOAD --mode profile --out R.json [--trace T.json.gz] [--table]

WORKLOAD:
  prefill      an 8-layer, d=1024, 16-head, MLP 4096, bf16 transformer prefill of 512 tokens (batch 1)
  graph        one CUDA graph of 24 kernels (12 bf16 matmuls of 1536^2 by 1536^2, each + GELU) replayed 40 times
  multistream  two streams with an event dependency: stream A 8 matmuls -> event -> stream B waits and runs
               8 of its own while A runs 8 more (the two overlap)
  multithread  four host threads, each launching 6 matmul+add pairs on its own stream
  tiny         2000 tiny element-wise kernels (launch-bound)

One repetition = torch.cuda.synchronize(); t0 = CLOCK_MONOTONIC; the workload;
torch.cuda.synchronize(); t1. `--warmup` repetitions first, then `--reps`
measured ones. In profile mode torch.profiler (CPU + CUDA activities, as a
user would run it) is active for the measured repetitions only. The GPU's SM
and memory clocks are read through NVML before and after the measured part.

The JSON written to --out holds the per-repetition wall times and the
CLOCK_MONOTONIC window of each repetition (`compare: true` on measured ones);
with --table (profile mode) also torch.profiler's kernels by name (count,
summed duration in ns from the exported Chrome trace).
"""
import argparse
import gzip
import json
import os
import sys
import threading
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def nvml_clocks():
    try:
        import pynvml as n  # nvidia-ml-py
        n.nvmlInit()
        h = n.nvmlDeviceGetHandleByIndex(int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0))
        r = dict(sm_mhz=n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM), mem_mhz=n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM),
                 temp_c=n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU),
                 throttle=int(n.nvmlDeviceGetCurrentClocksEventReasons(h)))
        return r
    except Exception as e:  # noqa: BLE001 - clocks are informational
        return dict(error=str(e)[:200])


class Block(nn.Module):
    def __init__(self, d, heads, mlp):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, mlp)
        self.down = nn.Linear(mlp, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def make_prefill(dev, dtype):
    layers, d, heads, seq = 8, 1024, 16, 512
    blocks = nn.ModuleList(Block(d, heads, 4 * d) for _ in range(layers)).to(dev, dtype).eval()
    ln = nn.LayerNorm(d).to(dev, dtype)
    x = torch.randn(1, seq, d, device=dev, dtype=dtype)

    def step():
        y = x
        for blk in blocks:
            y = blk(y)
        return ln(y)
    return step, dict(layers=layers, d=d, heads=heads, seq=seq, mlp=4 * d)


def make_graph(dev, dtype):
    n, layers, replays = 1536, 12, 40
    ws = [torch.randn(n, n, device=dev, dtype=dtype) / 32 for _ in range(layers)]
    x = torch.randn(n, n, device=dev, dtype=dtype)

    def body():
        y = x
        for w in ws:
            y = F.gelu(y @ w)
        return y
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = body()

    def step():
        for _ in range(replays):
            g.replay()
        return out
    return step, dict(n=n, kernels_per_graph=2 * layers, replays=replays)


def make_multistream(dev, dtype):
    n, chain = 2048, 8
    wa = [torch.randn(n, n, device=dev, dtype=dtype) / 45 for _ in range(2 * chain)]
    wb = [torch.randn(n, n, device=dev, dtype=dtype) / 45 for _ in range(chain)]
    xa = torch.randn(n, n, device=dev, dtype=dtype)
    sa, sb = torch.cuda.Stream(), torch.cuda.Stream()
    ev = torch.cuda.Event()

    def step():
        cur = torch.cuda.current_stream()
        sa.wait_stream(cur)
        sb.wait_stream(cur)
        with torch.cuda.stream(sa):
            y = xa
            for w in wa[:chain]:
                y = torch.relu(y @ w)
            ev.record(sa)
            z = y
            for w in wa[chain:]:
                z = torch.relu(z @ w)
        with torch.cuda.stream(sb):
            sb.wait_event(ev)
            u = y
            for w in wb:
                u = torch.tanh(u @ w)
        cur.wait_stream(sa)
        cur.wait_stream(sb)
        return z, u
    return step, dict(n=n, chain=chain, streams=2)


def make_multithread(dev, dtype):
    threads, pairs, n = 4, 6, 1536
    data = []
    for i in range(threads):
        data.append(dict(s=torch.cuda.Stream(), x=torch.randn(n, n, device=dev, dtype=dtype),
                         w=[torch.randn(n, n, device=dev, dtype=dtype) / 40 for _ in range(pairs)],
                         b=torch.randn(n, n, device=dev, dtype=dtype)))

    def work(i):
        dd = data[i]
        with torch.inference_mode(), torch.cuda.stream(dd["s"]):
            y = dd["x"]
            for w in dd["w"]:
                y = (y @ w) + dd["b"]
            dd["y"] = y

    def step():
        cur = torch.cuda.current_stream()
        for dd in data:
            dd["s"].wait_stream(cur)
        ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for dd in data:
            cur.wait_stream(dd["s"])
    return step, dict(threads=threads, pairs=pairs, n=n)


def make_tiny(dev, dtype):
    x = torch.zeros(256, device=dev, dtype=torch.float32)

    def step():
        for _ in range(2000):
            x.add_(1.0)
        return x
    return step, dict(kernels=2000)


MAKERS = dict(prefill=make_prefill, graph=make_graph, multistream=make_multistream, multithread=make_multithread,
              tiny=make_tiny)


def kernel_table(trace):
    evs = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    kern = [e for e in evs if e.get("cat") == "kernel"]
    by_name = {}
    for e in kern:
        v = by_name.setdefault(e["name"], dict(count=0, sum_ns=0))
        v["count"] += 1
        v["sum_ns"] += round(float(e["dur"]) * 1000)
    return dict(kernels=len(kern), kernel_sum_ns=sum(v["sum_ns"] for v in by_name.values()),
                streams=sorted({str(e.get("args", {}).get("stream")) for e in kern}),
                by_name=dict(sorted(by_name.items(), key=lambda kv: -kv[1]["sum_ns"])))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", choices=sorted(MAKERS))
    ap.add_argument("--mode", choices=["run", "profile"], default="run")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trace", default=None)
    ap.add_argument("--table", action="store_true", help="profile mode: export the trace and tabulate kernels by name")
    ap.add_argument("--label", default="")
    ap.add_argument("--spin-ms", type=int, default=0,
                    help="before the warm-up, a spinning one-thread kernel for this long (brings the clocks up)")
    a = ap.parse_args(argv)
    t_start = time.monotonic_ns()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    dtype = torch.bfloat16
    with torch.inference_mode():
        step, shape = MAKERS[a.workload](dev, dtype)
    torch.cuda.synchronize()
    t_ready = time.monotonic_ns()
    windows = []

    def rep(label, compare):
        torch.cuda.synchronize()
        t0 = time.monotonic_ns()
        step()
        torch.cuda.synchronize()
        t1 = time.monotonic_ns()
        windows.append(dict(label=label, start_ns=t0, end_ns=t1, wall_ns=t1 - t0, compare=compare))

    prof = None
    with torch.inference_mode():
        if a.spin_ms > 0:
            # a busy GPU at little power (one spinning thread): the clocks rise to boost without tripping the
            # power cap that a burst of large matmuls does (seen: SM 1575 MHz, NVML reason SW power cap)
            t_end = time.monotonic_ns() + a.spin_ms * 1_000_000
            while time.monotonic_ns() < t_end:
                torch.cuda._sleep(4_000_000)
                torch.cuda.synchronize()
        for i in range(a.warmup):
            rep(f"warmup{i}", False)
        clocks_before = nvml_clocks()
        if a.mode == "run":
            for i in range(a.reps):
                rep(f"rep{i}", True)
        else:
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for i in range(a.reps):
                    rep(f"rep{i}", True)
        clocks_after = nvml_clocks()
    torch.cuda.synchronize()
    walls = [w["wall_ns"] for w in windows if w["compare"]]
    info = dict(workload=a.workload, mode=a.mode, label=a.label, pid=os.getpid(), torch=torch.__version__,
                cuda=torch.version.cuda, device=torch.cuda.get_device_name(0), shape=shape, warmup=a.warmup,
                reps=a.reps, spin_ms=a.spin_ms, setup_ns=t_ready - t_start, rep_wall_ns=walls, rep_wall_ns_median=sorted(walls)[len(walls) // 2],
                clocks_before=clocks_before, clocks_after=clocks_after,
                injection=os.environ.get("CUDA_INJECTION64_PATH", ""),
                capture_dir=os.environ.get("TICKWISE_CAPTURE_DIR", ""),
                cuda_api_mode=os.environ.get("TICKWISE_CUDA_API", ""), windows=windows)
    if prof is not None and (a.table or a.trace):
        path = a.trace or a.out + ".trace.json"
        raw = path[:-3] if path.endswith(".gz") else path
        prof.export_chrome_trace(raw)
        with open(raw) as f:
            trace = json.load(f)
        if path.endswith(".gz"):
            with open(raw, "rb") as f, gzip.open(path, "wb", compresslevel=9) as g:
                g.write(f.read())
            os.remove(raw)
        info["profiler"] = kernel_table(trace)
    with open(a.out, "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(dict(workload=a.workload, mode=a.mode, label=a.label, setup_ms=round(info["setup_ns"] / 1e6, 1),
                          rep_ms_median=round(info["rep_wall_ns_median"] / 1e6, 3),
                          kernels=info.get("profiler", {}).get("kernels"))))


def serve(jobs_path, budget_s, clocks_path):
    """Runs the jobs of JOBS (JSON lines: round, argv, env, cpus, log) one process each, forked from this
    process after `import torch` and before any CUDA call, so that a job does not pay the ~3 s of Python and
    torch start-up; each child sets its environment (CUDA_INJECTION64_PATH is read at the child's cuInit),
    CPU affinity and log, runs main(), and leaves through the C library's exit() (the recorder's and CUDA's
    atexit handlers run; Python's own slow finalisation does not). A round is not started when the time used
    plus the mean round time would pass budget_s."""
    import ctypes
    import subprocess
    import signal
    jobs = [json.loads(l) for l in open(jobs_path) if l.strip()]
    assert not torch.cuda.is_initialized()
    libc = ctypes.CDLL(None)
    t0 = time.monotonic()
    rounds = sorted({j["round"] for j in jobs})
    done = 0

    def clocks(tag):
        try:
            r = subprocess.run(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw",
                                "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
            text = r.stdout.strip() or r.stderr.strip()
        except (OSError, subprocess.SubprocessError) as e:
            text = f"nvidia-smi: {e}"
        with open(clocks_path, "a") as f:
            f.write(f"{tag}, {text}\n")

    for r in rounds:
        used = time.monotonic() - t0
        if done and used + used / done > budget_s:
            print(f"serve: stopping before round {r}: {used:.0f}s used, {used / done:.0f}s a round", flush=True)
            break
        clocks(f"round {r} before")
        for j in (j for j in jobs if j["round"] == r):
            ts = time.monotonic()
            pid = os.fork()
            if pid == 0:
                try:
                    os.environ.update(j.get("env", {}))
                    if j.get("cpus"):
                        os.sched_setaffinity(0, j["cpus"])
                    fd = os.open(j["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                    signal.alarm(120)
                    main(j["argv"])
                    sys.stdout.flush()
                    sys.stderr.flush()
                    libc.exit(0)
                except BaseException as e:  # noqa: BLE001
                    print(f"serve child: {e!r}", file=sys.stderr, flush=True)
                    libc.exit(3)
            _, status = os.waitpid(pid, 0)
            rc = os.waitstatus_to_exitcode(status)
            print(f"serve: round {r} {j['argv'][0]} {j.get('label', '')} rc={rc} {time.monotonic() - ts:.1f}s", flush=True)
        clocks(f"round {r} after")
        done += 1
        print(f"serve: round {r} done at {time.monotonic() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    else:
        main()
