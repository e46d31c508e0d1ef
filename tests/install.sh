#!/bin/sh
# cmake --install into a temporary prefix, then the installed kreach, run from another directory
# with nothing of the source tree in reach, finds its problems and shows them. Skipped (77)
# where the build tree cannot be installed from (no cmake: the GPU machine). usage: install.sh BUILD
set -u
build="$1"
command -v cmake >/dev/null 2>&1 || { echo "skipped: no cmake"; exit 77; }
[ -f "$build/cmake_install.cmake" ] || { echo "skipped: $build is not a CMake build tree"; exit 77; }
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
[ -n "$src" ] && [ -d "$src/problems" ] || { echo "skipped: the build's source tree ($src) is not here (a carried build)"; exit 77; }
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/kreach lib/kreach/libkreach_inject.so share/kreach/problems/kernelbench/level1/019_ReLU.lua \
         share/kreach/models/frontier.lua share/doc/kreach/README.md share/doc/kreach/cli.md; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
cd "$work" || exit 1
# nothing of the source tree: no KREACH_PROBLEMS, no ./problems, a binary outside the tree, and
# no source tree to fall back to (KREACH_SOURCE_DIR empty: kreach.home)
export KREACH_SOURCE_DIR=
out=$(env -u KREACH_PROBLEMS -u KREACH_LUA_DIR "$prefix/bin/kreach" list --json) || fail "kreach list: status $?"
echo "$out"
echo "$out" | grep -q '"name":"kernelbench-l1","pending":0,"problems":100' || fail "kreach list does not see the installed suites"
out=$(env -u KREACH_PROBLEMS "$prefix/bin/kreach" show 19) || fail "kreach show 19: status $?"
echo "$out" | head -3
echo "$out" | grep -q '^19_ReLU' || fail "kreach show 19 does not find the installed problem"
out=$(env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY "$prefix/bin/kreach" generate 19 --model frontier --out "$work/gen" 2>&1)
echo "$out" | grep -q 'ANTHROPIC_API_KEY is not set' || fail "kreach generate --model frontier does not read the installed configuration: $out"
# a binary with no problems anywhere in reach says so and exits 1 (not an empty listing, 0)
mkdir "$work/alone" && cp "$prefix/bin/kreach" "$work/alone/kreach" && cd "$work/alone" || exit 1
env -u KREACH_PROBLEMS ./kreach list >"$work/alone.out" 2>&1
st=$?
cat "$work/alone.out"
[ "$st" -eq 1 ] || fail "kreach list with no problems in reach: status $st, expected 1"
grep -q "^kreach list: no suites found" "$work/alone.out" || fail "kreach list with no problems in reach does not say so"
echo "ok: installed to $prefix and run from $work"
