#!/bin/bash
# Make a Linux 6.12 tree use this project as its videobuf2.
#
#   tools/host/install-tree.sh KDIR
#
# Replaces drivers/media/common/videobuf2/ and include/media/videobuf2-*.h with this
# repository's files and touches nothing else. Files whose contents did not change keep
# their timestamps, so an incremental kernel build recompiles only what really changed.
# Running it twice is the same as running it once.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kdir=${1:?usage: install-tree.sh KDIR}
[ -f "$kdir/Makefile" ] && [ -d "$kdir/drivers/media/common" ] || { echo "install-tree: $kdir is not a kernel tree" >&2; exit 1; }
grep -q '^VERSION = 6' "$kdir/Makefile" && grep -q '^PATCHLEVEL = 12' "$kdir/Makefile" ||
	{ echo "install-tree: $kdir is not Linux 6.12" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# drivers/media/common/videobuf2/: our sources, Kconfig, Kbuild (installed as Makefile,
# the name upstream's directory uses), the KUnit suites and the test driver.
mkdir -p "$stage/vb2"
cp "$root"/Kconfig "$stage/vb2/Kconfig"
cp "$root"/Kbuild "$stage/vb2/Makefile"
for f in "$root"/*.c "$root"/*.h; do
	[ -e "$f" ] && cp "$f" "$stage/vb2/"
done
for sub in kunit testdrv; do
	[ -d "$root/$sub" ] || continue
	mkdir -p "$stage/vb2/$sub"
	cp "$root/$sub"/*.[ch] "$root/$sub"/Kbuild "$stage/vb2/$sub/" 2>/dev/null || true
	[ -f "$stage/vb2/$sub/Kbuild" ] && mv "$stage/vb2/$sub/Kbuild" "$stage/vb2/$sub/Makefile"
done
rsync -rc --delete "$stage/vb2/" "$kdir/drivers/media/common/videobuf2/"

# include/media/videobuf2-*.h: ours replace upstream's; an upstream one we do not ship goes.
for h in "$kdir"/include/media/videobuf2-*.h; do
	[ -e "$h" ] || continue
	[ -e "$root/include/media/$(basename "$h")" ] || rm -f "$h"
done
for h in "$root"/include/media/videobuf2-*.h; do
	[ -e "$h" ] && rsync -c "$h" "$kdir/include/media/"
done
exit 0
