#!/usr/bin/env bash
# experiments/conv/h200.sh: the conv family's GPU session, on the GPU machine (the device tool),
# from the repository root, with a Release build carried (build-h200-conv/kreach and lua-deps):
#
#   cmake -S . -B build-h200-conv -DCMAKE_BUILD_TYPE=Release && cmake --build build-h200-conv
#   then, there: bash experiments/conv/h200.sh [steps...]
#
# Steps (default all, in this order; each under its own time limit, its log in $OUT/<step>.txt):
#   spec   tests/lua/gpu/conv_spec.lua
#   cross  crosscheck.lua + crosscheck.py: kreach's oracle and baselines against PyTorch
#   time   time.lua on problems 55, 63, 87 (f32 and bf16, with the oracle's error)
#   torch  torch_time.py on the same (cuDNN, TF32 off)
#   simt   time.lua, bf16 on the SIMT GEMM instead of tensor cores (problem 63)
#   all    time.lua, f32, every problem, no oracle
#   tall   torch_time.py, f32, every problem
#   sweep  time.lua --sweep: every compiled GEMM tile configuration on 55, 63, 87 (f32, bf16)
#   sweep2 the same on 62 and 71 (64 and 32 output channels), fewer repetitions
#   ball   time.lua, bf16, every problem, no oracle; tball: torch_time.py, the same
set -u
B=${KREACH_BUILD:-build-h200-conv}
O=${OUT:-/tmp/conv-h200}
mkdir -p "$O"
export KREACH_CACHE_DIR=${KREACH_CACHE_DIR:-/tmp/kreach-cache-conv}
export PYTHONUNBUFFERED=1
steps=${*:-spec cross time torch simt all tall}

step() {
  local name=$1 limit=$2
  shift 2
  local t0
  t0=$(date +%s)
  timeout "$limit" "$@" > "$O/$name.txt" 2>&1
  local rc=$?
  echo "== $name: status $rc, $(($(date +%s) - t0)) s"
  tail -n "${TAIL:-30}" "$O/$name.txt" | cut -c1-220
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
for s in $steps; do
  case $s in
  spec) step spec 75 "$B/kreach" tests/lua/runner.lua --gpu tests/lua/gpu/conv_spec.lua ;;
  cross) step cross 20 bash -c "'$B/kreach' experiments/conv/crosscheck.lua /tmp/conv-cc 24 && python3 experiments/conv/crosscheck.py /tmp/conv-cc" ;;
  time) step time 35 "$B/kreach" experiments/conv/time.lua --dtypes f32,bf16 55 63 87 ;;
  torch) step torch 25 python3 experiments/conv/torch_time.py --dtypes f32,bf16 55 63 87 ;;
  simt) step simt 10 "$B/kreach" experiments/conv/time.lua --dtypes bf16 --algo gemm --no-oracle 63 ;;
  all) step all 25 "$B/kreach" experiments/conv/time.lua --dtypes f32 --reps 5 --no-oracle all ;;
  tall) step tall 25 python3 experiments/conv/torch_time.py --dtypes f32 all ;;
  sweep) step sweep 70 "$B/kreach" experiments/conv/time.lua --sweep --reps 5 --dtypes f32,bf16 55 63 87 ;;
  sweep2) step sweep2 35 "$B/kreach" experiments/conv/time.lua --sweep --reps 3 --dtypes f32,bf16 62 71 ;;
  ball) step ball 25 "$B/kreach" experiments/conv/time.lua --dtypes bf16 --reps 5 --no-oracle all ;;
  tball) step tball 25 python3 experiments/conv/torch_time.py --dtypes bf16 all ;;
  *) echo "unknown step $s" ;;
  esac
done
