#!/bin/bash
# Prepare the kernel source tree for VB2_IMPL under VB2_CACHE and print its path.
#   upstream: the tree unpacked from Debian's linux-source-6.12, never modified
#   ours:     a hard-linked copy of it with this repository installed (tools/host/install-tree.sh)
. "$(dirname "$0")/lib.sh"

[ -n "$KTARBALL" ] || die "no /usr/src/linux-source-6.12.tar.*: run tools/host/setup-host.sh"
stamp=$(stat -c '%s %Y' "$KTARBALL")
if [ ! -f "$KSRC_PRISTINE/.vb2-unpacked" ] || [ "$(cat "$KSRC_PRISTINE/.vb2-unpacked")" != "$stamp" ]; then
	log "unpacking $KTARBALL into $KSRC_PRISTINE"
	rm -rf "$KSRC_PRISTINE" "$VB2_CACHE"/src/linux-6.12-* "$VB2_CACHE/src/.unpack"
	mkdir -p "$VB2_CACHE/src/.unpack"
	tar -xf "$KTARBALL" -C "$VB2_CACHE/src/.unpack"
	mv "$VB2_CACHE/src/.unpack/linux-source-6.12" "$KSRC_PRISTINE"
	rmdir "$VB2_CACHE/src/.unpack"
	echo "$stamp" > "$KSRC_PRISTINE/.vb2-unpacked"
fi
if [ "$VB2_IMPL" = ours ]; then
	if [ ! -f "$KSRC/.vb2-unpacked" ] || ! cmp -s "$KSRC/.vb2-unpacked" "$KSRC_PRISTINE/.vb2-unpacked"; then
		log "making $KSRC (hard links to the pristine tree)"
		rm -rf "$KSRC"
		cp -al "$KSRC_PRISTINE" "$KSRC.tmp"
		mv "$KSRC.tmp" "$KSRC"
	fi
	"$VB2_ROOT/tools/host/install-tree.sh" "$KSRC"
fi
echo "$KSRC"
