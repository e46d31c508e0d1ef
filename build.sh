#!/bin/sh
# build.sh: the two entry points of the README.
#   ./build.sh run    install the Debian packages the build needs, build (without the tests),
#                     and run the main job: the GPU's description, then an evaluation of the
#                     example candidates in examples/ on the representative suite, stored in
#                     results.db ($KREACH_DB), and its report, report.html beside the database
#                     (kreach eval --report; docs/report.md), whose path it prints last
#   ./build.sh test   install the Debian packages the build and the tests need, build, and run
#                     every test (ctest); GPU tests are skipped (exit 77) where there is no GPU
# The build goes to build/ (BUILD_DIR overrides). Warnings are errors when $CI is set.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build="${BUILD_DIR:-$here/build}"
jobs=$(nproc 2>/dev/null || echo 2)

what="${1:-run}"
case "$what" in
run)  "$here/tools/install-deps" run
      cmake -S "$here" -B "$build" -DBUILD_TESTING=OFF >/dev/null ;;
test) "$here/tools/install-deps" test
      cmake -S "$here" -B "$build" -DBUILD_TESTING=ON >/dev/null ;;
*)    echo "usage: ./build.sh run|test" >&2; exit 2 ;;
esac
cmake --build "$build" -j "$jobs"

case "$what" in
run)  "$build/kreach" info || exit $?
      db="${KREACH_DB:-$here/results.db}"
      exec "$build/kreach" eval kernelbench-l1-repr "$here/examples" --db "$db" --report "$(dirname "$db")/report.html" ;;
test) cd "$build" && exec ctest --output-on-failure -j "$jobs" ;;
*)    echo "usage: ./build.sh run|test" >&2; exit 2 ;;
esac
