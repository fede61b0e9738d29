#!/bin/bash
# make baseline: run the compliance, test-driver, vicodec stateless, 32-bit, uvcvideo and
# driver-contract plans on upstream videobuf2 (VB2_IMPL=upstream; the test driver and the
# contract suite are built against it as external modules), twice, and write the per-test compliance
# results to baseline/compliance.txt and the KUnit cases and program runs to
# baseline/anchor.txt. A result that differs between the runs is written as FLAKY.
# Commit both files: make check compares with them.
export VB2_IMPL=upstream
. "$(dirname "$0")/lib.sh"
runs=${VB2_BASELINE_RUNS:-2}
"$VB2_ROOT/tools/setup-host.sh"
"$VB2_ROOT/tools/build-kernel.sh"
mkdir -p "$VB2_OUT/baseline"
plan=$VB2_OUT/baseline/baseline.plan
compose_plan "$plan" baseline "$VB2_ROOT/tools/plans/compliance.plan" "$VB2_ROOT/tools/plans/testdrv.plan" \
	"$VB2_ROOT/tools/plans/vicodec-sl.plan" "$VB2_ROOT/tools/plans/compat32.plan" \
	"$VB2_ROOT/tools/plans/uvc.plan" "$VB2_ROOT/tools/plans/contract-upstream.plan"
dirs=()
for i in $(seq 1 "$runs"); do
	dir=$VB2_OUT/baseline/run$i
	rm -rf "$dir"
	"$VB2_ROOT/tools/run-guest.sh" "$plan" "$dir" 3000 || true
	dirs+=("$dir")
done
mkdir -p "$VB2_ROOT/baseline"
python3 "$VB2_ROOT/tools/vb2check.py" baseline --output "$VB2_ROOT/baseline/compliance.txt" \
	--anchor "$VB2_ROOT/baseline/anchor.txt" "${dirs[@]}"
# The anchor itself must run clean: show its kernel log verdict.
python3 "$VB2_ROOT/tools/vb2check.py" summary "${dirs[@]/#/--run=}" --baseline "$VB2_ROOT/baseline/compliance.txt" | grep -v "^    " | tail -n 25 || true
