#!/bin/bash
# Compile this repository inside the kernel, without booting anything: the quick loop
# while writing code.
#
#   tools/host/dev-build.sh [MAKE TARGETS...]     (default: drivers/media/common/videobuf2/)
#
# Installs the repository into the VB2_TREE source tree (tools/host/install-tree.sh), reuses or
# makes the guest config there, and runs make with W=1 on the targets. Extra make
# arguments (C=2, V=1) go in VB2_MAKEFLAGS.
VB2_IMPL=ours
. "$(dirname "$0")/lib.sh"
"$VB2_ROOT/tools/host/kernel-tree.sh" >/dev/null
if [ ! -f "$KBUILD/.config" ]; then
	VB2_BUILD_ONLY_CONFIG=1 "$VB2_ROOT/tools/host/build-kernel.sh"
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(drivers/media/common/videobuf2/)
# shellcheck disable=SC2086
"${KMAKE[@]}" -s W=1 ${VB2_MAKEFLAGS:-} "${targets[@]}"
