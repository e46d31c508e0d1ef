#!/usr/bin/env bash
# Smoke test of the workload programs (experiments/workloads/*.py) on the CPU at tiny sizes:
# every program in train and infer mode with --device cpu --tiny --steps 2 --warmup 1, a few
# precisions and knobs, one --torch-profile run, and the exit statuses of bad options. Checks
# the output format (knobs / warmup / step / summary lines) and the $KREACH_PROFILE_KNOBS file.
# Exit: 0 all passed, 1 a run failed, 77 no python3 with PyTorch. Programs that need torchvision
# are skipped where it is missing. $PYTHON picks the interpreter (default: the first of python3
# and /usr/bin/python3 that imports torch).
set -u
export PYTHONDONTWRITEBYTECODE=1  # leave no __pycache__ in the source tree
here=$(cd "$(dirname "$0")/.." && pwd)
wl="$here/experiments/workloads"

py=""
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import torch' >/dev/null 2>&1; then
        py=$cand; break
    fi
done
if [ -z "$py" ]; then
    echo "workloads_smoke: skipped: no python3 with PyTorch (set PYTHON)"
    exit 77
fi
have_tv=0
"$py" -c 'import torchvision' >/dev/null 2>&1 && have_tv=1
has_cuda=$("$py" -c 'import torch; print(int(torch.cuda.is_available()))' 2>/dev/null || echo 0)
echo "workloads_smoke: $py, torch $("$py" -c 'import torch; print(torch.__version__)'), torchvision: $([ $have_tv = 1 ] && echo yes || echo missing)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0

# check NAME STDOUT KNOBS N_STEPS N_WARMUP: the output format and the knobs file
check_output() {
    "$py" - "$@" <<'EOF'
import json, sys
name, out_path, knobs_path, n_steps, n_warm = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
lines = open(out_path).read().splitlines()
knob_lines = [l for l in lines if l.startswith("knobs ")]
assert len(knob_lines) == 1, f"{len(knob_lines)} knobs lines"
knobs = json.loads(knob_lines[0][6:])
with open(knobs_path) as f:
    assert json.load(f) == knobs, "the $KREACH_PROFILE_KNOBS file differs from the knobs line"
for key in ("workload", "mode", "precision", "dropout", "batch", "seq", "compile", "device",
            "device_name", "torch_version", "param_count"):
    assert key in knobs, f"knob {key} missing"
# the launch loop has no model; every other workload has parameters
assert knobs["param_count"] > 0 or knobs["workload"] == "launch-loop"
steps = [l.split() for l in lines if l.startswith("step ")]
warm = [l.split() for l in lines if l.startswith("warmup ")]
assert [int(s[1]) for s in steps] == list(range(n_steps)), f"step lines: {steps}"
assert len(warm) == n_warm, f"warmup lines: {warm}"
assert all(float(s[2]) > 0 for s in steps)
summ = [l for l in lines if l.startswith("summary ")]
assert len(summ) == 1 and lines[-1] == summ[0], "summary must be the last line"
s = json.loads(summ[0][8:])
assert s["steps"] == n_steps and s["median_step_ms"] > 0
if knobs["mode"] == "train":
    assert isinstance(s["loss"], float), f"loss {s['loss']!r}"
EOF
}

# run NAME EXPECTED_RC PROGRAM ARGS...
run() {
    local name=$1 want=$2 prog=$3; shift 3
    local out="$tmp/$name.out" err="$tmp/$name.err" knobs="$tmp/$name.knobs.json"
    KREACH_PROFILE_KNOBS="$knobs" "$py" "$wl/$prog" "$@" >"$out" 2>"$err"
    local rc=$?
    if [ "$rc" = 77 ] && [ "$want" != 77 ]; then
        echo "skip $name: $(tail -1 "$err")"; skipped=$((skipped + 1)); return
    fi
    if [ "$rc" != "$want" ]; then
        echo "FAIL $name: exit $rc, expected $want"; tail -5 "$err" | sed 's/^/    /'
        failed=$((failed + 1)); return
    fi
    if [ "$want" = 0 ] && ! check_output "$name" "$out" "$knobs" 2 1 2>"$tmp/$name.check"; then
        echo "FAIL $name: $(tail -1 "$tmp/$name.check")"; failed=$((failed + 1)); return
    fi
    if [ "$want" != 0 ] && ! grep -q . "$err"; then
        echo "FAIL $name: exit $rc without a message on stderr"; failed=$((failed + 1)); return
    fi
    echo "ok   $name"; passed=$((passed + 1))
}

tiny=(--device cpu --tiny --steps 2 --warmup 1)
run gpt2-train          0 gpt2.py "${tiny[@]}" --mode train
run gpt2-infer          0 gpt2.py "${tiny[@]}" --mode infer
run gpt2-train-fp32     0 gpt2.py "${tiny[@]}" --precision fp32 --pad-vocab --attention eager --size medium
run gpt2-train-tf32     0 gpt2.py "${tiny[@]}" --precision tf32 --dropout 0.2 --size large --optimizer-impl forloop
run gpt2-train-bf16     0 gpt2.py "${tiny[@]}" --precision bf16
run llama-train         0 llama.py "${tiny[@]}" --mode train
run llama-infer         0 llama.py "${tiny[@]}" --mode infer
run llama-train-fp32    0 llama.py "${tiny[@]}" --precision fp32 --attention eager --dropout 0.1
run resnet50-train      0 resnet50.py "${tiny[@]}" --channels-last
run resnet50-infer      0 resnet50.py "${tiny[@]}" --mode infer
run vit-b16-train       0 vit_b16.py "${tiny[@]}" --dropout 0.1
# fp32: torch 1.13's nn.MultiheadAttention fast path (eval, no_grad) fails under CPU autocast
run vit-b16-infer       0 vit_b16.py "${tiny[@]}" --mode infer --precision fp32
run dlrm-kaggle-train   0 dlrm.py "${tiny[@]}" --config kaggle
run dlrm-kaggle-infer   0 dlrm.py "${tiny[@]}" --config kaggle --mode infer
run dlrm-kaggle-dense   0 dlrm.py "${tiny[@]}" --config kaggle --grad dense --index-dist uniform --pooling 3
run dlrm-kaggle-amp     0 dlrm.py "${tiny[@]}" --config kaggle --precision autocast-bf16
run dlrm-mlperf-train   0 dlrm.py "${tiny[@]}" --config mlperf --table-scale 0.5
run launch-loop         0 launch_loop.py "${tiny[@]}"
run launch-loop-sync    0 launch_loop.py "${tiny[@]}" --ops 30 --sync-every 1

# --torch-profile: the same steps under torch.profiler, a Chrome trace with one 'step' range a step
trace="$tmp/trace.json"
run gpt2-torch-profile  0 gpt2.py "${tiny[@]}" --torch-profile "$trace"
if [ -s "$trace" ] && "$py" - "$trace" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t if isinstance(t, list) else t["traceEvents"]
names = [e.get("name") for e in ev]
assert names.count("step") == 2 and names.count("warmup") == 1, (names.count("step"), names.count("warmup"))
EOF
then echo "ok   torch-profile-trace"; passed=$((passed + 1))
else echo "FAIL torch-profile-trace: no trace with 2 'step' and 1 'warmup' ranges"; failed=$((failed + 1)); fi

# bad options: exit 2 with a message
run bad-steps           2 gpt2.py --device cpu --tiny --steps 0
run bad-precision       2 llama.py --device cpu --tiny --precision fp16
run bad-dropout         2 dlrm.py --device cpu --tiny --dropout 0.1
run bad-sparse-foreach  2 dlrm.py --device cpu --tiny --optimizer-impl foreach
run bad-loop-train      2 launch_loop.py --device cpu --tiny --mode train
run bad-profile-dir     2 gpt2.py --device cpu --tiny --torch-profile /nonexistent-dir/t.json
if [ "$has_cuda" = 0 ]; then
    run no-cuda         77 gpt2.py --tiny --steps 1 --warmup 0
fi

echo "workloads_smoke: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
