#!/bin/bash
# Configure and build the guest kernel for VB2_IMPL/VB2_FLAVOR:
#   $KBUILD/arch/x86/boot/bzImage and the modules installed under $KBUILD/modroot.
# The config is made again only when a fragment changed; everything else is incremental.
. "$(dirname "$0")/lib.sh"

"$VB2_ROOT/tools/host/kernel-tree.sh" >/dev/null
mkdir -p "$KBUILD" "$CCACHE_DIR"

frags=("$VB2_ROOT/configs/guest.config" "$VB2_ROOT/configs/media.config")
case $VB2_FLAVOR in
debug)	frags+=("$VB2_ROOT/configs/debug.config");;
kasan)	frags+=("$VB2_ROOT/configs/debug.config" "$VB2_ROOT/configs/kasan.config");;
bench)	frags+=("$VB2_ROOT/configs/bench.config");;
coverage) frags+=("$VB2_ROOT/configs/debug.config" "$VB2_ROOT/configs/coverage.config");;
esac
if [ "$VB2_IMPL" = ours ]; then
	for f in ours "ours-$VB2_FLAVOR"; do
		[ -f "$VB2_ROOT/configs/$f.config" ] && frags+=("$VB2_ROOT/configs/$f.config")
	done
	if [ -n "${VB2_VARIANT:-}" ]; then
		[ -f "$VB2_ROOT/configs/variant-$VB2_VARIANT.config" ] ||
			die "no configs/variant-$VB2_VARIANT.config"
		frags+=("$VB2_ROOT/configs/variant-$VB2_VARIANT.config")
	fi
fi
want=$(cat "${frags[@]}" "$KSRC_PRISTINE/.vb2-unpacked" | sha1sum | cut -d' ' -f1)

if [ ! -f "$KBUILD/.config" ] || [ "$(cat "$KBUILD/.vb2-config" 2>/dev/null)" != "$want" ]; then
	log "configuring $KBUILD from tinyconfig + ${frags[*]##*/}"
	"${KMAKE[@]}" -s tinyconfig >/dev/null
	KCONFIG_CONFIG="$KBUILD/.config" "$KSRC/scripts/kconfig/merge_config.sh" -m -O "$KBUILD" \
		"$KBUILD/.config" "${frags[@]}" >/dev/null
	"${KMAKE[@]}" -s olddefconfig >/dev/null
	"$VB2_ROOT/tools/host/config-check.sh" "$KBUILD/.config" "${frags[@]}"
	echo "$want" > "$KBUILD/.vb2-config"
fi

[ -n "${VB2_BUILD_ONLY_CONFIG:-}" ] && exit 0
log "building $VB2_IMPL-$VB2_FLAVOR kernel in $KBUILD"
t0=$(date +%s)
"${KMAKE[@]}" -s bzImage modules
rm -rf "$KBUILD/modroot"
"${KMAKE[@]}" -s INSTALL_MOD_PATH="$KBUILD/modroot" INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod modules_install >/dev/null
# Upstream's kernel gets our test driver too, built against upstream's videobuf2 as an
# external module, so that its compliance results have an anchor as well. (In our kernel
# it is built in-tree: CONFIG_VIDEOBUF2_TEST_DRIVER in configs/ours.config.)
if [ "$VB2_IMPL" = upstream ]; then
	ext=$KBUILD/ext/testdrv
	mkdir -p "$ext"
	rsync -rc --delete --exclude='*.o' --exclude='*.ko' --exclude='.*' "$VB2_ROOT/testdrv/" "$ext/"
	"${KMAKE[@]}" -s M="$ext" CONFIG_VIDEOBUF2_TEST_DRIVER=m CONFIG_VIDEOBUF2_EDU_DRIVER=m modules
	"${KMAKE[@]}" -s M="$ext" CONFIG_VIDEOBUF2_TEST_DRIVER=m CONFIG_VIDEOBUF2_EDU_DRIVER=m INSTALL_MOD_PATH="$KBUILD/modroot" \
		INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod modules_install >/dev/null
	# The driver contract suite uses only the public API: built against upstream's
	# videobuf2 it shows which rows of Documentation/driver-contract.rst 6.12 itself keeps.
	ext=$KBUILD/ext/contract
	mkdir -p "$ext"
	rsync -c "$VB2_ROOT/kunit/vb2-test-helpers.c" "$VB2_ROOT/kunit/vb2-test-helpers.h" \
		"$VB2_ROOT/kunit/videobuf2-contract-test.c" "$ext/"
	printf '%s\n' 'obj-m += videobuf2-contract-kunit.o' \
		'videobuf2-contract-kunit-y := vb2-test-helpers.o videobuf2-contract-test.o' > "$ext/Kbuild"
	"${KMAKE[@]}" -s M="$ext" modules
	"${KMAKE[@]}" -s M="$ext" INSTALL_MOD_PATH="$KBUILD/modroot" \
		INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod modules_install >/dev/null
fi
log "built in $(( $(date +%s) - t0 ))s: $KBUILD/arch/x86/boot/bzImage"
