#!/bin/bash
# Install what the harness needs on a Debian 12 machine. Costs a dpkg query when all is there.
#
# The guest's v4l-utils are not the host's: tools/host/fetch-v4l-utils.sh unpacks Debian 13's
# 1.30.1 (amd64 and i386, with their libraries) into the cache.
set -euo pipefail
pkgs=(linux-source-6.12 qemu-system-x86 busybox-static bc flex bison libelf-dev
      libssl-dev cpio ccache sparse python3 kmod rsync dwarves zstd xz-utils gcc make perl
      gzip file python3-sphinx binutils debian-archive-keyring lcov)
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup-host: installing ${missing[*]}" >&2
	# A mirror in the middle of a sync serves some index with the wrong size and
	# apt-get update exits 100, although what we need may well be installable:
	# try a few times, then let apt-get install decide.
	for try in 1 2 3; do
		$SUDO apt-get update -qq && break
		echo "setup-host: apt-get update failed (try $try of 3)" >&2
		[ "$try" = 3 ] || sleep $((try * 10))
	done
	if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
		echo "setup-host: cannot install ${missing[*]}; see apt-get's messages above" >&2
		exit 1
	fi
fi

# v4l2-compliance and v4l2-ctl 1.30.1 (Debian 13), amd64 and i386, unpacked into the cache.
"$(dirname "$0")/fetch-v4l-utils.sh"
