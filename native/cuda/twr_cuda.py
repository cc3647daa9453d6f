#!/usr/bin/env python3
"""Reads the cuda records of a tickwise recorder capture (records.twr) and checks them.

Standalone (Python 3 standard library only) so that it runs on the GPU machine
next to the capture; the layouts follow native/include/tickwise/format.h.

  twr_cuda.py summary DIR
  twr_cuda.py check DIR [--windows W.json] [--profiler P.json] [--out R.json]
      every kernel: launch enter <= start <= end <= exit of the first device-wide
      synchronize after its launch; per-window kernel counts/totals, compared with
      the torch.profiler totals when given
  twr_cuda.py chrome DIR OUT.json [--window W.json]
      a Chrome trace (Kineto-like: cat "kernel", ts/dur in us, 3 decimals = exact ns)
      so that tickwise's chrome-trace reader can analyse the same kernels
"""
import json
import os
import struct
import sys
import zlib
from collections import defaultdict

K_CLOCK, K_STATS = 32, 33
K_KERNEL, K_MEMCPY, K_MEMSET, K_API, K_NAME = 48, 49, 50, 51, 52
API_CLASS = {1: "launch", 2: "sync", 3: "memcpy", 4: "memset", 5: "graph_launch"}
DOMAIN = {1: "driver", 2: "runtime"}


def read_capture(d):
    path = os.path.join(d, "records.twr")
    b = open(path, "rb").read()
    if b[:8] != b"TWRECv1\0":
        raise SystemExit(f"{path}: not a records.twr")
    (ver, rsize, hsize, pid, start_ns, boot_off, ppid, flags) = struct.unpack_from("<IIIIQqII", b, 8)
    if zlib.crc32(b[:60]) != struct.unpack_from("<I", b, 60)[0]:
        raise SystemExit(f"{path}: header CRC mismatch")
    off = 64
    recs = []
    stopped = None
    while off + 32 <= len(b):
        magic, typ, hsz, pbytes, count, seq, pcrc, hcrc = struct.unpack_from("<IHHIIQII", b, off)
        if magic != 0x4B435754 or zlib.crc32(b[off:off + 28]) != hcrc:
            stopped = f"bad chunk header at {off}"
            break
        payload = b[off + 32: off + 32 + pbytes]
        if len(payload) < pbytes or zlib.crc32(payload) != pcrc:
            stopped = f"bad chunk payload at {off}"
            break
        if typ == 1:
            for i in range(count):
                recs.append(payload[i * 64:(i + 1) * 64])
        off += 32 + pbytes
    if off != len(b) and stopped is None:
        stopped = f"{len(b) - off} trailing bytes"
    meta = None
    try:
        meta = json.load(open(os.path.join(d, "meta.json")))
    except (OSError, ValueError):
        pass
    return {"pid": pid, "start_ns": start_ns, "boot_off": boot_off, "records": recs, "stopped": stopped, "meta": meta}


def decode(cap):
    kernels, copies, api, clocks, stats = [], [], [], [], {}
    frags = defaultdict(dict)
    for r in cap["records"]:
        kind, aux, tid = struct.unpack_from("<HHI", r, 0)
        if kind == K_KERNEL:
            start, end, corr, dev, stream, ctx, key, grid, block, shm, regs, flags = struct.unpack_from("<QQIIIIQIIIHH", r, 8)
            kernels.append(dict(domain=aux, start=start, end=end, corr=corr, device=dev, stream=stream, ctx=ctx,
                                key=key, grid=grid, block=block, shm=shm, regs=regs, flags=flags))
        elif kind in (K_MEMCPY, K_MEMSET):
            start, end, corr, dev, stream, ctx, nbytes = struct.unpack_from("<QQIIIIQ", r, 8)
            copies.append(dict(kind="memcpy" if kind == K_MEMCPY else "memset", domain=aux, start=start, end=end,
                               corr=corr, device=dev, stream=stream, bytes=nbytes))
        elif kind == K_API:
            enter, exit_, corr, cbid, dom, res, stream, aflags, tdom = struct.unpack_from("<QQIIIiQHH", r, 8)
            api.append(dict(cls=API_CLASS.get(aux, f"class{aux}"), tid=tid, enter=enter, exit=exit_, corr=corr,
                            cbid=cbid, domain=dom, result=res, stream=stream, timed_by="activity" if aflags & 1 else "callback",
                            time_domain=tdom))
        elif kind == K_NAME:
            key, total, off = struct.unpack_from("<QII", r, 8)
            frags[(aux, key)][off] = (total, r[24:24 + min(40, total - off)])
        elif kind == K_CLOCK:
            before, after, value, tries, reason, seq = struct.unpack_from("<QQQIIQ", r, 8)
            clocks.append(dict(domain=aux, before=before, after=after, value=value, tries=tries, seq=seq))
        elif kind == K_STATS:
            _, pushed, dropped, ring = struct.unpack_from("<QQQQ", r, 8)
            stats[tid] = (pushed, dropped)
    names = {}
    for (nk, key), parts in frags.items():
        total = next(iter(parts.values()))[0]
        data = b"".join(parts[o][1] for o in sorted(parts))
        names[(nk, key)] = data[:total].decode("utf-8", "replace") if len(data) >= total else None
    for k in kernels:
        k["name"] = names.get((1, k["key"])) or f"kernel#{k['key']:016x}"
    for a in api:
        a["name"] = names.get((2, (a["domain"] << 32) | a["cbid"])) or f"{DOMAIN.get(a['domain'], '?')}:{a['cbid']}"
    return dict(kernels=kernels, copies=copies, api=api, clocks=clocks, stats=stats, names=names)


def to_monotonic(d, cap):
    """Maps record times to CLOCK_MONOTONIC: identity for domain 0; an offset fit from clock samples for domain 2."""
    off = 0
    samples = [c for c in d["clocks"] if c["domain"] == 2]
    if (any(k["domain"] == 2 for k in d["kernels"]) or any(a["time_domain"] == 2 for a in d["api"])) and samples:
        best = min(samples, key=lambda c: c["after"] - c["before"])
        off = (best["before"] + best["after"]) // 2 - best["value"]
    for x in d["kernels"] + d["copies"]:
        if x["domain"] == 2:
            x["start"] += off
            x["end"] += off
    for a in d["api"]:
        if a["time_domain"] == 2:
            a["enter"] += off
            a["exit"] += off
    return off


def load_windows(path):
    if not path:
        return None
    w = json.load(open(path))
    return w


def in_window(t, w):
    return w["start_ns"] <= t <= w["end_ns"]


def check(dirpath, windows_path=None, profiler_path=None):
    cap = read_capture(dirpath)
    d = decode(cap)
    shift = to_monotonic(d, cap)
    kernels, api = d["kernels"], d["api"]
    by_corr = defaultdict(list)
    for a in api:
        by_corr[a["corr"]].append(a)
    device_syncs = sorted((a for a in api if a["cls"] == "sync" and
                           (a["name"].startswith("cudaDeviceSynchronize") or a["name"].startswith("cuCtxSynchronize"))),
                          key=lambda a: a["enter"])
    sync_enters = [s["enter"] for s in device_syncs]
    import bisect
    res = dict(capture=dirpath, records=len(cap["records"]), stopped=cap["stopped"], kernels=len(kernels),
               copies=len(d["copies"]), api_records=len(api), cupti_clock_offset_ns=shift,
               api_timed_by=sorted({a["timed_by"] for a in api}),
               cuda_backend=next((b for b in (cap["meta"] or {}).get("backends", []) if b.get("name") == "cuda"), None),
               time_domains=sorted({k["domain"] for k in kernels}))
    cupti = [c for c in d["clocks"] if c["domain"] == 2]
    if cupti:
        dev = [c["value"] - (c["before"] + c["after"]) // 2 for c in cupti]
        res["cupti_clock_samples"] = dict(count=len(cupti), value_minus_host_mid_ns_min=min(dev),
                                          value_minus_host_mid_ns_max=max(dev),
                                          bracket_ns_max=max(c["after"] - c["before"] for c in cupti))
    cnt = defaultdict(int)
    for a in api:
        cnt[a["name"]] += 1
    res["api_by_name"] = dict(sorted(cnt.items(), key=lambda kv: -kv[1]))
    res["drops"] = {str(t): v[1] for t, v in d["stats"].items() if v[1]}
    matched = unmatched = before_launch = after_sync = no_sync = 0
    matched_domain = defaultdict(int)
    min_start_slack = min_end_slack = None
    worst = []
    for k in kernels:
        launches = [a for a in by_corr.get(k["corr"], []) if a["cls"] in ("launch", "graph_launch")]
        if not launches:
            unmatched += 1
            continue
        matched += 1
        # the outermost call (runtime over a nested driver call) is the launch
        L = min(launches, key=lambda a: a["enter"])
        matched_domain[DOMAIN.get(L["domain"], "?")] += 1
        k["launch_enter"], k["launch_exit"], k["launch_tid"] = L["enter"], L["exit"], L["tid"]
        s_slack = k["start"] - L["enter"]
        if s_slack < 0:
            before_launch += 1
            worst.append(("start before launch enter", s_slack, k["name"][:80], k["corr"]))
        min_start_slack = s_slack if min_start_slack is None else min(min_start_slack, s_slack)
        i = bisect.bisect_left(sync_enters, L["exit"])
        if i >= len(device_syncs):
            no_sync += 1
            continue
        S = device_syncs[i]
        e_slack = S["exit"] - k["end"]
        if e_slack < 0:
            after_sync += 1
            worst.append(("end after sync exit", e_slack, k["name"][:80], k["corr"]))
        min_end_slack = e_slack if min_end_slack is None else min(min_end_slack, e_slack)
    res["interval_check"] = dict(
        kernels_with_launch=matched, kernels_without_launch=unmatched, launch_domain=dict(matched_domain),
        start_before_launch_enter=before_launch, end_after_sync_exit=after_sync, no_sync_after_launch=no_sync,
        min_start_minus_launch_enter_ns=min_start_slack, min_sync_exit_minus_end_ns=min_end_slack,
        device_syncs=len(device_syncs), violations_sample=sorted(worst, key=lambda x: x[1])[:10],
        ok=(unmatched == 0 and before_launch == 0 and after_sync == 0 and no_sync == 0 and matched > 0))
    windows = load_windows(windows_path)
    if windows:
        per = []
        for w in windows["windows"]:
            ks = [k for k in kernels if "launch_enter" in k and in_window(k["launch_enter"], w)]
            per.append(dict(label=w["label"], kernels=len(ks), kernel_sum_ns=sum(k["end"] - k["start"] for k in ks),
                            span_ns=(max(k["end"] for k in ks) - min(k["start"] for k in ks)) if ks else 0,
                            busy_ns=union_ns(ks)))
        res["windows"] = per
        prof_w = [w for w in windows["windows"] if w.get("compare")]
        ks = [k for k in kernels if "launch_enter" in k and any(in_window(k["launch_enter"], w) for w in prof_w)]
        mine = dict(kernels=len(ks), kernel_sum_ns=sum(k["end"] - k["start"] for k in ks), busy_ns=union_ns(ks))
        by_name = defaultdict(lambda: [0, 0])
        for k in ks:
            by_name[k["name"]][0] += 1
            by_name[k["name"]][1] += k["end"] - k["start"]
        mine["by_name"] = {n: dict(count=c, sum_ns=s) for n, (c, s) in by_name.items()}
        res["compared_windows"] = [w["label"] for w in prof_w]
        res["recorder_totals"] = {k: v for k, v in mine.items() if k != "by_name"}
        if profiler_path:
            p = json.load(open(profiler_path))
            cmp = dict(recorder_kernels=mine["kernels"], profiler_kernels=p["kernels"],
                       count_equal=mine["kernels"] == p["kernels"],
                       recorder_kernel_sum_ns=mine["kernel_sum_ns"], profiler_kernel_sum_ns=p["kernel_sum_ns"],
                       kernel_sum_rel_diff=(mine["kernel_sum_ns"] - p["kernel_sum_ns"]) / p["kernel_sum_ns"] if p["kernel_sum_ns"] else None)
            names_mine = {n: v["count"] for n, v in mine["by_name"].items()}
            names_prof = {n: v["count"] for n, v in p.get("by_name", {}).items()}
            diff = {n: (names_mine.get(n, 0), names_prof.get(n, 0)) for n in set(names_mine) | set(names_prof)
                    if names_mine.get(n, 0) != names_prof.get(n, 0)}
            cmp["names_recorder"] = len(names_mine)
            cmp["names_profiler"] = len(names_prof)
            cmp["per_name_count_mismatches"] = {n[:160]: v for n, v in list(diff.items())[:20]}
            cmp["per_name_count_mismatch_total"] = len(diff)
            res["profiler_comparison"] = cmp
        res["recorder_by_name"] = {n[:200]: v for n, v in sorted(mine["by_name"].items(), key=lambda kv: -kv[1]["sum_ns"])}
    return res


def union_ns(ks):
    iv = sorted((k["start"], k["end"]) for k in ks)
    total, cur_s, cur_e = 0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def chrome(dirpath, out, window_path=None):
    cap = read_capture(dirpath)
    d = decode(cap)
    to_monotonic(d, cap)
    windows = load_windows(window_path)
    ev = []
    pid = cap["pid"]
    for a in d["api"]:
        if windows and not any(in_window(a["enter"], w) for w in windows["windows"] if w.get("compare")):
            continue
        ev.append(dict(ph="X", cat="cuda_runtime" if a["domain"] == 2 else "cuda_driver", name=a["name"], pid=pid,
                       tid=a["tid"], ts=a["enter"] / 1000, dur=(a["exit"] - a["enter"]) / 1000,
                       args={"correlation": a["corr"]}))
    launch_enter = {a["corr"]: a["enter"] for a in d["api"] if a["cls"] in ("launch", "graph_launch")}
    for k in d["kernels"]:
        le = launch_enter.get(k["corr"])
        if windows and (le is None or not any(in_window(le, w) for w in windows["windows"] if w.get("compare"))):
            continue
        ev.append(dict(ph="X", cat="kernel", name=k["name"], pid=0, tid=k["stream"], ts=k["start"] / 1000,
                       dur=(k["end"] - k["start"]) / 1000,
                       args={"device": k["device"], "stream": k["stream"], "correlation": k["corr"],
                             "grid_blocks": k["grid"], "block_threads": k["block"], "registers per thread": k["regs"]}))
    for c in d["copies"]:
        ev.append(dict(ph="X", cat="gpu_" + c["kind"], name=c["kind"], pid=0, tid=c["stream"], ts=c["start"] / 1000,
                       dur=(c["end"] - c["start"]) / 1000, args={"device": c["device"], "bytes": c["bytes"], "correlation": c["corr"]}))
    ev.sort(key=lambda e: e["ts"])
    with open(out, "w") as f:
        json.dump({"traceEvents": ev, "otherData": {"producer": "tickwise native/cuda/twr_cuda.py chrome",
                                                    "source": os.path.abspath(dirpath)}}, f, separators=(",", ":"))


def summary(dirpath):
    cap = read_capture(dirpath)
    d = decode(cap)
    print(f"{dirpath}: pid {cap['pid']}, {len(cap['records'])} records, stopped={cap['stopped']}")
    print(f"  kernels {len(d['kernels'])}, copies {len(d['copies'])}, api {len(d['api'])}, names {len(d['names'])}, clock samples {len(d['clocks'])}")
    cnt = defaultdict(lambda: [0, 0])
    for k in d["kernels"]:
        cnt[k["name"]][0] += 1
        cnt[k["name"]][1] += k["end"] - k["start"]
    for n, (c, s) in sorted(cnt.items(), key=lambda kv: -kv[1][1])[:15]:
        print(f"  {c:6d} {s / 1e6:10.3f} ms  {n[:110]}")


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    opt = {}
    pos = []
    it = iter(argv[2:])
    for a in it:
        if a.startswith("--"):
            opt[a[2:]] = next(it)
        else:
            pos.append(a)
    if argv[1] == "summary":
        summary(pos[0])
    elif argv[1] == "check":
        res = check(pos[0], opt.get("windows"), opt.get("profiler"))
        text = json.dumps(res, indent=1, default=str)
        if "out" in opt:
            open(opt["out"], "w").write(text + "\n")
        short = {k: v for k, v in res.items() if k not in ("recorder_by_name", "api_by_name")}
        print(json.dumps(short, indent=1, default=str))
        return 0 if res["interval_check"]["ok"] else 1
    elif argv[1] == "chrome":
        chrome(pos[0], pos[1], opt.get("window"))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
