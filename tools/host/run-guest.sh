#!/bin/bash
# Boot the guest kernel of VB2_IMPL/VB2_FLAVOR with a plan and keep what it printed.
#
#   tools/host/run-guest.sh PLAN OUTDIR [TIMEOUT_SECONDS] [VAR=VALUE...]
#
# VAR=VALUE: set for the plan, as if exported on its first line (VB2_FLAKY_RUNS=150 for a
# flaky measurement, VB2_STEP_TIMEOUT, ...); the plan file itself is not copied or changed.
# OUTDIR receives console.log (serial port 1: the kernel console) and results.log
# (serial port 2: what the plan printed, see tools/guest/plan-lib.sh). The exit code is
# QEMU's, or 124 when the host-side timeout ended the run.
. "$(dirname "$0")/lib.sh"
usage="usage: run-guest.sh PLAN OUTDIR [TIMEOUT] [VAR=VALUE...]"
plan=${1:?$usage}
outdir=${2:?$usage}
shift 2
tmo=${VB2_GUEST_TIMEOUT:-1800}
case ${1:-} in [0-9]*) tmo=$1; shift;; esac
mkdir -p "$outdir"
"$VB2_ROOT/tools/host/mkinitramfs.sh"
"$VB2_ROOT/tools/host/mkinitramfs.sh" --plan "$plan" "$outdir/plan.cpio.gz" "$@"
cat "$KBUILD/initramfs-base.cpio.gz" "$outdir/plan.cpio.gz" > "$outdir/initramfs.cpio.gz"
rm -f "$outdir/plan.cpio.gz"

mem=${VB2_GUEST_MEM:-3G}
[ "$VB2_FLAVOR" = kasan ] && mem=${VB2_GUEST_MEM:-4G}
accel=(-accel tcg,thread=multi)
[ "$("$VB2_ROOT/tools/host/kvm-probe.sh")" = yes ] && accel=(-accel kvm -cpu host)
[ -n "${VB2_ICOUNT:-}" ] && accel=(-accel tcg -icount "shift=$VB2_ICOUNT,sleep=off")
# VB2_MONITOR=PATH: the QEMU monitor on a unix socket (tools/host/sampler.py reads it).
monitor=(-monitor none)
[ -n "${VB2_MONITOR:-}" ] && monitor=(-monitor "unix:$VB2_MONITOR,server,nowait")
# VB2_QEMU_PLUGIN=SO,ARGS: a TCG plugin (tools/host/icount/icount.c for make profile).
plugin=()
[ -n "${VB2_QEMU_PLUGIN:-}" ] && plugin=(-plugin "$VB2_QEMU_PLUGIN")
# The kernel log of a step is read when the step ends (plan-lib.sh): log_buf_len keeps
# all of it. With the default 128 KiB, a 40-minute fuzz step wrapped the log and lost
# the WARN its taint flags showed. kasan_multi_shot: KASAN reports every bad access, not
# only the first of the boot (vb2check sets a known bug of another subsystem aside and
# must still see what comes after it).
# slab_nomerge: the fuzzer's fault injection flags every slab cache but one for failslab
# (tools/guest/vb2-stress.c, failslab_caches()), and a merged cache refuses the flag.
# A plan may ask for QEMU options and kernel parameters of its own, in lines
# "# qemu: ARGS" and "# cmdline: ARGS" (edu-*.plan: the edu DMA device, an IOMMU,
# swiotlb=force); all of them count, also in a plan composed of several. The caller may
# add to both: VB2_GUEST_QEMU (QEMU options, before the plan's) and VB2_GUEST_CMDLINE.
mapfile -t plan_qemu < <( { echo "${VB2_GUEST_QEMU:-}"; sed -n 's/^# qemu: *//p' "$plan"; } |
	tr ' ' '\n' | sed '/^$/d')
plan_cmdline=$(sed -n 's/^# cmdline: *//p' "$plan" | tr '\n' ' ')
cmdline="console=ttyS0 loglevel=2 log_buf_len=16M cma=512M panic=-1 oops=panic panic_on_warn=0 \
kmemleak=on kasan_multi_shot nokaslr slab_nomerge $plan_cmdline${VB2_GUEST_CMDLINE:-}"

# children_cpu FILE: CPU seconds (user + system) the finished children of this shell used,
# into FILE ("times" is a builtin: in a command substitution it would count the
# subshell's children instead).
children_cpu() {
	times > "$1.times"
	sed -n 2p "$1.times" | awk '{ n = 0; for (i = 1; i <= 2; i++) {
		split($i, p, "m"); n += p[1] * 60 + p[2] } printf "%d\n", n }' > "$1"
	rm -f "$1.times"
}

log "booting $VB2_IMPL-$VB2_FLAVOR with plan ${plan##*/} (timeout ${tmo}s, logs in $outdir)"
t0=$(date +%s)
children_cpu "$outdir/cpu-seconds"
cpu0=$(cat "$outdir/cpu-seconds")
set +e
timeout --foreground -k 10 "$tmo" qemu-system-x86_64 \
	"${accel[@]}" -smp "${VB2_GUEST_CPUS:-2}" -m "$mem" \
	-kernel "$KBUILD/arch/x86/boot/bzImage" -initrd "$outdir/initramfs.cpio.gz" \
	-append "$cmdline" -no-reboot -display none "${monitor[@]}" "${plugin[@]}" -nodefaults \
	"${plan_qemu[@]}" \
	-serial "file:$outdir/console.log" -serial "file:$outdir/results.log" \
	</dev/null > "$outdir/qemu.log" 2>&1
rc=$?
set -e
echo $(( $(date +%s) - t0 )) > "$outdir/seconds"
# What QEMU used of the host's CPUs: with the seconds above, how busy the guest kept them
# (what a build beside it would take away).
children_cpu "$outdir/cpu-seconds"
echo $(( $(cat "$outdir/cpu-seconds") - cpu0 )) > "$outdir/cpu-seconds"
rm -f "$outdir/initramfs.cpio.gz"
[ $rc -eq 124 ] && log "guest timed out after ${tmo}s"
log "guest ran $(cat "$outdir/seconds")s (QEMU used $(cat "$outdir/cpu-seconds") CPU seconds), qemu exit $rc"
exit $rc
