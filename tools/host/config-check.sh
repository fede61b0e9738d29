#!/bin/bash
# config-check.sh CONFIG FRAGMENT...: every option a fragment asks for must be in CONFIG
# as asked. Kconfig drops what it cannot satisfy without a word; this says so instead.
set -euo pipefail
cfg=$1; shift
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=n) opt=${line%%=*}
		if grep -q "^$opt=" "$cfg"; then echo "config-check: $opt asked =n but is $(grep "^$opt=" "$cfg")" >&2; bad=1; fi;;
	CONFIG_*=*) if ! grep -qxF "$line" "$cfg"; then
			got=$(grep "^${line%%=*}=" "$cfg" || echo "not set")
			echo "config-check: asked $line, got $got" >&2; bad=1
		fi;;
	esac
done < <(cat "$@" | sed 's/[[:space:]]*#.*//' | grep '^CONFIG_')
exit $bad
