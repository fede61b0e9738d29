# shellcheck shell=bash
# Common settings for the host scripts. Source it; do not run it.
#
#   VB2_CACHE   where the kernel trees, build directories, ccache and guest images live
#               (default ~/.cache/videobuf2; it survives between runs and is never inside the repo)
#   VB2_IMPL    ours | upstream: whose videobuf2 the kernel is built with
#   VB2_FLAVOR  debug | kasan | bench: debug.config alone, or with kasan.config on top, or
#               bench.config (no debugging at all, for make bench)
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
case $VB2_FLAVOR in debug|kasan|bench) ;; *) echo "VB2_FLAVOR must be debug, kasan or bench, not '$VB2_FLAVOR'" >&2; exit 2;; esac

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
# edu_guest MODE DIR: boot edu.plan with VB2_EDU_MODE=MODE into DIR; never fails (the
# verdict is vb2check's).
edu_guest() {
	local qemu='' cmdline=''
	case $1 in
	swiotlb) cmdline="swiotlb=force";;
	iommu) qemu="-machine q35 -device intel-iommu"; cmdline="intel_iommu=on iommu.strict=1";;
	*) die "edu_guest: no mode '$1'";;
	esac
	VB2_GUEST_QEMU="$qemu ${VB2_GUEST_QEMU:-}" VB2_GUEST_CMDLINE="$cmdline ${VB2_GUEST_CMDLINE:-}" \
		"$VB2_ROOT/tools/host/run-guest.sh" "$VB2_ROOT/tools/plans/edu.plan" "$2" 900 \
		"VB2_EDU_MODE=$1" || true
}
