#!/usr/bin/env python3
"""Summarises bench-workloads.sh's raw per-process results.

  bench_summary.py RAWDIR [--clocks clocks.txt] [--jsonl per-process.jsonl] [--out summary.json]

RAWDIR holds WORKLOAD.ARM.ROUND.json from workloads.py. Per workload and arm:
processes, repetitions, the median and interquartile range (q1..q3) of
per-repetition wall time over all of that arm's repetitions, the median of
the per-process medians, and both medians' ratio to the plain arm. The GPU SM
clock NVML read before / after each process's measured part: min..max.
Prints a Markdown table; --jsonl writes one line per process (the raw
numbers, windows left out); --out the table as JSON.
"""
import glob
import json
import os
import random
import statistics
import sys

ARM_ORDER = ["plain", "inert", "cupti", "kernels", "default", "callback", "torchprof"]


def quantiles(v):
    v = sorted(v)
    if len(v) < 4:
        return v[0], statistics.median(v), v[-1]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[1], q[2]


def main(argv):
    rawdir = argv[1]
    opt = {argv[i][2:]: argv[i + 1] for i in range(2, len(argv) - 1, 2)}
    procs = []
    for p in sorted(glob.glob(os.path.join(rawdir, "*.json"))):
        parts = os.path.basename(p).split(".")
        if len(parts) != 4 or not parts[2].isdigit():
            continue
        r = json.load(open(p))
        procs.append(dict(workload=parts[0], arm=parts[1], round=int(parts[2]), pid=r["pid"], setup_ns=r["setup_ns"],
                          rep_wall_ns=r["rep_wall_ns"], clocks_before=r["clocks_before"], clocks_after=r["clocks_after"]))
    procs.sort(key=lambda x: (x["workload"], x["round"], ARM_ORDER.index(x["arm"]) if x["arm"] in ARM_ORDER else 99))
    if "jsonl" in opt:
        with open(opt["jsonl"], "w") as f:
            for x in procs:
                f.write(json.dumps(x, separators=(",", ":")) + "\n")
    table = {}
    for wl in sorted({x["workload"] for x in procs}, key=lambda w: ["prefill", "graph", "multistream"].index(w)
                     if w in ("prefill", "graph", "multistream") else 9):
        rows = {}
        for arm in sorted({x["arm"] for x in procs if x["workload"] == wl}, key=lambda a: ARM_ORDER.index(a) if a in ARM_ORDER else 99):
            ps = [x for x in procs if x["workload"] == wl and x["arm"] == arm]
            reps = [v for x in ps for v in x["rep_wall_ns"]]
            q1, med, q3 = quantiles(reps)
            pmed = statistics.median(statistics.median(x["rep_wall_ns"]) for x in ps)
            sm = [c.get("sm_mhz") for x in ps for c in (x["clocks_before"], x["clocks_after"]) if c.get("sm_mhz")]
            rows[arm] = dict(processes=len(ps), reps=len(reps), median_ms=med / 1e6, q1_ms=q1 / 1e6, q3_ms=q3 / 1e6,
                             iqr_ms=(q3 - q1) / 1e6, process_median_ms=pmed / 1e6,
                             sm_mhz_min=min(sm) if sm else None, sm_mhz_max=max(sm) if sm else None)
        base = rows.get("plain")
        pmeds = {arm: {x["round"]: statistics.median(x["rep_wall_ns"]) for x in procs if x["workload"] == wl and x["arm"] == arm}
                 for arm in rows}
        rng = random.Random(19)
        for arm, r in rows.items():
            r["ratio"] = r["median_ms"] / base["median_ms"] if base else None
            r["process_median_ratio"] = r["process_median_ms"] / base["process_median_ms"] if base else None
            if not base:
                continue
            # paired: this arm's process median over plain's in the same round (the processes ran back to back)
            paired = [pmeds[arm][k] / pmeds["plain"][k] for k in pmeds[arm] if k in pmeds["plain"]]
            r["paired_ratio_median"] = statistics.median(paired) if paired else None
            # 95 % interval of the ratio of per-process medians, resampling processes (2000 draws, seeded)
            a, b = list(pmeds[arm].values()), list(pmeds["plain"].values())
            boots = sorted(statistics.median(rng.choices(a, k=len(a))) / statistics.median(rng.choices(b, k=len(b)))
                           for _ in range(2000))
            r["process_median_ratio_ci95"] = [boots[49], boots[1949]]
        table[wl] = rows
    out = [f"per-repetition wall time, ms: median [q1, q3] over all repetitions of an arm's processes; ratio = median / plain's"
           f" (in parentheses: the same for the median of per-process medians); SM MHz = NVML before/after the measured part",
           "paired = median over rounds of (process median / plain's process median in the same round); 95 % CI ="
           " bootstrap over processes of the ratio of per-process medians",
           "", "| workload | arm | procs | reps | median ms | q1 | q3 | IQR | ratio | (per-process) | paired | 95 % CI | SM MHz |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for wl, rows in table.items():
        for arm, r in rows.items():
            ci = r.get("process_median_ratio_ci95")
            out.append(f"| {wl} | {arm} | {r['processes']} | {r['reps']} | {r['median_ms']:.3f} | {r['q1_ms']:.3f} | "
                       f"{r['q3_ms']:.3f} | {r['iqr_ms']:.3f} | {r['ratio']:.3f}x | ({r['process_median_ratio']:.3f}x) | "
                       f"{r.get('paired_ratio_median') or 0:.3f}x | {f'{ci[0]:.2f}-{ci[1]:.2f}' if ci else ''} | "
                       f"{r['sm_mhz_min']}-{r['sm_mhz_max']} |")
    if "clocks" in opt and os.path.exists(opt["clocks"]):
        lines = open(opt["clocks"]).read().splitlines()
        out += ["", "nvidia-smi before/after rounds (first and last):"] + ["    " + l for l in lines[:2] + lines[-2:]]
    print("\n".join(out))
    if "out" in opt:
        with open(opt["out"], "w") as f:
            json.dump(table, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
