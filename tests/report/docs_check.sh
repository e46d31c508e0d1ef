#!/bin/sh
# docs/report/ (the figures docs/report.md shows) is what kreach report makes from the shipped
# data, byte for byte: tests/report/docs_check.sh KREACH (run from the repository's root).
# To remake it: kreach report --data experiments/paper/data -o docs/report/report.md
set -eu
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" report --data experiments/paper/data -o "$tmp/report.md" >/dev/null
if ! diff -r docs/report "$tmp" >"$tmp.diff" 2>&1; then
  head -c 4000 "$tmp.diff" >&2
  rm -f "$tmp.diff"
  echo "docs/report/ is not what kreach report makes from experiments/paper/data; remake it with:" >&2
  echo "  kreach report --data experiments/paper/data -o docs/report/report.md" >&2
  exit 1
fi
rm -f "$tmp.diff"
echo "docs/report/ is up to date ($(ls docs/report | wc -l) files)"
