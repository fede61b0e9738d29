#!/bin/bash
# Build the project's guest programs (tools/guest/*.c) as static binaries into DIR, each
# linked with the shared helpers of tools/guest/lib/ and able to include the kernel
# tree's kselftest.h (tools/testing/selftests, used as it is, never copied here).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: build-guest-progs.sh DIR}
ksft=${KSRC_PRISTINE:-${VB2_CACHE:-$HOME/.cache/videobuf2}/src/linux-6.12}/tools/testing/selftests
[ -f "$ksft/kselftest.h" ] ||
	{ echo "no $ksft/kselftest.h: run tools/host/setup-host.sh" >&2; exit 1; }
mkdir -p "$out"
cflags=(-O2 -Wall -Wextra -Werror -static -I"$root/tools/guest/lib" -idirafter "$ksft")
lib=("$root"/tools/guest/lib/*.c)
# Again when what a program is built from differs from what it was built from: its
# source, the library, the headers it may include, the flags. By content, not by time:
# DIR is shared by every worktree that builds the same kernel, and a binary another one
# made later is newer than this worktree's source without being built from it.
stamps=$out.stamps
mkdir -p "$stamps"
common=$(cat "${lib[@]}" "$root"/tools/guest/lib/*.h "$root"/tools/guest/*.h \
	"$root"/testdrv/*.h 2>/dev/null | sha256sum)
for src in "$root"/tools/guest/*.c; do
	[ -e "$src" ] || continue
	name=$(basename "$src" .c)
	bin=$out/$name
	stamp=$({ echo "${cflags[*]}" "$common"; cat "$src"; } | sha256sum | cut -d' ' -f1)
	if [ ! -x "$bin" ] || [ "$(cat "$stamps/$name" 2>/dev/null)" != "$stamp" ]; then
		gcc "${cflags[@]}" -o "$bin" "$src" "${lib[@]}"
		echo "$stamp" > "$stamps/$name"
	fi
done
