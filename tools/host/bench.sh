#!/bin/bash
# make bench: build ours and upstream's videobuf2 into the same non-debugging kernel
# (configs/bench.config), boot each under QEMU TCG with -icount shift=0,sleep=off and one
# vCPU, so that a guest nanosecond is one executed instruction, run tools/guest/vb2-bench
# (tools/plans/bench.plan) in both, and print one table: operation, ours, upstream, ratio,
# with the goal of each row. Writes $VB2_OUT/bench/bench.json and bench.png (a bar chart
# of the ratios). A benchmark reports; it fails only when a run fails, never on a number.
# Each kernel also boots a second guest (tools/plans/bench-iommu.plan): a q35 machine with
# QEMU's intel-iommu (the kernel's default, lazy invalidation) and two edu PCI devices,
# for the rows of group iommu (DMABUF QBUF+DQBUF through the IOMMU); the report merges
# its rows with those of the kernel's main guest.
#
#   VB2_BENCH_ARGS   extra arguments of vb2-bench (e.g. --only hot); with an --only that
#                    does not name iommu, there is no IOMMU guest; with --only iommu,
#                    only the IOMMU guest (the main guest has no edu device)
#   VB2_BENCH_REPEAT run each kernel this many times (default 1); the report shows the
#                    largest difference between runs of one kernel, which should be 0
#   VB2_BENCH_VARIANTS ours with other options, each against ours with its defaults
#                    (default "nodebugfs sync": configs/variant-*.config; "" for none)
export VB2_FLAVOR=bench
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/setup-host.sh"
dpkg-query -W -f='${Status}' python3-matplotlib 2>/dev/null | grep -q 'install ok installed' || {
	SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
		python3-matplotlib >/dev/null
}
out=$VB2_OUT/bench
rm -rf "$out"; mkdir -p "$out"
plan=$VB2_ROOT/tools/plans/bench.plan
args=("VB2_BENCH_ARGS=${VB2_BENCH_ARGS:-}")
# The IOMMU guest's: the same, but --only iommu (none if --only leaves it out).
iommu_plan=$VB2_ROOT/tools/plans/bench-iommu.plan
iommu_args=() prev=
for a in ${VB2_BENCH_ARGS:-}; do
	if [ "$prev" = --only ]; then
		case ",$a," in *,iommu,*) ;; *) iommu_plan=;; esac
		[ "$a" = iommu ] && plan=
	elif [ "$a" != --only ]; then
		iommu_args+=("$a")
	fi
	prev=$a
done
iommu_args=("VB2_BENCH_ARGS=${iommu_args[*]:+${iommu_args[*]} }--only iommu")

runs=() configs=()
# bench_kernel NAME: build the bench kernel of VB2_IMPL (and VB2_VARIANT), named NAME in
# the report, and keep its configuration.
bench_kernel() {
	# shellcheck source=lib.sh
	. "$VB2_ROOT/tools/host/lib.sh"
	"$VB2_ROOT/tools/host/build-kernel.sh" > "$out/build-$1.log" 2>&1 ||
		{ tail -n 30 "$out/build-$1.log"; die "the $1 bench kernel did not build"; }
	cp "$KBUILD/.config" "$out/config-$1"
	configs+=("--config=$1:$out/config-$1")
}
# bench_run NAME I: run I of the bench plan on the kernel bench_kernel built last.
bench_run() {
	[ -n "$plan" ] || return 0
	VB2_ICOUNT=0 VB2_GUEST_CPUS=1 "$VB2_ROOT/tools/host/run-guest.sh" "$plan" \
		"$out/$1-$2" 3600 "${args[@]}" || log "the $1 guest exited with $?"
	runs+=("--run=$1:$out/$1-$2")
}
# bench_iommu NAME I: run I of bench-iommu.plan on the same kernel, behind intel-iommu;
# its rows join run I of NAME in the report (--run=NAME@iommu:DIR), or are run I of NAME
# when there is no main guest.
bench_iommu() {
	[ -n "$iommu_plan" ] || return 0
	local label=$1@iommu
	[ -n "$plan" ] || label=$1
	VB2_ICOUNT=0 VB2_GUEST_CPUS=1 VB2_GUEST_QEMU="-machine q35 -device intel-iommu" \
		VB2_GUEST_CMDLINE="intel_iommu=on" "$VB2_ROOT/tools/host/run-guest.sh" \
		"$iommu_plan" "$out/$1-iommu-$2" 3600 "${iommu_args[@]}" ||
		log "the $1 IOMMU guest exited with $?"
	runs+=("--run=$label:$out/$1-iommu-$2")
}
for impl in ours upstream; do
	export VB2_IMPL=$impl
	bench_kernel "$impl"
	for i in $(seq 1 "${VB2_BENCH_REPEAT:-1}"); do
		bench_run "$impl" "$i"
		bench_iommu "$impl" "$i"
	done
done
# Ours with other options (configs/variant-NAME.config), once each: what the options
# cost. Default: without debugfs (on by default) and with implicit sync (off by default).
export VB2_IMPL=ours
for variant in ${VB2_BENCH_VARIANTS-nodebugfs sync}; do
	export VB2_VARIANT=$variant
	bench_kernel "ours+$variant"
	bench_run "ours+$variant" 1
done
unset VB2_VARIANT
/usr/bin/python3 "$VB2_ROOT/tools/report/benchreport.py" "${runs[@]}" "${configs[@]}" \
	--json "$out/bench.json" --png "$out/bench.png" | tee "$out/report.txt"
exit "${PIPESTATUS[0]}"
