"""Kernel count and kernel time per step in a Chrome trace written by a workload's --torch-profile.

    python3 experiments/workloads/trace_stats.py TRACE.json [--range step]

A GPU activity belongs to a step when the CUDA runtime call that launched it (matched through
the trace's `correlation` ids) lies inside that step's `record_function` range on the host: the
same rule as attributing a kernel to the NVTX range open at its launch. Prints one JSON object:
the number of ranges, and for kernels, copies and fills the count and the summed duration (ms),
in total and per step. Kernels on several streams may overlap, so the summed kernel time can
exceed the step's wall time.
"""
import argparse
import bisect
import json
import sys


def load_events(path):
    with open(path) as f:
        t = json.load(f)
    return t if isinstance(t, list) else t.get("traceEvents", [])


def stats(events, range_name="step"):
    ranges = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in events
                    if e.get("name") == range_name and e.get("ph") == "X"
                    and e.get("cat") in ("user_annotation", "cpu_op", "python_function", None))
    launch_ts = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch_ts[e["args"]["correlation"]] = e["ts"]
    starts = [r[0] for r in ranges]
    kinds = {"kernel": "kernels", "gpu_memcpy": "copies", "gpu_memset": "fills"}
    total = {v: {"count": 0, "time_ms": 0.0} for v in kinds.values()}
    per_step = [{v: {"count": 0, "time_ms": 0.0} for v in kinds.values()} for _ in ranges]
    unattributed = 0
    for e in events:
        kind = kinds.get(e.get("cat"))
        if kind is None:
            continue
        ts = launch_ts.get(e.get("args", {}).get("correlation"))
        i = bisect.bisect_right(starts, ts) - 1 if ts is not None else -1
        if i < 0 or ts > ranges[i][1]:
            unattributed += 1
            continue
        dur_ms = e.get("dur", 0) / 1e3
        for bucket in (total[kind], per_step[i][kind]):
            bucket["count"] += 1
            bucket["time_ms"] += dur_ms
    n = len(ranges)
    return {
        "range": range_name,
        "ranges": n,
        "total": {k: {"count": v["count"], "time_ms": round(v["time_ms"], 4)} for k, v in total.items()},
        "per_step_mean": {k: {"count": round(v["count"] / n, 2) if n else None,
                              "time_ms": round(v["time_ms"] / n, 4) if n else None} for k, v in total.items()},
        "per_step_kernel_time_ms": [round(s["kernels"]["time_ms"], 4) for s in per_step],
        "per_step_kernels": [s["kernels"]["count"] for s in per_step],
        "range_wall_ms": [round((b - a) / 1e3, 4) for a, b in ranges],
        "gpu_activities_outside_ranges": unattributed,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace")
    p.add_argument("--range", default="step", help="the record_function range's name (default step)")
    args = p.parse_args()
    try:
        events = load_events(args.trace)
    except (OSError, ValueError) as e:
        print(f"trace_stats: cannot read {args.trace}: {e}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(stats(events, args.range)))


if __name__ == "__main__":
    main()
