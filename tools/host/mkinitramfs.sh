#!/bin/bash
# Build the guest initramfs for VB2_IMPL/VB2_FLAVOR in two parts:
#   $KBUILD/initramfs-base.cpio.gz  busybox, v4l-utils with their libraries, the modules,
#                                   the guest programs and init (made again when any changed)
#   a plan archive (tools/host/mkinitramfs.sh --plan PLAN OUT [VAR=VALUE...]) holding /plan
#                                   and /plan-env (the variables, exported before the plan)
# QEMU gets the two concatenated; the kernel unpacks both into one root file system.
. "$(dirname "$0")/lib.sh"

cpio_gz() { (cd "$1" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1; }

if [ "${1:-}" = --plan ]; then
	plan=$2 out=$3
	shift 3
	stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
	cp "$plan" "$stage/plan"
	: > "$stage/plan-env"
	for kv in "$@"; do
		[[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "not VAR=VALUE: '$kv'"
		printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}" >> "$stage/plan-env"
	done
	cpio_gz "$stage" > "$out"
	exit 0
fi

base=$KBUILD/initramfs-base.cpio.gz
# v4l-utils 1.30.1 from Debian 13, amd64 and i386, unpacked by tools/host/fetch-v4l-utils.sh.
# Each architecture's programs and the trixie libraries they need go to /opt/v4l-utils/ARCH
# in the guest, started through that tree's own loader by a wrapper in /usr/bin:
# v4l2-compliance, v4l2-ctl and media-ctl (64-bit), v4l2-compliance-32 and v4l2-ctl-32
# (32-bit programs on the 64-bit kernel: compat ioctls). Nothing else in the guest sees
# those libraries.
v4l=$(VB2_CACHE=$VB2_CACHE "$VB2_ROOT/tools/host/fetch-v4l-utils.sh" --dir)
[ -f "$v4l/.done" ] || die "no v4l-utils in $v4l: run tools/host/setup-host.sh"
guestbin=$KBUILD/guest-bin
"$VB2_ROOT/tools/host/build-guest-progs.sh" "$guestbin"

# Made again when the guest scripts and programs are not those it holds, compared by
# content (another worktree may have made it later from other ones), or when the
# modules, v4l-utils or this script are newer than the archive.
base_stamp=$(cat "$VB2_ROOT/tools/guest/init" "$VB2_ROOT/tools/guest/plan-lib.sh" \
	"$guestbin.stamps"/* | sha256sum | cut -d' ' -f1)
if [ -f "$base" ] && [ "$(cat "$base.stamp" 2>/dev/null)" = "$base_stamp" ] &&
	[ -z "$(find "$KBUILD/modroot" "$v4l/.done" "$0" -newer "$base" -print -quit \
	2>/dev/null)" ]; then
	exit 0
fi
log "making $base"
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/local/bin,lib,lib64,etc,proc,sys,dev,tmp,root}
cp /bin/busybox "$stage/bin/busybox"
cp "$VB2_ROOT/tools/guest/init" "$stage/init"
cp "$VB2_ROOT/tools/guest/plan-lib.sh" "$stage/plan-lib.sh"
chmod +x "$stage/init"
# needed_libs PROGRAM LIBDIR: the shared libraries PROGRAM needs, transitively, all of
# them in LIBDIR. Read from the ELF headers rather than with ldd, which runs the program's
# loader: a host kernel without IA32 emulation cannot run the 32-bit one.
needed_libs() {
	local prog=$1 dir=$2 f lib todo seen=" "
	todo=("$prog")
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			case $seen in *" $lib "*) continue;; esac
			seen="$seen$lib "
			[ -e "$dir/$lib" ] || die "$prog needs $lib, which is not in $dir"
			echo "$dir/$lib"
			todo+=("$dir/$lib")
		done
	done
}
# install_v4l ARCH TRIPLET LOADER SUFFIX PROGRAM...
install_v4l() {
	local arch=$1 triplet=$2 loader=$3 suffix=$4 p lib
	local libdir=$v4l/$arch/usr/lib/$triplet dst=/opt/v4l-utils/$arch
	shift 4
	mkdir -p "$stage$dst/bin" "$stage$dst/lib"
	cp -L "$libdir/$loader" "$stage$dst/lib/"
	for p in "$@"; do
		cp "$v4l/$arch/usr/bin/$p" "$stage$dst/bin/"
		for lib in $(needed_libs "$v4l/$arch/usr/bin/$p" "$libdir"); do
			cp -L "$lib" "$stage$dst/lib/"
		done
		printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' \
			"$dst/lib/$loader" "$dst/lib" "$dst/bin/$p" > "$stage/usr/bin/$p$suffix"
		chmod +x "$stage/usr/bin/$p$suffix"
	done
}
install_v4l amd64 x86_64-linux-gnu ld-linux-x86-64.so.2 "" v4l2-compliance v4l2-ctl media-ctl
install_v4l i386 i386-linux-gnu ld-linux.so.2 -32 v4l2-compliance v4l2-ctl
cp -a "$guestbin"/. "$stage/usr/local/bin/"
cp -a "$KBUILD/modroot/lib/modules" "$stage/lib/"
echo 'root:x:0:0:root:/root:/bin/sh' > "$stage/etc/passwd"
echo 'root:x:0:' > "$stage/etc/group"
cpio_gz "$stage" > "$base.tmp"
mv "$base.tmp" "$base"
echo "$base_stamp" > "$base.stamp"
