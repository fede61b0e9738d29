#!/bin/bash
# Build the project's guest programs (tools/guest/*.c) as static binaries into DIR.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build-guest-progs.sh DIR}
mkdir -p "$out"
for src in "$root"/tools/guest/*.c; do
	[ -e "$src" ] || continue
	bin=$out/$(basename "$src" .c)
	# Again when the program or one of the shared headers changed.
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] ||
		[ -n "$(find "$root/tools/guest" -name '*.h' -newer "$bin" 2>/dev/null)" ]; then
		gcc -O2 -Wall -Wextra -Werror -static -o "$bin" "$src"
	fi
done
