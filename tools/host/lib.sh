# shellcheck shell=bash
# Common settings for the host scripts. Source it; do not run it.
#
#   VB2_CACHE   where the kernel trees, build directories, ccache and guest images live
#               (default ~/.cache/videobuf2; it survives between runs and is never inside the repo)
#   VB2_IMPL    ours | upstream: whose videobuf2 the kernel is built with
#   VB2_FLAVOR  debug | kasan | bench | coverage: debug.config alone, or with kasan.config
#               on top, or bench.config (no debugging at all, for make bench), or debug.config
#               with gcov for the videobuf2 directory (coverage.config, for make coverage)
#   VB2_VARIANT an option set of ours (configs/variant-NAME.config), built beside the flavour
#   VB2_TREE    name of the source tree and build directory for VB2_IMPL=ours (default ours);
#               a developer working beside another gives it a name of their own

set -euo pipefail

VB2_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VB2_CACHE=${VB2_CACHE:-$HOME/.cache/videobuf2}
VB2_IMPL=${VB2_IMPL:-ours}
VB2_FLAVOR=${VB2_FLAVOR:-debug}
VB2_OUT=${VB2_OUT:-$VB2_ROOT/out}
VB2_JOBS=${VB2_JOBS:-$(nproc)}

case $VB2_IMPL in ours|upstream) ;; *) echo "VB2_IMPL must be ours or upstream, not '$VB2_IMPL'" >&2; exit 2;; esac
case $VB2_FLAVOR in debug|kasan|bench|coverage) ;; *) echo "VB2_FLAVOR must be debug, kasan, bench or coverage, not '$VB2_FLAVOR'" >&2; exit 2;; esac

KTARBALL=${KTARBALL:-$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1 || true)}
KSRC_PRISTINE=$VB2_CACHE/src/linux-6.12
if [ "$VB2_IMPL" = upstream ]; then
	KSRC=$KSRC_PRISTINE
else
	KSRC=$VB2_CACHE/src/linux-6.12-${VB2_TREE:-ours}
fi
if [ "$VB2_IMPL" = upstream ]; then KBUILD=$VB2_CACHE/build/upstream-$VB2_FLAVOR; else KBUILD=$VB2_CACHE/build/${VB2_TREE:-ours}-$VB2_FLAVOR; fi
# VB2_VARIANT=NAME (ours only): configs/variant-NAME.config on top, in a build directory
# of its own beside the flavour's (same sources, so ccache still hits).
if [ -n "${VB2_VARIANT:-}" ] && [ "$VB2_IMPL" = ours ]; then KBUILD=$KBUILD-$VB2_VARIANT; fi
export CCACHE_DIR=${CCACHE_DIR:-$VB2_CACHE/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# Fixed build stamps keep ccache hits across rebuilds of the same sources.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=vb2 KBUILD_BUILD_HOST=vb2

KMAKE=(make -C "$KSRC" O="$KBUILD" ARCH=x86_64 "CC=ccache gcc" "HOSTCC=ccache gcc" -j"$VB2_JOBS")
# The coverage kernel: gcov for the videobuf2 directory alone (GCOV_PROFILE in our Kbuild,
# which only this variable sets; a kernel without CONFIG_GCOV_KERNEL ignores it).
if [ "$VB2_FLAVOR" = coverage ]; then KMAKE+=(VB2_GCOV=y); fi

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# compose_plan OUT NAME PLAN...: one plan made of several, in order.
compose_plan() {
	local out=$1 name=$2 p
	shift 2
	{
		echo "# plan: $name"
		for p in "$@"; do grep -v '^# plan:' "$p"; done
	} > "$out"
}

# The guests of tools/plans/edu.plan beyond the main guest, where the edu devices are
# mapped directly: every streaming mapping bounced through swiotlb, and both devices
# behind QEMU's intel-iommu (q35) in strict mode, each in a DMA domain of its own.
EDU_MODES="swiotlb iommu"
# edu_guest MODE DIR [PLAN]: boot edu.plan (or PLAN, made of it: tools/host/coverage.sh) with
# VB2_EDU_MODE=MODE into DIR; never fails (the verdict is vb2check's).
edu_guest() {
	local qemu='' cmdline=''
	case $1 in
	swiotlb) cmdline="swiotlb=force";;
	iommu) qemu="-machine q35 -device intel-iommu"; cmdline="intel_iommu=on iommu.strict=1";;
	*) die "edu_guest: no mode '$1'";;
	esac
	VB2_GUEST_QEMU="$qemu ${VB2_GUEST_QEMU:-}" VB2_GUEST_CMDLINE="$cmdline ${VB2_GUEST_CMDLINE:-}" \
		"$VB2_ROOT/tools/host/run-guest.sh" "${3:-$VB2_ROOT/tools/plans/edu.plan}" "$2" 900 \
		"VB2_EDU_MODE=$1" || true
}

# check_plans DIR IMPL: the plans of make check's guests (tools/host/check.sh), for IMPL's
# videobuf2; tools/host/coverage.sh runs all of them on one kernel. Sets the arrays plans (both
# kernels), uvc and dvb (ours only; where they go is check.sh's), debug_plans and
# kasan_plans (one kernel only), and writes the small plans they use into DIR:
# short.plan, bench-short.plan, leaks-once.plan (first in a guest) and leaks-final.plan
# (last). compose_parts makes one plan of them.
#
# KUnit (ours only), compliance on the in-tree drivers, the test driver, vicodec's
# stateless decoder, 32-bit v4l2-compliance, uvcvideo on an emulated USB camera, the DVB
# demux on vidtv, and implicit sync and debugfs (sync.plan checks that nothing
# waits where the option is off), on both kernels. The debug kernel adds the misuse table
# and one short run of the benchmark program (it proves that vb2-bench works; no figure
# is judged); the KASAN kernel (with implicit sync on) the short forms of the races (5 s
# each instead of 60) and of the fuzzer (make stress is the long one).
# shellcheck disable=SC2034 # the arrays are the caller's
check_plans() {
	plans=("$VB2_ROOT/tools/plans/compliance.plan" "$VB2_ROOT/tools/plans/testdrv.plan"
		"$VB2_ROOT/tools/plans/vicodec-sl.plan" "$VB2_ROOT/tools/plans/edu.plan")
	# uvc.plan can meet a known vhci_hcd use-after-free (vb2check.py, KNOWN_SPLATS), whose
	# KASAN report turns lockdep off for the rest of the boot: on the KASAN kernel it runs
	# after every other plan, so that only its own steps run without lockdep (vb2check fails
	# any other step that does). The debug kernel has no KASAN: nothing reports it there, and
	# uvc keeps its place.
	uvc=() dvb=()
	if [ "$2" = ours ]; then
		plans=("$VB2_ROOT/tools/plans/kunit.plan" "${plans[@]}" "$VB2_ROOT/tools/plans/compat32.plan")
		uvc=("$VB2_ROOT/tools/plans/uvc.plan")
		dvb=("$VB2_ROOT/tools/plans/dvb.plan")
	fi
	printf 'VB2_RACE_SECONDS=5\nVB2_STRESS_OPS=15000\nVB2_STRESS_SECONDS=120\n' > "$1/short.plan"
	# Not the DMABUF rotation rows: a system-heap dma-buf queued at a second index while the
	# first still holds its mapping (6.12 keeps it until another dma-buf comes) is mapped
	# twice for one device, and DMA-API debugging warns about the overlap (the heap maps
	# without DMA_ATTR_SKIP_CPU_SYNC). make bench's kernel has no DMA-API debugging.
	echo 'VB2_BENCH_ARGS="--short --only floor,hot,vivid,alloc,scale,read,memory"' \
		> "$1/bench-short.plan"
	debug_plans=("$VB2_ROOT/tools/plans/misuse.plan" "$VB2_ROOT/tools/plans/sync.plan"
		"$1/bench-short.plan" "$VB2_ROOT/tools/plans/bench.plan")
	kasan_plans=("$VB2_ROOT/tools/plans/sync.plan" "$1/short.plan"
		"$VB2_ROOT/tools/plans/races.plan" "$VB2_ROOT/tools/plans/stress.plan")
	# One kmemleak scan at the end instead of one per part (see plan-lib.sh), and no
	# automatic scans in between: each costs a minute or more under TCG.
	cat > "$1/leaks-once.plan" <<'EOF2'
VB2_KMEMLEAK_AT_END=1
[ -e /sys/kernel/debug/kmemleak ] && echo scan=off > /sys/kernel/debug/kmemleak
EOF2
	echo 'kmemleak_final leaks' > "$1/leaks-final.plan"
}

# compose_parts OUT NAME PLAN...: compose_plan, with a PART record before each plan
# (plan-lib.sh's vb2_part), so that vb2check knows which plan a step belongs to.
compose_parts() {
	local out=$1 name=$2 p part
	shift 2
	{
		echo "# plan: $name"
		for p in "$@"; do
			part=$(sed -n 's/^# plan: *//p' "$p" | head -n1)
			echo "vb2_part ${part:-$(basename "$p" .plan)}"
			grep -v '^# plan:' "$p"
		done
	} > "$out"
}
