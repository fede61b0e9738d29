# Functions a plan may call. The guest init sources this file, then the plan.
#
# The results stream (serial port 2) is a sequence of records the host parses
# (tools/report/vb2check.py):
#   @@VB2 PLAN <name>                  the plan starts
#   @@VB2 PART <name>                  a plan of several composed into one starts
#                                      (tools/host/check.sh); its steps follow
#   @@VB2 STEP <id> <kind> [<label>]   a step starts; its output follows
#   @@VB2 RC <id> <exit code> <secs>   the step ended, after that many seconds
#   @@VB2 DMESG <id>                   the kernel log written during the step follows
#   @@VB2 ENDDMESG <id>
#   @@VB2 TAINT <id> <n>               /proc/sys/kernel/tainted after that log
#   @@VB2 DEBUG <id> debug_locks=<0|1|absent> kmemleak=<on|off|absent> dma_debug=<on|off|absent>
#                                      the debugging aids after that log (vb2_debug_aids)
#   @@VB2 DONE                         the plan ran to its end
# kind is one of: cmd, compliance, kunit, kmemleak, flaky, run.

VB2_OUT=/dev/ttyS1
VB2_STEP_TIMEOUT=${VB2_STEP_TIMEOUT:-900}

vb2_mark() { echo "@@VB2 $*" > $VB2_OUT; }

# Flush the kernel log into the results stream and clear it, so that every message is
# attributed to the step during which it was printed. The taint flags follow: a WARN
# whose splat the log buffer lost still shows there.
vb2_dmesg() {
	vb2_mark DMESG "$1"
	dmesg -c > $VB2_OUT 2>&1
	vb2_mark ENDDMESG "$1"
	# Not the shell's read: it reads a byte at a time, and a sysctl file read at an
	# offset other than 0 ends there (512 came out as 5).
	vb2_mark TAINT "$1" "$(cat /proc/sys/kernel/tainted)"
	vb2_debug_aids "$1"
}

# The debugging aids that switch themselves off when they meet a problem: lockdep after
# its first report or a taint that makes it unreliable (a KASAN report), kmemleak and
# DMA-API debugging when an allocation of their own fails. A step that runs after that
# runs unchecked, which the host counts as a finding (vb2check.py, debug_aid_findings);
# "absent": the kernel does not have it.
# kmemleak is asked with a command it does not know: it answers EINVAL while it works
# and EPERM once it is off. Reading the file works either way (and lists the leaks),
# "scan" would scan. The write waits for a scan under way, if any.
vb2_debug_aids() {
	local locks=absent leak=absent dma=absent
	[ -r /proc/lockdep_stats ] &&
		locks=$(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats)
	if [ -e /sys/kernel/debug/kmemleak ]; then
		leak=on
		{ echo vb2-probe > /sys/kernel/debug/kmemleak; } 2>&1 | grep -q "not permitted" &&
			leak=off
	fi
	if [ -r /sys/kernel/debug/dma-api/disabled ]; then
		dma=on
		[ "$(cat /sys/kernel/debug/dma-api/disabled)" = Y ] && dma=off
	fi
	vb2_mark DEBUG "$1" "debug_locks=${locks:-absent}" "kmemleak=$leak" "dma_debug=$dma"
}

# vb2_part NAME: the steps that follow belong to plan NAME (tools/host/check.sh composes
# several plans into one). A known bug of another subsystem that turns lockdep off costs
# the rest of its own plan its lockdep, not the plans after it (vb2check.py).
vb2_part() { vb2_mark PART "$1"; }

# vb2_step ID KIND LABEL COMMAND...: run COMMAND with a timeout, its output to the stream.
vb2_uptime() { read -r up _ < /proc/uptime; echo "$up"; }

# Step ids are unique in a run: a plan made of several may load the same driver in each
# part, so the second "load-vivid" becomes "load-vivid-2", and so on.
VB2_SEEN_IDS=" "
vb2_unique_id() {
	local n=1
	VB2_ID=$1
	while case $VB2_SEEN_IDS in *" $VB2_ID "*) true;; *) false;; esac; do
		n=$((n + 1)); VB2_ID=$1-$n
	done
	VB2_SEEN_IDS="$VB2_SEEN_IDS$VB2_ID "
}

vb2_step() {
	local id kind=$2 label=$3 rc t0 t1
	vb2_unique_id "$1"
	id=$VB2_ID
	shift 3
	vb2_mark STEP "$id" "$kind" "$label"
	t0=$(vb2_uptime)
	timeout "$VB2_STEP_TIMEOUT" "$@" > $VB2_OUT 2>&1 < /dev/null
	rc=$?
	t1=$(vb2_uptime)
	vb2_mark RC "$id" "$rc" "$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")"
	vb2_dmesg "$id"
	return $rc
}

# The plan's verbs.
run()        { local id=$1; shift; vb2_step "$id" cmd - "$@"; }
compliance() { local id=$1; shift; vb2_step "$id" compliance "$id" v4l2-compliance -C never "$@"; }
# The same with Debian's i386 v4l2-compliance: a 32-bit process on the 64-bit kernel.
compliance32() { local id=$1; shift; vb2_step "$id" compliance "$id" v4l2-compliance-32 -C never "$@"; }
kunit()      { local id=$1; shift; vb2_step "$id" kunit "$1" modprobe "$@"; }
load()       { local id=$1; shift; vb2_step "$id" cmd - modprobe "$@"; devlinks; }
unload()     { local id=$1; shift; vb2_dma_mappings "$id"; vb2_step "$id" cmd - rmmod "$@"; }

# DMA-API debugging keeps every DMA mapping in a table, but it reports a mapping that
# nobody unmapped only when a PCI device goes away, and the devices here are platform
# devices. A mapping left behind stays in the table after its pages were freed; when
# the pages serve a new mapping, the warning ("overlapping mappings") blames whoever
# maps them next, long after the leak. So, before a module goes and with every test
# program of the plan gone, the table must be empty. A file whose last reference a
# kernel thread dropped is released by a worker a little later: the table gets 10 s.
# The table is read only while it means something and lists no freed device:
# - not once dma-debug has turned itself off (an allocation of its own failed, which
#   the fuzzer's fault injection can cause): it then forgets unmaps but keeps listing.
#   The check could not be made, so the step fails (the DEBUG records name the step
#   during which it turned off);
# - not after a step found mappings left: rmmod runs anyway and frees their devices.
# /tmp/vb2-dma-unchecked says why, and every later step prints it (and passes: the
# step that found it failed).
vb2_dma_mappings() {
	[ -r /sys/kernel/debug/dma-api/dump ] || return 0
	vb2_step "dma-mappings-$1" cmd - sh -c '
		d=/sys/kernel/debug/dma-api
		off=/tmp/vb2-dma-unchecked
		[ -e $off ] && { cat $off; exit 0; }
		n=0
		while :; do
			if [ "$(cat $d/disabled)" = Y ]; then
				echo "not checked: DMA-API debugging turned itself off" \
					"(its own allocation failed, see the kernel log)" | tee $off
				exit 1
			fi
			grep -q . $d/dump || break
			if [ $n = 10 ]; then
				echo "DMA mappings left after 10 s: $(grep -c . $d/dump), by device:"
				cut -d" " -f1-3 $d/dump | sort | uniq -c
				echo "processes with media files open or mapped:"
				for p in /proc/[0-9]*; do
					f=$(ls -l $p/fd 2>/dev/null |
						grep -cE "video|media|dvb|v4l-|dmabuf|request")
					m=$(grep -cE "/dev/(video|dvb|v4l)|dmabuf" $p/maps 2>/dev/null)
					[ "${f:-0}${m:-0}" = 00 ] ||
						echo "  ${p#/proc/} $(cat $p/comm): $f files, $m mappings"
				done
				head -n 40 $d/dump
				echo "not checked: an earlier step found DMA mappings left" > $off
				exit 1
			fi
			sleep 1
			n=$((n + 1))
		done
		[ $n = 0 ] || echo "DMA mappings all gone after $n s"'
}

# /dev/char/MAJ:MIN links, which v4l2-ctl and v4l2-compliance use to find entities
# (udev makes them on a real system).
devlinks() {
	local d k v name
	mkdir -p /dev/char
	for d in /sys/dev/char/*; do
		name=
		while IFS='=' read -r k v; do
			[ "$k" = DEVNAME ] && name=$v
		done < "$d/uevent"
		# Only media nodes: forking is slow under TCG, and there are many tty nodes.
		case $name in
		video*|vbi*|radio*|swradio*|v4l-*|media*) ln -sfn "../$name" "/dev/char/${d##*/}";;
		esac
	done
}

# kmemleak: scan twice (an object must be seen unreferenced in two scans to be reported),
# then print what it found. Only meaningful after the modules under test are unloaded.
# A plan made of several (make check) sets VB2_KMEMLEAK_AT_END: the steps of the parts
# are skipped, and one scan at the end (kmemleak_final) reports every leak of the run
# (each with the backtrace of its allocation). Under TCG a scan of a KASAN guest's
# memory takes more than a minute.
kmemleak() {
	local id=$1
	[ -n "${VB2_KMEMLEAK_AT_END:-}" ] && return 0
	[ -e /sys/kernel/debug/kmemleak ] || { vb2_step "$id" kmemleak - echo "kmemleak: not available"; return; }
	# A scan that fails (kmemleak turned itself off: EPERM) fails the step: no scan, no
	# verdict on leaks.
	vb2_step "$id" kmemleak - sh -c 'k=/sys/kernel/debug/kmemleak
		{ echo scan > $k && sleep 1 && echo scan > $k && cat $k; } ||
			{ echo "kmemleak: the scan failed (kmemleak off? see the kernel log)"; exit 1; }'
}

# Memory that comes back. kmemleak finds slab objects and vmalloc areas that nobody
# freed, not pages taken from the page allocator (dma-sg's buffers, the system heap's
# dma-bufs, CMA). Such a page is in none of the kernel's counters: vb2_mem_sum adds up
# the ones it is not in (free, page cache, anonymous, slab, kernel stacks, page tables,
# vmalloc, per-cpu allocations), in KiB, after dropping the page cache. Free pages on
# the per-CPU lists count too: MemFree leaves them out, and they hold megabytes that
# come and go. The guests are x86-64: 4 KiB pages. mem_mark NAME keeps that sum.
# mem_returned ID NAME KIB is a step that fails when the sum is now more than KIB below
# NAME's; with a fourth word "not" it fails unless it is (the check's own test); without
# a sum for NAME it fails either way. What a module's first load keeps for good (KASAN
# shadow, debugging pools) would count against the check: mark with the modules loaded.
vb2_mem_sum() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	awk 'FILENAME ~ /meminfo/ &&
		/^(MemFree|Cached|AnonPages|Slab|KernelStack|PageTables|VmallocUsed|Percpu):/ {
		n += $2 }
		FILENAME ~ /zoneinfo/ && $1 == "count:" { n += 4 * $2 }
		END { print n }' /proc/meminfo /proc/zoneinfo
}
mem_mark() { vb2_mem_sum > "/tmp/vb2-mem-$1"; }
mem_returned() {
	local back='[ $(($1 - $3)) -le "$4" ]'
	[ "${4:-}" = not ] && back="! $back"
	vb2_step "$1" cmd - sh -c 'for n in "$1" "$3"; do
			case $n in ""|*[!0-9]*) echo "no sum: \"$1\" at $2, \"$3\" now"; exit 2;; esac
		done
		echo "accounted memory: $1 KiB at $2, $3 KiB now;" \
			"$(($1 - $3)) KiB not back (at most $4)"; '"$back" - \
		"$(cat "/tmp/vb2-mem-$2" 2>/dev/null)" "$2" "$(vb2_mem_sum)" "$3"
}

# Find a /dev node by the name the driver gave it: a video4linux node by its "name"
# attribute, a media device by its "model".
devnode() {
	local f
	for f in /sys/class/video4linux/*/name /sys/bus/media/devices/*/model; do
		[ -e "$f" ] || continue
		if [ "$(cat "$f")" = "$1" ]; then
			f=${f%/*}; echo "/dev/${f##*/}"; return 0
		fi
	done
	return 1
}

# vb2_run_plan PLAN: run PLAN, after the variables the host gave for it (/plan-env:
# run-guest.sh's VAR=VALUE arguments).
vb2_run_plan() {
	[ -f /plan-env ] && . /plan-env
	vb2_mark PLAN "$(sed -n 's/^# plan: *//p' "$1" | head -n1)"
	vb2_dmesg boot
	. "$1"
	vb2_dmesg end
	vb2_mark DONE
}

kmemleak_final() {
	VB2_KMEMLEAK_AT_END=
	kmemleak "$@"
}

# The results of one v4l2-compliance run, read as vb2check.py's compliance_tests() reads
# them (keep the two alike; tools/report/test_vb2check.py runs both on the same output): for
# each instance of test T (one per input, say), a line
#   vb2-flaky: run R OK KEY                      or
#   vb2-flaky: run R FAIL KEY at LOCATION
# KEY as vb2check gives it, with ID for the step; LOCATION the file(line) of the test's
# first fail: line (file by its base name; "-" when it printed none).
# awk -v id=ID -v test=T -v run=R -f THIS_PROGRAM OUTPUT
VB2_COMPLIANCE_AWK='
function reset_fails() { first = "" }
BEGIN { device = "-"; section = "-"; reset_fails() }
{
	sub(/\r$/, "")
	gsub(/\r/, "\t")
	gsub(/\033\[[0-9;]*m/, "")
}
/^Compliance test for / && $(NF - 1) == "device" {
	device = $NF; sub(/:$/, "", device); section = "-"; reset_fails(); next
}
/^[A-Z][^\t:]*(\([^)]*\))?[^\t:]*:$/ {
	section = substr($0, 1, length($0) - 1); reset_fails(); next
}
/(^|\t)fail: / {
	if (first == "") {
		match($0, /(^|\t)fail: /)
		s = substr($0, RSTART + RLENGTH)
		first = "?"
		if (match(s, /^[^ \t]+\([0-9]+\)/)) {
			first = substr(s, 1, RLENGTH); sub(/^.*\//, "", first)
		}
	}
	next
}
/(^|\t)test .*: (OK|OK \([^)]*\)|FAIL)[ \t]*$/ {
	s = $0; sub(/[ \t]+$/, "", s)
	if (match(s, /: FAIL$/)) res = "FAIL"; else { match(s, /: OK( \([^)]*\))?$/); res = "OK" }
	name = substr(s, 1, RSTART - 1)
	if (match(name, /(^|\t)test /)) name = substr(name, RSTART + RLENGTH)
	base = id "|" device "|" section "|" name
	n = ++seen[base]
	key = n == 1 ? base : base " #" n
	if (name == test)
		print "vb2-flaky: run " run " " res " " key (res == "FAIL" ? " at " (first == "" ? "-" : first) : "")
	reset_fails()
}'

# flaky_measure ID RUNS TEST COMPLIANCE [ARGS...]: how often test TEST fails, and where.
# Runs COMPLIANCE (v4l2-compliance, or v4l2-compliance-32 for 32 bits) -C never ARGS...
# RUNS times in one step (flaky-ID) and prints, for each run, a line per instance of TEST
# (see VB2_COMPLIANCE_AWK; a run without TEST prints "vb2-flaky: run R NONE ID"), the
# fail lines of the runs that failed, then
#   vb2-flaky: ID TEST failed in F of RUNS runs
# ID is the compliance step of make check the measurement stands for (vivid0-s, say): the
# keys come out as that step's, ready for baseline/flaky.txt. "tools/report/vb2check.py
# flaky-report" counts failures per key and location, upstream's and ours side by side.
flaky_measure() {
	local id=$1 runs=$2 test=$3 bin=$4
	shift 4
	printf '%s\n' "$VB2_COMPLIANCE_AWK" > /tmp/vb2-compliance.awk
	vb2_step "flaky-$id" flaky "$test" sh -c '
		id=$1 n=$2 test=$3; shift 3
		f=0
		for i in $(seq 1 $n); do
			"$@" > /tmp/flaky.log 2>&1
			awk -v id="$id" -v test="$test" -v run="$i/$n" \
				-f /tmp/vb2-compliance.awk /tmp/flaky.log > /tmp/flaky.res
			cat /tmp/flaky.res
			[ -s /tmp/flaky.res ] || echo "vb2-flaky: run $i/$n NONE $id"
			grep -q "^vb2-flaky: run [0-9/]* FAIL " /tmp/flaky.res || continue
			f=$((f + 1))
			grep "fail: " /tmp/flaky.log | head -n 10
		done
		echo "vb2-flaky: $id $test failed in $f of $n runs"' - "$id" "$runs" "$test" "$bin" \
		-C never "$@"
}

# Coverage (make coverage, tools/host/coverage.sh: a kernel with CONFIG_GCOV_KERNEL and gcov
# for the videobuf2 directory). gcov_reset GROUP zeroes every counter (and forgets the
# data of modules unloaded since); gcov_dump GROUP sends the counters of the videobuf2
# directory home: its .gcda files (copied first: debugfs gives them no size), as a
# gzipped tar in base64 between the lines "@@GCOV-BEGIN GROUP" and "@@GCOV-END GROUP" of
# the step's output. The data of a module unloaded since the last reset is there too
# (gcov_persist=1, the default).
gcov_reset() { run "gcov-reset-$1" sh -c 'echo 1 > /sys/kernel/debug/gcov/reset'; }
gcov_dump() {
	run "gcov-$1" sh -c '
		d=$(find /sys/kernel/debug/gcov -type d -path "*/drivers/media/common/videobuf2" |
			head -n1)
		[ -n "$d" ] || { echo "no gcov data of drivers/media/common/videobuf2"; exit 1; }
		rm -rf /tmp/gcov; mkdir -p /tmp/gcov
		for f in "$d"/*.gcda; do
			[ -e "$f" ] || continue
			cat "$f" > "/tmp/gcov/${f##*/}" || exit 1
		done
		echo "@@GCOV-BEGIN $1"
		tar -czf - -C /tmp/gcov . | base64
		echo "@@GCOV-END $1"
		rm -rf /tmp/gcov' - "$1"
}
