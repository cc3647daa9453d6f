#!/usr/bin/env python3
"""A small transformer prefill in PyTorch (random weights, no downloads), for
validating the recorder's cuda backend against torch.profiler.

  prefill.py --mode record  --out windows.json   # run under the recorder; writes the host windows of each repetition
  prefill.py --mode profile --out profiler.json --trace trace.json.gz   # same run under torch.profiler

Both modes run the same sequence: build the model, `--warmup` repetitions,
then `--reps` repetitions; each repetition is bracketed by
torch.cuda.synchronize() (cudaDeviceSynchronize) and time.monotonic_ns()
(CLOCK_MONOTONIC, the recorder's host timeline). In profile mode only the
`--reps` repetitions run inside torch.profiler.profile().
"""
import argparse
import gzip
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


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


class Model(nn.Module):
    def __init__(self, layers, d, heads, mlp):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d, heads, mlp) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["record", "profile"], required=True)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--out", required=True)
    ap.add_argument("--trace", default=None)
    a = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    dtype = getattr(torch, a.dtype)
    model = Model(a.layers, a.d, a.heads, 4 * a.d).to(dev, dtype).eval()
    x = torch.randn(1, a.seq, a.d, device=dev, dtype=dtype)
    params = sum(p.numel() for p in model.parameters())
    info = dict(
        torch=torch.__version__, cuda=torch.version.cuda, device=torch.cuda.get_device_name(0),
        capability=".".join(map(str, torch.cuda.get_device_capability(0))), layers=a.layers, d=a.d, heads=a.heads,
        seq=a.seq, mlp=4 * a.d, dtype=a.dtype, params=params, warmup=a.warmup, reps=a.reps, mode=a.mode,
        weight_gemm_flops_per_prefill=2 * a.layers * (a.d * 3 * a.d + a.d * a.d + 2 * a.d * 4 * a.d) * a.seq,
    )
    torch.cuda.synchronize()

    windows = []

    def rep(label, compare):
        torch.cuda.synchronize()
        t0 = time.monotonic_ns()
        y = model(x)
        torch.cuda.synchronize()
        t1 = time.monotonic_ns()
        windows.append(dict(label=label, start_ns=t0, end_ns=t1, wall_ns=t1 - t0, compare=compare))
        return y

    with torch.inference_mode():
        for i in range(a.warmup):
            rep(f"warmup{i}", False)
        if a.mode == "record":
            for i in range(a.reps):
                rep(f"rep{i}", True)
        else:
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for i in range(a.reps):
                    rep(f"rep{i}", True)
    torch.cuda.synchronize()
    info["windows"] = windows

    if a.mode == "profile":
        path = a.trace or a.out + ".trace.json"
        raw = path[:-3] if path.endswith(".gz") else path
        prof.export_chrome_trace(raw)
        trace = json.load(open(raw))
        if path.endswith(".gz"):
            with open(raw, "rb") as f, gzip.open(path, "wb", compresslevel=9) as g:
                g.write(f.read())
            os.remove(raw)
        evs = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
        kern = [e for e in evs if e.get("cat") == "kernel"]
        by_name = {}
        for e in kern:
            v = by_name.setdefault(e["name"], dict(count=0, sum_ns=0))
            v["count"] += 1
            v["sum_ns"] += round(float(e["dur"]) * 1000)
        # busy = union of kernel intervals
        iv = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in kern)
        busy, cs, ce = 0.0, None, None
        for s, e in iv:
            if ce is None or s > ce:
                if ce is not None:
                    busy += ce - cs
                cs, ce = s, e
            else:
                ce = max(ce, e)
        if ce is not None:
            busy += ce - cs
        info.update(
            kernels=len(kern), kernel_sum_ns=sum(v["sum_ns"] for v in by_name.values()), busy_ns=round(busy * 1000),
            memcpy=sum(1 for e in evs if e.get("cat") == "gpu_memcpy"),
            memset=sum(1 for e in evs if e.get("cat") == "gpu_memset"),
            cuda_runtime_calls=sum(1 for e in evs if e.get("cat") == "cuda_runtime"),
            cuda_driver_calls=sum(1 for e in evs if e.get("cat") == "cuda_driver"),
            by_name=dict(sorted(by_name.items(), key=lambda kv: -kv[1]["sum_ns"])), trace=os.path.basename(path),
        )
    with open(a.out, "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps({k: v for k, v in info.items() if k not in ("by_name",)}, indent=1))


if __name__ == "__main__":
    main()
