#!/bin/bash
# make coverage: which lines, functions and branches of videobuf2 make check's tests reach.
#
# Builds the coverage kernel (configs/coverage.config: the debug kernel plus gcov for the
# videobuf2 directory only, no KASAN; ours-coverage under VB2_CACHE/build) and runs on it
# every step of make check's two guests (tools/host/lib.sh, check_plans: the debug kernel's
# plans and the KASAN kernel's own, races and stress, in their short forms) and the edu
# guests of each mode, in groups:
#   kunit       tools/plans/kunit.plan
#   compliance  compliance.plan, testdrv.plan (v4l2-compliance on every driver)
#   users       vicodec-sl, compat32, uvc, dvb, edu (all its guests): real users
#   misuse      misuse.plan, races.plan, stress.plan
#   other       what is left: sync.plan, the vb2-bench run
# The guest zeroes the counters before each group and sends them home after it
# (plan-lib.sh, gcov_reset and gcov_dump); what booting the kernel reached is a dump of
# its own ("boot"), counted in the total only. lcov and genhtml (Debian's lcov) make
# out/coverage/html/ (all tests) and html-GROUP/, summary.txt (per file, per group,
# per file and group), coverage.json, coverage.png and unreached.txt (every function no
# test reaches). The tests' own verdicts are in tests.txt, for information: make check
# judges them, this reports.
#
#   VB2_COVERAGE_TIMEOUT  seconds for the main guest (default 5400)
#   VB2_COVERAGE_PLAN     run this plan (one group named after it) instead of make
#                         check's, and no edu guests: a quick test of the chain
#   VB2_COVERAGE_REUSE=1  no build and no guest: the report again from the guests' logs
#                         in out/coverage (of the same VB2_COVERAGE_PLAN; the kernel must
#                         be the one they ran)
export VB2_IMPL=ours VB2_FLAVOR=coverage
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/setup-host.sh"
[ -f "$VB2_ROOT/videobuf2-core.c" ] ||
	die "make coverage measures our videobuf2: no videobuf2-core.c here"
dpkg-query -W -f='${Status}' python3-matplotlib 2>/dev/null | grep -q 'install ok installed' || {
	SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
		python3-matplotlib >/dev/null
}
out=$VB2_OUT/coverage
reuse=${VB2_COVERAGE_REUSE:-}
if [ -n "$reuse" ]; then
	[ -f "$out/guest/results.log" ] || die "VB2_COVERAGE_REUSE: no $out/guest/results.log"
	rm -rf "$out/gcda" "$out/info" "$out"/html*
	mkdir -p "$out/plans" "$out/gcda" "$out/info"
else
	rm -rf "$out"; mkdir -p "$out/plans" "$out/gcda" "$out/info"
fi
t_start=$(date +%s)

if [ -z "$reuse" ]; then
	log "building the coverage kernel ($out/build.log)"
	"$VB2_ROOT/tools/host/build-kernel.sh" > "$out/build.log" 2>&1 ||
		{ tail -n 30 "$out/build.log"; die "the coverage kernel did not build"; }
fi
vb2dir=$KBUILD/drivers/media/common/videobuf2
ls "$vb2dir"/*.gcno > /dev/null 2>&1 || die "no .gcno in $vb2dir: the build had no gcov"

# group_of PLAN: the group a plan of make check counts in.
group_of() {
	case $(basename "$1" .plan) in
	kunit) echo kunit;;
	compliance|testdrv) echo compliance;;
	vicodec-sl|compat32|uvc|dvb|edu) echo users;;
	misuse|short|races|stress) echo misuse;;
	*) echo other;;
	esac
}
# gcov_plan FILE VERB GROUP: a plan of one gcov step (plan-lib.sh).
gcov_plan() { printf '# plan: %s\n%s %s\n' "${2/_/-}-$3" "$2" "$3" > "$1"; }

groups=(kunit compliance users misuse other)
edu=
if [ -n "${VB2_COVERAGE_PLAN:-}" ]; then
	g=$(basename "$VB2_COVERAGE_PLAN" .plan)
	groups=("$g")
	declare -A members=([$g]="$VB2_COVERAGE_PLAN")
	lead=() tail=()
else
	# Every plan of both guests once, in the order make check runs them (the KASAN
	# kernel's short.plan before its races and stress), grouped.
	check_plans "$out/plans" ours
	declare -A members=() seen=()
	for p in "${plans[@]}" "${uvc[@]}" "${dvb[@]}" "${debug_plans[@]}" "${kasan_plans[@]}"; do
		[ -n "${seen[$p]:-}" ] && continue
		seen[$p]=1
		[ "$(basename "$p")" = edu.plan ] && edu=$p
		g=$(group_of "$p")
		members[$g]="${members[$g]:-} $p"
	done
	lead=("$out/plans/leaks-once.plan") tail=("$out/plans/leaks-final.plan")
fi
parts=("${lead[@]}")
gcov_plan "$out/plans/gcov-boot.plan" gcov_dump boot
parts+=("$out/plans/gcov-boot.plan")
for g in "${groups[@]}"; do
	[ -n "${members[$g]:-}" ] || continue
	gcov_plan "$out/plans/reset-$g.plan" gcov_reset "$g"
	gcov_plan "$out/plans/dump-$g.plan" gcov_dump "$g"
	# shellcheck disable=SC2206 # paths without blanks, as make check's
	parts+=("$out/plans/reset-$g.plan" ${members[$g]} "$out/plans/dump-$g.plan")
done
parts+=("${tail[@]}")
compose_parts "$out/plans/coverage.plan" "coverage" "${parts[@]}"

runs=("$out/guest")
[ -n "$reuse" ] || "$VB2_ROOT/tools/host/run-guest.sh" "$out/plans/coverage.plan" "$out/guest" \
	"${VB2_COVERAGE_TIMEOUT:-5400}" || true
# edu.plan again in a guest of its own per mode (bounce buffers, IOMMU), as make check
# does; each is a dump of the users group.
if [ -n "$edu" ]; then
	for mode in $EDU_MODES; do
		gcov_plan "$out/plans/reset-edu-$mode.plan" gcov_reset "users.edu-$mode"
		gcov_plan "$out/plans/dump-edu-$mode.plan" gcov_dump "users.edu-$mode"
		compose_parts "$out/plans/edu-$mode.plan" "edu" "$out/plans/reset-edu-$mode.plan" \
			"$edu" "$out/plans/dump-edu-$mode.plan"
		[ -n "$reuse" ] ||
			edu_guest "$mode" "$out/guest-edu-$mode" "$out/plans/edu-$mode.plan"
		[ -f "$out/guest-edu-$mode/results.log" ] && runs+=("$out/guest-edu-$mode")
	done
fi

results=()
for r in "${runs[@]}"; do results+=("$r/results.log"); done
mapfile -t dumps < <(python3 "$VB2_ROOT/tools/report/covreport.py" extract --into "$out/gcda" \
	"${results[@]}" || true)
[ ${#dumps[@]} -gt 0 ] || die "no gcov data came out of the guests (see $out/guest/results.log)"

# lcov: the .gcno of the build beside each dump's .gcda; only our files (the videobuf2
# directory and include/media/videobuf2-*.h), named by their place in this repository.
# base.info (from the .gcno alone) puts every line in every report, reached or not.
lc=(lcov -q --rc lcov_branch_coverage=1)
ours_only() {
	"${lc[@]}" -e "$1" '*/drivers/media/common/videobuf2/*' '*/include/media/videobuf2-*' \
		-o "$1.tmp" > /dev/null
	sed -e "s#^SF:.*/drivers/media/common/videobuf2/#SF:$VB2_ROOT/#" \
		-e "s#^SF:.*/include/media/videobuf2-#SF:$VB2_ROOT/include/media/videobuf2-#" \
		"$1.tmp" > "$1"
	rm -f "$1.tmp"
}
"${lc[@]}" -c -i -d "$vb2dir" -b "$KBUILD" -o "$out/info/base.info" > "$out/lcov.log" 2>&1 ||
	{ tail -n 20 "$out/lcov.log"; die "lcov could not read $vb2dir"; }
ours_only "$out/info/base.info"
for d in "${dumps[@]}"; do
	cp "$vb2dir"/*.gcno "$out/gcda/$d/"
	"${lc[@]}" -c -d "$out/gcda/$d" -b "$KBUILD" -o "$out/info/$d.info" >> "$out/lcov.log" 2>&1 ||
		{ tail -n 20 "$out/lcov.log"; die "lcov could not read the dump $d"; }
	ours_only "$out/info/$d.info"
done
# The sources lcov saw are the installed copies of this repository's: say so if one
# changed since (genhtml shows the repository's).
for f in "$vb2dir"/*.gcno; do
	src=$(basename "$f" .gcno).c
	[ -f "$VB2_ROOT/$src" ] && ! cmp -s "$VB2_ROOT/$src" "$KSRC/drivers/media/common/videobuf2/$src" &&
		log "warning: $src changed since the build: the report shows the new file"
done

# add OUT INFO...: one tracefile of several, base.info included.
add() {
	local o=$1 args=() i
	shift
	for i in "$out/info/base.info" "$@"; do args+=(-a "$i"); done
	"${lc[@]}" "${args[@]}" -o "$o" >> "$out/lcov.log" 2>&1
}
report=()
for g in "${groups[@]}"; do
	infos=()
	for d in "${dumps[@]}"; do
		[ "${d%%.*}" = "$g" ] && infos+=("$out/info/$d.info")
	done
	[ ${#infos[@]} -gt 0 ] || continue
	add "$out/info/group-$g.info" "${infos[@]}"
	report+=(--group "$g=$out/info/group-$g.info")
done
all=()
for d in "${dumps[@]}"; do all+=("$out/info/$d.info"); done
add "$out/info/total.info" "${all[@]}"

gh=(genhtml -q --branch-coverage --function-coverage --rc lcov_branch_coverage=1
	--prefix "$VB2_ROOT" --legend)
"${gh[@]}" -t "all tests" -o "$out/html" \
	"$out/info/total.info" >> "$out/lcov.log" 2>&1 || log "genhtml failed: see $out/lcov.log"
for g in "${groups[@]}"; do
	[ -f "$out/info/group-$g.info" ] || continue
	"${gh[@]}" -t "$g" -o "$out/html-$g" \
		"$out/info/group-$g.info" >> "$out/lcov.log" 2>&1 || log "genhtml failed for $g"
done

commit=$(git -C "$VB2_ROOT" describe --always --dirty 2>/dev/null || echo unknown)
{
	echo "make coverage: videobuf2 $commit, $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $KBUILD"
	echo "dumps: ${dumps[*]}"
	echo
	/usr/bin/python3 "$VB2_ROOT/tools/report/covreport.py" report --total "$out/info/total.info" \
		"${report[@]}" --root "$VB2_ROOT" --json "$out/coverage.json" \
		--png "$out/coverage.png" --unreached "$out/unreached.txt" \
		--branches "$out/branches.txt" \
		--title "videobuf2 $commit: coverage by ${groups[*]} ($(date -u +%Y-%m-%d))"
} | tee "$out/summary.txt"

# The tests' verdicts, for information (the kernel is none of make check's, so its
# KUnit cases have no baseline of their own).
args=()
for r in "${runs[@]}"; do args+=("--run=$r"); done
python3 "$VB2_ROOT/tools/report/vb2check.py" summary "${args[@]}" \
	--baseline "$VB2_ROOT/baseline/compliance.txt" > "$out/tests.txt" 2>&1 || true
echo
echo "tests (information only, make check judges): $(tail -n 1 "$out/tests.txt")"
echo "report: $out/html/index.html, $out/summary.txt, $out/coverage.png;" \
	"$(( $(date +%s) - t_start ))s"
