"""Run the workloads of list.json one after another, each in its own process, and print what each
one's `summary` line says (median step, peak memory) with the run's wall time, start-up included.

    python3 experiments/workloads/run_list.py [--only NAME,...] [--core] [--timeout S] [--out DIR]
                                              [--prefix 'build/kreach profile --steps step --']

--prefix puts a command in front of `python3 <argv>` (kreach's profiler, say); --out keeps each
run's output in DIR/<name>.log; --torch-profile DIR runs each with --torch-profile DIR/<name>.json
and prints the trace's kernel count and kernel time per step (trace_stats.py; --drop-traces
deletes each trace once read); --extra appends options to every run. Exit status: 0 when every
run exited 0, else 1.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--list", default=os.path.join(HERE, "list.json"))
    p.add_argument("--only", default=None, help="comma-separated run names")
    p.add_argument("--core", action="store_true", help="only the runs marked core")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds a run may take (default 120)")
    p.add_argument("--out", default=None, help="keep each run's output in this folder")
    p.add_argument("--prefix", default="", help="command put in front of python3")
    p.add_argument("--python", default=sys.executable or "python3")
    p.add_argument("--extra", default="", help="options appended to every run's argv")
    p.add_argument("--torch-profile", metavar="DIR", default=None,
                   help="run each under --torch-profile DIR/<name>.json and print its kernel statistics")
    p.add_argument("--drop-traces", action="store_true", help="delete each trace once its statistics are printed")
    args = p.parse_args()

    runs = json.load(open(args.list))["runs"]
    if args.only:
        want = args.only.split(",")
        unknown = set(want) - {r["name"] for r in runs}
        if unknown:
            sys.exit(f"run_list: no run named {', '.join(sorted(unknown))}")
        runs = [r for r in runs if r["name"] in want]
    if args.core:
        runs = [r for r in runs if r.get("core", True)]
    for d in (args.out, args.torch_profile):
        if d:
            os.makedirs(d, exist_ok=True)

    bad = 0
    for r in runs:
        cmd = shlex.split(args.prefix) + [args.python] + r["argv"] + shlex.split(args.extra)
        trace = None
        if args.torch_profile:
            trace = os.path.abspath(os.path.join(args.torch_profile, r["name"] + ".json"))
            cmd += ["--torch-profile", trace]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=args.timeout)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        wall = time.perf_counter() - t0
        if args.out:
            with open(os.path.join(args.out, r["name"] + ".log"), "w") as f:
                f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + out + "\n--- stderr\n" + err)
        summary = next((json.loads(l[8:]) for l in out.splitlines() if l.startswith("summary ")), None)
        if rc != 0 or summary is None:
            bad += 1
            tail = " | ".join(err.strip().splitlines()[-3:])
            print(f"FAIL {r['name']}: exit {rc} after {wall:.1f} s: {tail}", flush=True)
            continue
        mem = summary.get("peak_mem_reserved_bytes") or summary.get("peak_host_rss_bytes") or 0
        print(f"ok   {r['name']:<26} wall {wall:6.1f} s  median step {summary['median_step_ms']:9.2f} ms  "
              f"peak {mem / 2**30:6.1f} GiB  loss {summary.get('loss')}", flush=True)
        if trace:
            import trace_stats
            st = trace_stats.stats(trace_stats.load_events(trace))
            m = st["per_step_mean"]
            print(f"     {r['name']:<26} trace {os.path.getsize(trace) / 1e6:.0f} MB: per step {m['kernels']['count']} kernels, "
                  f"{m['kernels']['time_ms']} ms of kernels, {m['copies']['count']} copies, {m['fills']['count']} fills; "
                  f"{st['gpu_activities_outside_ranges']} GPU activities outside the steps; kernel ms by step "
                  f"{st['per_step_kernel_time_ms']}", flush=True)
            if args.drop_traces:
                os.remove(trace)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
