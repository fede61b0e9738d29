#!/bin/bash
# Print yes when KVM really boots a guest on this machine, no otherwise. On machines
# where nested KVM is broken /dev/kvm exists but a guest hangs or aborts, so the probe
# boots a trivial guest under a short timeout. The answer is cached per host boot.
. "$(dirname "$0")/lib.sh"
[ -n "${VB2_KVM:-}" ] && { echo "$VB2_KVM"; exit 0; }
cache=$VB2_CACHE/kvm-probe
boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo none)
if [ -f "$cache" ] && [ "$(head -n1 "$cache")" = "$boot" ]; then
	tail -n1 "$cache"; exit 0
fi
answer=no
if [ -w /dev/kvm ] && [ -f "$KBUILD/arch/x86/boot/bzImage" ]; then
	dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
	printf '# plan: kvm-probe\nrun probe echo kvm-works\n' > "$dir/plan"
	"$VB2_ROOT/tools/host/mkinitramfs.sh" >/dev/null 2>&1 || true
	"$VB2_ROOT/tools/host/mkinitramfs.sh" --plan "$dir/plan" "$dir/plan.cpio.gz"
	# QEMU aborts where nested KVM is broken: that is an answer, not an error (set -e).
	if cat "$KBUILD/initramfs-base.cpio.gz" "$dir/plan.cpio.gz" > "$dir/initrd" 2>/dev/null; then
		(timeout -k 5 60 qemu-system-x86_64 -accel kvm -cpu host -m 1G -smp 1 \
			-kernel "$KBUILD/arch/x86/boot/bzImage" -initrd "$dir/initrd" \
			-append "console=ttyS0 loglevel=2 panic=-1" -no-reboot -display none \
			-monitor none -nodefaults -serial null -serial "file:$dir/results" \
			</dev/null >/dev/null 2>&1) 2>/dev/null || true
	fi
	if grep -q '^kvm-works' "$dir/results" 2>/dev/null; then answer=yes; fi
fi
mkdir -p "$VB2_CACHE"
printf '%s\n%s\n' "$boot" "$answer" > "$cache"
echo "$answer"
