#!/bin/sh
# A kreach binary away from its source tree (as a build directory outside the tree makes it:
# cmake -S . -B /elsewhere) and run from another directory still finds the problems, a problem
# by id, the quickstart's suite and a model configuration, through the source directory
# recorded at configure time (kreach.home), and a misspelt --model is a usage error naming where
# it looked. The built binary is copied, so this needs no second build. Skipped (77) where the
# recorded source tree is not here (a carried build). usage: outoftree.sh KREACH
set -u
bin="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir "$work/bin" "$work/here" || exit 1
cp "$bin" "$work/bin/kreach" || fail "cannot copy $bin"
k="$work/bin/kreach"
cd "$work/here" || exit 1
unset KREACH_PROBLEMS KREACH_LUA_DIR KREACH_SOURCE_DIR
echo 'print(require("kreach.core").source_dir or "")' >"$work/src.lua"
src=$("$k" "$work/src.lua") || fail "cannot run $k"
if [ -n "$src" ] && [ ! -d "$src/problems" ]; then
  echo "skipped: the build's source tree ($src) is not here (a carried build)"; exit 77
fi
echo "binary: $k (source tree: ${src:-none recorded}), working directory: $work/here"

out=$("$k" list --json 2>&1) || fail "kreach list: status $?: $out"
echo "$out" | grep -q '"name":"kernelbench-l1","pending":0,"problems":100' || fail "kreach list does not see the suites: $out"
out=$("$k" show 19 2>&1) || fail "kreach show 19: status $?: $out"
echo "$out" | grep -q '^19_ReLU' || fail "kreach show 19 does not find the problem: $out"
# the suite docs/quickstart.md lists
out=$("$k" list kernelbench-l1-repr 2>&1) || fail "kreach list kernelbench-l1-repr: status $?: $out"

# --model frontier reads experiments/models/frontier.lua (provider anthropic): the refusal names
# its key variable, before any request
out=$(env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY "$k" generate 19 --model frontier --out "$work/gen" 2>&1)
st=$?
[ "$st" -eq 2 ] || fail "kreach generate --model frontier: status $st, expected 2: $out"
echo "$out" | grep -q 'ANTHROPIC_API_KEY is not set' || fail "kreach generate --model frontier did not read the configuration: $out"
# an unknown name without --provider: a usage error naming the places searched
out=$(env OPENAI_API_KEY=k "$k" generate 19 --model frontierr --out "$work/gen" 2>&1)
st=$?
[ "$st" -eq 2 ] || fail "kreach generate --model frontierr: status $st, expected 2: $out"
echo "$out" | grep -q "no model configuration frontierr.lua (looked in: .*$src/experiments/models" ||
  fail "kreach generate --model frontierr does not say where it looked: $out"

# with no source tree to fall back to (KREACH_SOURCE_DIR empty), nothing is found, and said
out=$(env KREACH_SOURCE_DIR= "$k" list 2>&1)
st=$?
[ "$st" -eq 1 ] || fail "kreach list with no problems in reach: status $st, expected 1: $out"
echo "$out" | grep -q "^kreach list: no suites found (looked in: ./problems, $work/bin/problems" ||
  fail "kreach list with no problems in reach does not say where it looked: $out"
echo "ok: $k from $work/here"
