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
for src in "$root"/tools/guest/*.c; do
	[ -e "$src" ] || continue
	bin=$out/$(basename "$src" .c)
	# Again when the program, the library or one of the shared headers changed.
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] ||
		[ -n "$(find "$root/tools/guest" \( -name '*.h' -o -path '*/lib/*' \) \
			-newer "$bin" 2>/dev/null)" ]; then
		gcc "${cflags[@]}" -o "$bin" "$src" "${lib[@]}"
	fi
done
