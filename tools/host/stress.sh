#!/bin/bash
# make stress: the long form of tools/plans/stress.plan (vb2-stress, the seeded
# multi-threaded fuzzer, under KASAN, lockdep, kmemleak and fault injection), on our
# videobuf2 and on upstream's, with the same seed, and the two side by side in
# out/stress/report.txt: operations, successes per kind and device, and every finding
# in the kernel log (KASAN, WARN, lockdep, BUG, hung task, leak) with its splat.
#
#   VB2_STRESS_OPS      operations of the main fuzz step (default 1000000)
#   VB2_STRESS_SECONDS  its time limit in guest seconds (default 14400)
#   VB2_STRESS_THREADS  the fuzzer's worker threads (default 4)
#   VB2_STRESS_IMPLS    whose videobuf2 to run (default "ours upstream")
#   VB2_STRESS_FLAVOR   kernel flavor (default kasan)
#   VB2_STRESS_PARALLEL 0 (default): one guest after the other; 1: the guests of all
#                       IMPLS at once. On a 2-core host, one guest alone fuzzed at
#                       315-364 operations per second (QEMU at 130-180% of the cores),
#                       two at once at 107 and 90 (four vCPUs on two cores: most
#                       likely a guest spinlock then waits for a vCPU not running).
# The report never fails on upstream's findings; the exit code is ours.
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/setup-host.sh"

ops=${VB2_STRESS_OPS:-1000000}
secs=${VB2_STRESS_SECONDS:-14400}
impls=${VB2_STRESS_IMPLS:-ours upstream}
export VB2_FLAVOR=${VB2_STRESS_FLAVOR:-kasan}
out=$VB2_OUT/stress
mkdir -p "$out"
report=$out/report.txt
: > "$report"
rc=0

# The plan's steps are killed after VB2_STEP_TIMEOUT (15 min by default): give the long
# fuzz step its time limit and some more.
args=("VB2_STRESS_OPS=$ops" "VB2_STRESS_SECONDS=$secs" "VB2_STRESS_THREADS=${VB2_STRESS_THREADS:-4}"
	"VB2_STEP_TIMEOUT=$((secs + 900))")

# The kernels first, one at a time (each build uses every core).
for impl in $impls; do
	export VB2_IMPL=$impl
	# shellcheck source=lib.sh
	. "$VB2_ROOT/tools/host/lib.sh"
	"$VB2_ROOT/tools/host/build-kernel.sh" > "$out/build-$impl.log" 2>&1 ||
		{ echo "build of $impl-$VB2_FLAVOR failed: $out/build-$impl.log"; exit 1; }
	rm -rf "${out:?}/$impl"
done

# Then the guests.
run_one() {
	local impl=$1 t0=$SECONDS
	VB2_IMPL=$impl "$VB2_ROOT/tools/host/run-guest.sh" "$VB2_ROOT/tools/plans/stress.plan" \
		"$out/$impl" $((secs + 1800)) "${args[@]}" > "$out/guest-$impl.log" 2>&1 || true
	echo "$((SECONDS - t0))" > "$out/$impl.wall"
}
pids=()
for impl in $impls; do
	if [ "${VB2_STRESS_PARALLEL:-0}" = 1 ]; then
		run_one "$impl" &
		pids+=($!)
	else
		run_one "$impl"
	fi
done
[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"

# The verdict is vb2check's exit status (1: something failed, 2 or more: it could not
# judge), not a reading of its text.
for impl in $impls; do
	st=0
	{
		echo "=== $impl videobuf2, $VB2_FLAVOR kernel, seed 20261203, $ops operations asked" \
			"of ${VB2_STRESS_THREADS:-4} threads," \
			"$(cat "$out/$impl.wall" 2>/dev/null || echo '?') s on the host"
		grep -h '^vb2-stress: ' "$out/$impl/results.log" || echo "(no vb2-stress output)"
		echo
		python3 "$VB2_ROOT/tools/report/vb2check.py" summary --run="$out/$impl" \
			--baseline "$VB2_ROOT/baseline/compliance.txt" --max-failures 40 || st=$?
		echo
	} > "$out/$impl.txt" 2>&1
	[ "$st" = 0 ] || echo "vb2check summary of $impl: exit $st" >> "$out/$impl.txt"
	[ "$impl" = ours ] && [ "$st" != 0 ] && rc=1
	cat "$out/$impl.txt" >> "$report"
done
cat "$report"
echo "report: $report"
exit $rc
