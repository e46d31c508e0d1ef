# tools/guard-cost --table: the table of a stored times file, and docs/candidates.md's table is
# exactly that of experiments/guard/h200-2026-12-06-concurrent.txt (the H200 run it reports).
# (Each table is found after the command line that names its file.)
$ tools/guard-cost --table experiments/guard/h200-2026-12-06-concurrent.txt
~ ^019_relu_load_inline%.py +0%.2233 0%.2234 +0%.2049 0%.2049 +%+9%.00%%
~ ^019_relu_torch%.py +0%.1304 0%.1304 +0%.1304 0%.13 +%+0%.15%%
$ f=$(mktemp) && sed -n '/concurrent.txt   # that run/,/^```$/p' docs/candidates.md | sed -n '/^candidate  /,/^019_relu_triton/p' > "$f" && tools/guard-cost --table experiments/guard/h200-2026-12-06-concurrent.txt | diff - "$f" && rm "$f" && echo same
~ ^same$
$ tools/guard-cost --table experiments/guard/no-such-file.txt
? 2
~ usage: tools/guard%-cost %-%-table
# docs/candidates.md's second table is that of the serialized record's run (H100)
$ f=$(mktemp) && sed -n '/serialized.txt   # that run/,/^```$/p' docs/candidates.md | sed -n '/^candidate  /,/^019_relu_triton/p' > "$f" && tools/guard-cost --table experiments/guard/h100-2026-12-06-serialized.txt | diff - "$f" && rm "$f" && echo same
~ ^same$
