#!/bin/bash
# Install what the harness needs on a Debian 12 machine. Costs a dpkg query when all is there.
set -euo pipefail
pkgs=(linux-source-6.12 qemu-system-x86 v4l-utils busybox-static bc flex bison libelf-dev
      libssl-dev cpio ccache sparse python3 kmod rsync dwarves zstd xz-utils gcc make perl
      gzip file python3-sphinx)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup-host: installing ${missing[*]}" >&2
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
