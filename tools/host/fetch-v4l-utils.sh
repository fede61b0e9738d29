#!/bin/bash
# v4l-utils 1.30.1 from Debian 13 ("trixie"), amd64 and i386, with the trixie libraries
# it runs on, unpacked into $VB2_CACHE/v4l-utils-$V4L_VERSION/{amd64,i386}.
#
# Debian 12's v4l-utils (1.22.1) predates the 6.12 uAPI: no REMOVE_BUFS test, nothing of
# max_num_buffers. 1.30.1 needs glibc >= 2.38 and libstdc++ >= 13, newer than the host's,
# so it is not installed: apt-get downloads the packages under a private configuration
# (its own sources list, lists and archive cache in the cache directory; the host's apt
# sources and state are not touched), dpkg-deb unpacks them, and tools/host/mkinitramfs.sh
# puts each architecture's tree into the guest under /opt with a wrapper that starts the
# programs through the tree's own dynamic loader.
#
#   tools/host/fetch-v4l-utils.sh          fetch and unpack, unless done
#   tools/host/fetch-v4l-utils.sh --dir    print the directory (the one place naming the version)
set -euo pipefail
cache=${VB2_CACHE:-$HOME/.cache/videobuf2}
V4L_VERSION=1.30.1-1
dest=$cache/v4l-utils-$V4L_VERSION
if [ "${1:-}" = --dir ]; then echo "$dest"; exit 0; fi
[ "$(cat "$dest/.done" 2>/dev/null)" = "$V4L_VERSION" ] && exit 0

# What v4l2-compliance, v4l2-ctl and media-ctl need at run time (Depends of v4l-utils,
# followed down to libc).
pkgs=(v4l-utils libv4l-0t64 libv4lconvert0t64 libv4l2rds0t64 libc6 libgcc-s1 libstdc++6
      libudev1 libcap2 libjpeg62-turbo)
mirror=${VB2_TRIXIE_MIRROR:-http://deb.debian.org/debian}
apt=$dest/apt
rm -rf "$dest"
mkdir -p "$apt"/{lists/partial,archives/partial} "$dest/deb"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
	> "$apt/sources.list"
: > "$apt/status"
opts=(-o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=-
      -o Dir::State="$apt" -o Dir::State::Lists="$apt/lists" -o Dir::State::status="$apt/status"
      -o Dir::Cache="$apt" -o Dir::Cache::archives="$apt/archives"
      -o APT::Architectures::=amd64 -o APT::Architectures::=i386 -o Debug::NoLocking=1
      -o Acquire::Retries=3 -o APT::Sandbox::User=root)
echo "fetch-v4l-utils: v4l-utils $V4L_VERSION from trixie into $dest" >&2
# Only trixie's own index is fetched here: a mirror syncing another suite cannot fail it.
ok=
for try in 1 2 3; do
	apt-get "${opts[@]}" -qq update && { ok=1; break; }
	echo "fetch-v4l-utils: apt-get update failed (try $try of 3)" >&2
	sleep $((try * 10))
done
[ -n "$ok" ] || { echo "fetch-v4l-utils: cannot read trixie's package index from $mirror" >&2; exit 1; }
for arch in amd64 i386; do
	list=()
	for p in "${pkgs[@]}"; do
		[ "$p" = v4l-utils ] && list+=("$p:$arch=$V4L_VERSION") || list+=("$p:$arch")
	done
	(cd "$dest/deb" && apt-get "${opts[@]}" -qq download "${list[@]}")
	for p in "${pkgs[@]}"; do
		dpkg-deb -x "$(ls "$dest/deb/${p}_"*"_$arch.deb")" "$dest/$arch"
	done
done
rm -rf "$apt"
echo "$V4L_VERSION" > "$dest/.done"
