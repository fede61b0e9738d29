#!/bin/bash
# make baseline: run the compliance, test-driver, vicodec stateless, 32-bit, uvcvideo and
# driver-contract plans on upstream videobuf2 (VB2_IMPL=upstream; the test driver and the
# contract suite are built against it as external modules), twice, and write the per-test compliance
# results to baseline/compliance.txt and the KUnit cases and program runs to
# baseline/anchor.txt. A result that differs between the runs is written as FLAKY.
# Commit both files: make check compares with them. VB2_BASELINE_PLANS (below) runs a
# few plans only, after a change to them, and updates the files.
export VB2_IMPL=upstream
. "$(dirname "$0")/lib.sh"
runs=${VB2_BASELINE_RUNS:-2}
"$VB2_ROOT/tools/host/setup-host.sh"
"$VB2_ROOT/tools/host/build-kernel.sh"
mkdir -p "$VB2_OUT/baseline"
plan=$VB2_OUT/baseline/baseline.plan
# VB2_BASELINE_PLANS="testdrv edu ...": run only these plans (tools/plans/NAME.plan) and
# update the baseline files: the lines of their steps are replaced, the others kept.
all="compliance testdrv vicodec-sl compat32 edu uvc contract-upstream"
names=${VB2_BASELINE_PLANS:-$all}
update=()
[ -n "${VB2_BASELINE_PLANS:-}" ] && update=(--update)
plans=()
for name in $names; do
	[ -f "$VB2_ROOT/tools/plans/$name.plan" ] || die "no plan tools/plans/$name.plan"
	plans+=("$VB2_ROOT/tools/plans/$name.plan")
done
compose_plan "$plan" baseline "${plans[@]}"
dirs=() edu_dirs=()
for i in $(seq 1 "$runs"); do
	dir=$VB2_OUT/baseline/run$i
	rm -rf "$dir" "$dir"-*
	"$VB2_ROOT/tools/host/run-guest.sh" "$plan" "$dir" 3000 || true
	dirs+=("$dir")
	# As make check: edu.plan once more through swiotlb, and once behind an IOMMU.
	case " $names " in *" edu "*)
		for mode in $EDU_MODES; do
			edu_guest "$mode" "$dir-$mode"
			edu_dirs+=("$dir-$mode")
		done;;
	esac
done
mkdir -p "$VB2_ROOT/baseline"
python3 "$VB2_ROOT/tools/report/vb2check.py" baseline "${update[@]}" \
	--output "$VB2_ROOT/baseline/compliance.txt" --anchor "$VB2_ROOT/baseline/anchor.txt" "${dirs[@]}"
# The edu guests' steps have names of their own (edu-MODE-...): each mode's runs are
# merged on their own, as an update of the above (merged together, every key would be
# missing from half the runs, and so FLAKY).
if [ ${#edu_dirs[@]} -gt 0 ]; then
	for mode in $EDU_MODES; do
		mode_dirs=()
		for i in $(seq 1 "$runs"); do mode_dirs+=("$VB2_OUT/baseline/run$i-$mode"); done
		python3 "$VB2_ROOT/tools/report/vb2check.py" baseline --update \
			--output "$VB2_ROOT/baseline/compliance.txt" \
			--anchor "$VB2_ROOT/baseline/anchor.txt" "${mode_dirs[@]}"
	done
fi
dirs+=("${edu_dirs[@]}")
# The anchor itself must run clean: show its kernel log verdict.
python3 "$VB2_ROOT/tools/report/vb2check.py" summary "${dirs[@]/#/--run=}" --baseline "$VB2_ROOT/baseline/compliance.txt" | grep -v "^    " | tail -n 25 || true
