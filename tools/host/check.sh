#!/bin/bash
# make check: static checks, the build, KUnit and v4l2-compliance in a guest (compared with
# the upstream baseline test by test) and the kernel-log checks, on a debug kernel and on a
# KASAN kernel (VB2_CHECK_FLAVORS="debug kasan"). Prints a summary ending with
# "N passed, N failed" and exits non-zero when anything failed.
#
# Until this repository has a videobuf2 core (videobuf2-core.c), the guest part runs on
# upstream's videobuf2 instead, as a self-test of the harness.
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/setup-host.sh"

out=$VB2_OUT/check
rm -rf "$out"; mkdir -p "$out"
items=$out/items.tsv
: > "$items"
# item NAME PASS|FAIL [DETAIL_FILE]
item() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >> "$items"; log "$2 $1"; }
t_start=$(date +%s)

if [ -f "$VB2_ROOT/videobuf2-core.c" ]; then impl=ours; else impl=upstream; fi
export VB2_IMPL=$impl
# shellcheck source=lib.sh
. "$VB2_ROOT/tools/host/lib.sh"
"$VB2_ROOT/tools/host/kernel-tree.sh" > /dev/null

# The harness's own parsers (KTAP goes through the tree's kunit.py, so after the tree).
if python3 "$VB2_ROOT/tools/report/vb2check.py" selftest > "$out/selftest.log" 2>&1; then
	item "harness: result parser self-test" PASS
else
	item "harness: result parser self-test" FAIL "$out/selftest.log"
fi

# Static checks on our sources, file by file.
mapfile -t srcs < <(cd "$VB2_ROOT" && git ls-files -co --exclude-standard -- '*.c' '*.h' |
	grep -v '^tools/' | sort)
# No file to check is no pass: git or the pattern failed, or the tree is not ours.
if [ ${#srcs[@]} -eq 0 ]; then
	echo "no .c or .h file found in $VB2_ROOT (git ls-files)" > "$out/static-files.log"
	item "static checks: the list of source files" FAIL "$out/static-files.log"
fi
for f in "${srcs[@]}"; do
	log "static checks: $f"
	if "$KSRC_PRISTINE/scripts/checkpatch.pl" --strict --no-tree --no-summary --terse --show-types \
		-f "$VB2_ROOT/$f" > "$out/checkpatch.tmp" 2>&1 && [ ! -s "$out/checkpatch.tmp" ]; then
		item "checkpatch --strict $f" PASS
	else
		mv "$out/checkpatch.tmp" "$out/checkpatch-${f//\//_}.log"
		item "checkpatch --strict $f" FAIL "$out/checkpatch-${f//\//_}.log"
	fi
	"$KSRC_PRISTINE/scripts/kernel-doc" -none "$VB2_ROOT/$f" > "$out/kdoc.tmp" 2>&1 || true
	if [ -s "$out/kdoc.tmp" ]; then
		mv "$out/kdoc.tmp" "$out/kernel-doc-${f//\//_}.log"
		item "kernel-doc $f" FAIL "$out/kernel-doc-${f//\//_}.log"
	else
		item "kernel-doc $f" PASS
	fi
done
rm -f "$out"/*.tmp

# The documentation: a Sphinx build with warnings as errors catches a kernel-doc directive
# or a literalinclude anchor in the driver guide that no longer matches the sources.
if VB2_OUT=$out "$VB2_ROOT/tools/host/docs.sh" > "$out/docs.log" 2>&1; then
	item "docs: sphinx-build -W Documentation/" PASS
else
	item "docs: sphinx-build -W Documentation/" FAIL "$out/docs.log"
fi

# The driver contract page against upstream's own results (baseline/anchor.txt): every
# contract case that fails on 6.12 must be a row the page calls a deliberate difference.
if python3 "$VB2_ROOT/tools/report/vb2check.py" contract-doc \
	--anchor "$VB2_ROOT/baseline/anchor.txt" --doc "$VB2_ROOT/Documentation/driver-contract.rst" \
	> "$out/contract-doc.log" 2>&1; then
	item "docs: driver contract matches upstream's results" PASS
else
	item "docs: driver contract matches upstream's results" FAIL "$out/contract-doc.log"
fi

# The guest plans: check_plans (lib.sh) sets plans, uvc, dvb, debug_plans and kasan_plans
# and writes the small plans they use into $out.
check_plans "$out" "$impl"

# Each kernel flavor: the build, then the plan in a guest. The debug kernel has lockdep,
# kmemleak, DEBUG_LIST, DMA-API debugging; the kasan kernel adds KASAN on top.
flavors=${VB2_CHECK_FLAVORS:-debug kasan}
[ "$impl" = upstream ] && flavors=debug
runs=()
static_done=0
# The next flavor's kernel is built while this flavor's guest runs (the guest keeps about
# half of the two CPUs busy), at the lowest priority so that it takes only what the guest
# leaves: on a fresh machine that takes most of a cold KASAN build off make check.
# prebuilt: "FLAVOR PID" of that build.
prebuilt=
build_flavor() {
	if [ "${prebuilt%% *}" = "$1" ]; then
		wait "${prebuilt#* }"
	else
		"$VB2_ROOT/tools/host/build-kernel.sh" > "$out/build-$1.log" 2>&1
	fi
}
prebuild_next() {
	local next
	next=$(echo "$flavors" | tr ' ' '\n' | sed '/^$/d' | sed -n "/^$1\$/{n;p}")
	[ -n "$next" ] || return 0
	(VB2_FLAVOR=$next nice -n 19 "$VB2_ROOT/tools/host/build-kernel.sh" > "$out/build-$next.log" 2>&1) &
	prebuilt="$next $!"
}
for flavor in $flavors; do
	export VB2_FLAVOR=$flavor
	# shellcheck source=lib.sh
	. "$VB2_ROOT/tools/host/lib.sh"
	if build_flavor "$flavor"; then
		item "build: $impl videobuf2, $flavor kernel and modules" PASS
	else
		tail -n 60 "$out/build-$flavor.log" > "$out/build-$flavor-tail.log"
		item "build: $impl videobuf2, $flavor kernel and modules" FAIL "$out/build-$flavor-tail.log"
		continue
	fi

	# W=1 and sparse on our directory, once: every warning in our files is a finding.
	# Our objects are removed first so that gcc sees every file again. A build that
	# stopped (make's "*** ... Error N") checked only part of them, and without sparse
	# C=2 checks nothing: both are findings too.
	if [ "$impl" = ours ] && [ $static_done = 0 ]; then
		static_done=1
		find "$KBUILD/drivers/media/common/videobuf2" -name '*.o' -delete 2>/dev/null || true
		"${KMAKE[@]}" W=1 C=2 drivers/media/common/videobuf2/ > "$out/w1-sparse.log" 2>&1 || true
		{
			command -v sparse > /dev/null ||
				echo "sparse is not installed: C=2 checked nothing (tools/host/setup-host.sh)"
			grep -E 'videobuf2|frame_vector|vb2-' "$out/w1-sparse.log" | grep -E 'warning|error' || true
			grep -E '^make(\[[0-9]+\])?: \*\*\* .*Error [0-9]+$' "$out/w1-sparse.log" || true
		} > "$out/w1.log"
		if [ -s "$out/w1.log" ]; then
			item "W=1 + sparse (C=2): drivers/media/common/videobuf2" FAIL "$out/w1.log"
		else
			item "W=1 + sparse (C=2): drivers/media/common/videobuf2" PASS
		fi
		# Leave the objects built the normal way for the next incremental build.
		"${KMAKE[@]}" -s drivers/media/common/videobuf2/ > /dev/null 2>&1 || true
	fi

	plan=$out/check-$flavor.plan
	# debug: kunit compliance testdrv vicodec-sl compat32 uvc dvb misuse sync bench;
	# kasan: kunit compliance testdrv vicodec-sl compat32 dvb sync races stress uvc.
	# The one kmemleak scan last in both (lockdep may be off by then, see above).
	parts=("${plans[@]}" "${uvc[@]}" "${dvb[@]}")
	if [ "$impl" = ours ]; then
		case $flavor in
		debug) parts+=("${debug_plans[@]}");;
		kasan) parts=("${plans[@]}" "${dvb[@]}" "${kasan_plans[@]}" "${uvc[@]}");;
		esac
	fi
	compose_parts "$plan" "check ($impl)" "$out/leaks-once.plan" "${parts[@]}" \
		"$out/leaks-final.plan"
	# One guest at a time: some steps are judged on time (v4l2-compliance's blocking
	# wait and TIME32/64 tests, the fuzzer's success rates), and under TCG two guests
	# on two cores slow each other past those limits.
	prebuild_next "$flavor"
	"$VB2_ROOT/tools/host/run-guest.sh" "$plan" "$out/guest-$flavor" "${VB2_CHECK_TIMEOUT:-3600}" || true
	runs+=("--run=$out/guest-$flavor")
	# Real DMA through bounce buffers and through an IOMMU: edu.plan again in a guest of
	# its own for each (the main guest's edu devices are mapped directly).
	for mode in $EDU_MODES; do
		edu_guest "$mode" "$out/guest-$flavor-$mode"
		runs+=("--run=$out/guest-$flavor-$mode")
	done
done

echo
echo "make check: videobuf2 = $impl, kernel flavors: $flavors, $(( $(date +%s) - t_start ))s"
[ "$impl" = upstream ] && echo "(no videobuf2 core in this repository yet: the guest ran upstream's, as a harness self-test)"
echo
python3 "$VB2_ROOT/tools/report/vb2check.py" summary --items "$items" "${runs[@]}" \
	--baseline "$VB2_ROOT/baseline/compliance.txt" --max-failures 40 \
	--details "$out/failures.txt" | tee "$out/summary.txt"
exit "${PIPESTATUS[0]}"
