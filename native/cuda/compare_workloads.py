#!/usr/bin/env python3
"""Per-kernel-name comparison of recorder captures with torch.profiler (issue 19.2).

  compare_workloads.py DIR WORKLOAD...

For each WORKLOAD, DIR holds WORKLOAD/ (the recorder's capture),
WORKLOAD.windows.json (workloads.py --mode run under the recorder) and
WORKLOAD.profile-run.json (workloads.py --mode profile --table, another
process). The recorder's kernels of the measured repetitions (those whose
launch call began inside a `compare` window) are tabulated by name and set
against the profiler's: counts must be equal for every name; summed durations
within 1 % for names whose mean duration is over 5 us. Writes
WORKLOAD.torch-profiler.json (the profiler's table alone) and
WORKLOAD.compare.json; prints one line per workload; exit 1 on a mismatch.
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twr_cuda  # noqa: E402


def recorder_table(capdir, windows):
    cap = twr_cuda.read_capture(capdir)
    d = twr_cuda.decode(cap)
    twr_cuda.to_monotonic(d, cap)
    launch = {}
    for a in d["api"]:
        if a["cls"] in ("launch", "graph_launch"):
            if a["corr"] not in launch or a["enter"] < launch[a["corr"]]:
                launch[a["corr"]] = a["enter"]
    cmp_w = [w for w in windows if w.get("compare")]
    by = defaultdict(lambda: [0, 0])
    no_launch = 0
    for k in d["kernels"]:
        le = launch.get(k["corr"])
        if le is None:
            no_launch += 1
            continue
        if any(w["start_ns"] <= le <= w["end_ns"] for w in cmp_w):
            by[k["name"]][0] += 1
            by[k["name"]][1] += k["end"] - k["start"]
    return {n: dict(count=c, sum_ns=s) for n, (c, s) in by.items()}, no_launch, len(d["kernels"]), cap["stopped"]


def compare(mine, prof, min_mean_ns=5000, tol=0.01):
    rows, ok = [], True
    for n in sorted(set(mine) | set(prof), key=lambda n: -prof.get(n, mine.get(n))["sum_ns"]):
        m, p = mine.get(n, dict(count=0, sum_ns=0)), prof.get(n, dict(count=0, sum_ns=0))
        mean = p["sum_ns"] / p["count"] if p["count"] else 0
        rel = (m["sum_ns"] - p["sum_ns"]) / p["sum_ns"] if p["sum_ns"] else None
        checked = mean > min_mean_ns
        good = m["count"] == p["count"] and (not checked or (rel is not None and abs(rel) <= tol))
        ok &= good
        rows.append(dict(name=n, recorder_count=m["count"], profiler_count=p["count"], recorder_sum_ns=m["sum_ns"],
                         profiler_sum_ns=p["sum_ns"], profiler_mean_ns=round(mean), sum_rel_diff=rel,
                         sum_checked=checked, ok=good))
    return rows, ok


def main(argv):
    base, wls = argv[1], argv[2:]
    all_ok = True
    for wl in wls:
        windows = json.load(open(os.path.join(base, f"{wl}.windows.json")))
        run = json.load(open(os.path.join(base, f"{wl}.profile-run.json")))
        prof = run["profiler"]
        table = dict(workload=wl, torch=run["torch"], device=run["device"], shape=run["shape"], warmup=run["warmup"],
                     reps=run["reps"], kernels=prof["kernels"], kernel_sum_ns=prof["kernel_sum_ns"],
                     streams=prof["streams"], by_name=prof["by_name"])
        with open(os.path.join(base, f"{wl}.torch-profiler.json"), "w") as f:
            json.dump(table, f, indent=1)
        mine, no_launch, total, stopped = recorder_table(os.path.join(base, wl), windows["windows"])
        rows, ok = compare(mine, prof["by_name"])
        all_ok &= ok
        res = dict(workload=wl, ok=ok, recorder_kernels_total=total, recorder_kernels_without_launch=no_launch,
                   stopped=stopped, recorder_kernels_compared=sum(v["count"] for v in mine.values()),
                   profiler_kernels=prof["kernels"], names=len(rows), rows=rows)
        with open(os.path.join(base, f"{wl}.compare.json"), "w") as f:
            json.dump(res, f, indent=1)
        checked = [r for r in rows if r["sum_checked"]]
        worst = max((abs(r["sum_rel_diff"]) for r in checked if r["sum_rel_diff"] is not None), default=0)
        print(f"{wl}: {'OK' if ok else 'MISMATCH'} names {len(rows)}, kernels recorder {res['recorder_kernels_compared']} "
              f"profiler {prof['kernels']}, count mismatches {sum(r['recorder_count'] != r['profiler_count'] for r in rows)}, "
              f"sums checked {len(checked)} worst {worst * 100:.3f} %, kernels without launch {no_launch}")
        for r in rows:
            if not r["ok"]:
                print(f"   {r['name'][:100]}: {r['recorder_count']} vs {r['profiler_count']}, rel {r['sum_rel_diff']}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
