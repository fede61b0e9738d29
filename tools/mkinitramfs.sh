#!/bin/bash
# Build the guest initramfs for VB2_IMPL/VB2_FLAVOR in two parts:
#   $KBUILD/initramfs-base.cpio.gz  busybox, v4l-utils with their libraries, the modules,
#                                   the guest programs and init (made again when any changed)
#   a plan archive (tools/mkinitramfs.sh --plan PLAN OUT) holding /plan only
# QEMU gets the two concatenated; the kernel unpacks both into one root file system.
. "$(dirname "$0")/lib.sh"

cpio_gz() { (cd "$1" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1; }

if [ "${1:-}" = --plan ]; then
	plan=$2 out=$3
	stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
	cp "$plan" "$stage/plan"
	cpio_gz "$stage" > "$out"
	exit 0
fi

base=$KBUILD/initramfs-base.cpio.gz
progs=(/usr/bin/v4l2-compliance /usr/bin/v4l2-ctl /usr/bin/media-ctl)
guestbin=$KBUILD/guest-bin
"$VB2_ROOT/tools/build-guest-progs.sh" "$guestbin"

# Made again when the modules, the guest scripts or the programs are newer than the archive.
if [ -f "$base" ] && [ -z "$(find "$KBUILD/modroot" "$VB2_ROOT/tools/guest" "$guestbin" -newer "$base" -print -quit)" ]; then
	exit 0
fi
log "making $base"
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/local/bin,lib,lib64,etc,proc,sys,dev,tmp,root}
cp /bin/busybox "$stage/bin/busybox"
cp "$VB2_ROOT/tools/guest/init" "$stage/init"
cp "$VB2_ROOT/tools/guest/plan-lib.sh" "$stage/plan-lib.sh"
chmod +x "$stage/init"
for p in "${progs[@]}"; do
	cp "$p" "$stage/usr/bin/"
	ldd "$p" | awk '/=> \//{print $3} /^\s*\/lib/{print $1}' | while read -r lib; do
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
done
mkdir -p "$stage/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib64/"
[ -d /usr/lib/x86_64-linux-gnu/libv4l ] && mkdir -p "$stage/usr/lib/x86_64-linux-gnu" &&
	cp -r /usr/lib/x86_64-linux-gnu/libv4l "$stage/usr/lib/x86_64-linux-gnu/"
cp -a "$guestbin"/. "$stage/usr/local/bin/"
cp -a "$KBUILD/modroot/lib/modules" "$stage/lib/"
echo 'root:x:0:0:root:/root:/bin/sh' > "$stage/etc/passwd"
echo 'root:x:0:' > "$stage/etc/group"
cpio_gz "$stage" > "$base.tmp"
mv "$base.tmp" "$base"
