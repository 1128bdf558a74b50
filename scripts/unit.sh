#!/usr/bin/env bash
# Runs the C unit tests (`make unit`): each Check suite of the unit-test
# binary as a process of its own, JOBS at a time, each into its own log;
# then prints the logs in suite order and fails when any suite failed.
# Run from tests/unit (the tests name their fixtures relative to it).
# usage: unit.sh BINARY JOBS LOGDIR
set -uo pipefail
bin=$1 jobs=$2 logs=$3
rm -rf "$logs" && mkdir -p "$logs" || exit 1
n=$("$bin" --count) || exit 1
seq 0 $((n - 1)) | xargs -P "$jobs" -I{} sh -c \
    '"$1" --only {} > "$2/{}.log" 2>&1; echo $? > "$2/{}.rc"' sh "$bin" "$logs"
failed=0 run=0
for i in $(seq 0 $((n - 1))); do
    cat "$logs/$i.log"
    [ "$(cat "$logs/$i.rc" 2>/dev/null)" = 0 ] || { echo "unit-tests: suite $i FAILED"; failed=1; }
    run=$((run + $(sed -n 's/^unit-tests: \([0-9]*\) run.*/\1/p' "$logs/$i.log" | tail -1)))
done
echo "unit-tests: $n suites, $run tests, $([ $failed = 0 ] && echo all passed || echo FAILURES)"
exit $failed
