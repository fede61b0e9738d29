#!/bin/bash
# Install what the harness needs on a Debian 12 machine. Costs a dpkg query when all is there.
#
# 32-bit programs: the guest runs Debian's i386 v4l-utils on the 64-bit kernel (compat
# ioctls). Its libraries are Multi-Arch and install beside the amd64 ones; v4l-utils itself
# is not, so its i386 package is unpacked into $VB2_CACHE/i386 rather than installed, and
# tools/mkinitramfs.sh puts v4l2-compliance-32 and v4l2-ctl-32 into the guest.
set -euo pipefail
pkgs=(linux-source-6.12 qemu-system-x86 v4l-utils busybox-static bc flex bison libelf-dev
      libssl-dev cpio ccache sparse python3 kmod rsync dwarves zstd xz-utils gcc make perl
      gzip file python3-sphinx binutils
      libc6:i386 libstdc++6:i386 libgcc-s1:i386 libv4l-0:i386 libv4lconvert0:i386
      libv4l2rds0:i386 libudev1:i386 libjpeg62-turbo:i386)
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
cache=${VB2_CACHE:-$HOME/.cache/videobuf2}

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup-host: installing ${missing[*]}" >&2
	dpkg --print-foreign-architectures | grep -qx i386 || $SUDO dpkg --add-architecture i386
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The i386 v4l-utils, unpacked, of the same version as the installed libraries.
ver=$(dpkg-query -W -f='${Version}' libv4l-0:i386)
if [ "$(cat "$cache/i386/.version" 2>/dev/null)" != "$ver" ]; then
	echo "setup-host: unpacking v4l-utils:i386 $ver into $cache/i386" >&2
	rm -rf "$cache/i386"
	mkdir -p "$cache/i386/deb"
	(cd "$cache/i386/deb" && apt-get download -q "v4l-utils:i386=$ver" >/dev/null 2>&1)
	dpkg-deb -x "$cache"/i386/deb/v4l-utils_*_i386.deb "$cache/i386/root"
	echo "$ver" > "$cache/i386/.version"
fi
