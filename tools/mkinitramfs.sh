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
# Debian's i386 v4l-utils, unpacked by tools/setup-host.sh: 32-bit programs on the 64-bit
# kernel, installed in the guest as v4l2-compliance-32 and v4l2-ctl-32.
i386=$VB2_CACHE/i386
progs32=(v4l2-compliance v4l2-ctl)
guestbin=$KBUILD/guest-bin
"$VB2_ROOT/tools/build-guest-progs.sh" "$guestbin"

# Made again when the modules, the guest scripts or the programs are newer than the archive.
if [ -f "$base" ] && [ -z "$(find "$KBUILD/modroot" "$VB2_ROOT/tools/guest" "$guestbin" \
	"$i386/.version" -newer "$base" -print -quit 2>/dev/null)" ]; then
	exit 0
fi
log "making $base"
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/local/bin,lib,lib64,etc,proc,sys,dev,tmp,root}
cp /bin/busybox "$stage/bin/busybox"
cp "$VB2_ROOT/tools/guest/init" "$stage/init"
cp "$VB2_ROOT/tools/guest/plan-lib.sh" "$stage/plan-lib.sh"
chmod +x "$stage/init"
# copy_libs PROGRAM LIBDIR...: PROGRAM's interpreter and the shared libraries it needs,
# found in the LIBDIRs, at the same paths. Read from the ELF headers rather than with
# ldd, which runs the program's loader: a host kernel without IA32 emulation cannot run
# the 32-bit one.
copy_libs() {
	local prog=$1 f lib d interp todo seen=" "
	shift
	interp=$(readelf -l "$prog" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
	if [ -n "$interp" ]; then
		mkdir -p "$stage$(dirname "$interp")"
		cp -L "$interp" "$stage$interp"
	fi
	todo=("$prog")
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			case $seen in *" $lib "*) continue;; esac
			seen="$seen$lib "
			for d in "$@"; do
				[ -e "$d/$lib" ] || continue
				mkdir -p "$stage$d"
				cp -L "$d/$lib" "$stage$d/$lib"
				todo+=("$d/$lib")
				continue 2
			done
			die "$prog needs $lib, which is in none of $*"
		done
	done
}
for p in "${progs[@]}"; do
	cp "$p" "$stage/usr/bin/"
	copy_libs "$p" /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu
done
for p in "${progs32[@]}"; do
	[ -x "$i386/root/usr/bin/$p" ] || die "no 32-bit $p in $i386: run tools/setup-host.sh"
	cp "$i386/root/usr/bin/$p" "$stage/usr/bin/$p-32"
	copy_libs "$i386/root/usr/bin/$p" /lib/i386-linux-gnu /usr/lib/i386-linux-gnu
done
for arch in x86_64-linux-gnu i386-linux-gnu; do
	[ -d /usr/lib/$arch/libv4l ] || continue
	mkdir -p "$stage/usr/lib/$arch"
	cp -r /usr/lib/$arch/libv4l "$stage/usr/lib/$arch/"
done
cp -a "$guestbin"/. "$stage/usr/local/bin/"
cp -a "$KBUILD/modroot/lib/modules" "$stage/lib/"
echo 'root:x:0:0:root:/root:/bin/sh' > "$stage/etc/passwd"
echo 'root:x:0:' > "$stage/etc/group"
cpio_gz "$stage" > "$base.tmp"
mv "$base.tmp" "$base"
