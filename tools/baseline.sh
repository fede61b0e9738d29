#!/bin/bash
# make baseline: run the compliance and test-driver plans on upstream videobuf2
# (VB2_IMPL=upstream; the test driver is built against it as an external module), twice,
# and write the per-test results to baseline/compliance.txt. A test whose result differs
# between the runs is written as FLAKY. Commit the file: make check compares with it.
VB2_IMPL=upstream
. "$(dirname "$0")/lib.sh"
runs=${VB2_BASELINE_RUNS:-2}
"$VB2_ROOT/tools/setup-host.sh"
"$VB2_ROOT/tools/build-kernel.sh"
mkdir -p "$VB2_OUT/baseline"
plan=$VB2_OUT/baseline/baseline.plan
compose_plan "$plan" baseline "$VB2_ROOT/tools/plans/compliance.plan" "$VB2_ROOT/tools/plans/testdrv.plan"
dirs=()
for i in $(seq 1 "$runs"); do
	dir=$VB2_OUT/baseline/run$i
	rm -rf "$dir"
	"$VB2_ROOT/tools/run-guest.sh" "$plan" "$dir" 3000 || true
	dirs+=("$dir")
done
mkdir -p "$VB2_ROOT/baseline"
python3 "$VB2_ROOT/tools/vb2check.py" baseline --output "$VB2_ROOT/baseline/compliance.txt" "${dirs[@]}"
# The anchor itself must run clean: show its kernel log verdict.
python3 "$VB2_ROOT/tools/vb2check.py" summary "${dirs[@]/#/--run=}" --baseline "$VB2_ROOT/baseline/compliance.txt" | grep -v "^    " | tail -n 25 || true
