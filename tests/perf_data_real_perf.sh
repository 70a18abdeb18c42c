#!/usr/bin/env bash
# profcpu's perf.data against the real perf, both ways:
#  - `perf script` reads what profcpu's writer wrote (plain and compressed)
#    without a warning and sees the same samples, comm, tids, CPUs and the
#    function the samples are in;
#  - profcpu's reader reads what `perf record -g` wrote (plain, -p PID, -z,
#    -k 1, -a) and finds the very samples `perf script` finds.
# Exit status: 0 pass, 1 fail, 77 skip (no perf).
set -uo pipefail

tool=${PERF_DATA_TOOL:?PERF_DATA_TOOL must name tests/perf_data_tool}
if ! command -v perf >/dev/null; then
	echo "SKIP: perf is not installed"
	exit 77
fi
work=$(mktemp -d /tmp/profcpu-perf-data-e2e-XXXXXX)
busy_pid=
trap '[[ -n $busy_pid ]] && kill $busy_pid 2>/dev/null; rm -rf "$work"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# expect DESCRIPTION ACTUAL EXPECTED
expect() {
	if [[ "$2" == "$3" ]]; then
		echo "ok: $1 ($2)"
	else
		fail "$1: got '$2', expected '$3'"
	fi
}

# Our writer, read by perf script.
for mode in plain compress; do
	file=$work/ours-$mode.data
	if ! "$tool" write "$file" "$mode" 100; then
		fail "perf_data_tool write $mode"
		continue
	fi
	pid=$("$tool" summary "$file" | sed -n 's/^comm: \([0-9]*\) .*/\1/p')
	perf script -i "$file" >"$work/script.txt" 2>"$work/script.err"
	expect "$mode: perf script exit status" $? 0
	expect "$mode: perf script stderr" "$(head -c 300 "$work/script.err")" ""
	expect "$mode: samples perf script sees" "$(grep -c ' cpu-clock: *$' "$work/script.txt")" 100
	expect "$mode: samples with our comm, pid and CPU 1" \
		"$(grep -cE "^ *pdtool-comm +$pid \[001\] +[0-9.]+: +10101010 cpu-clock:" "$work/script.txt")" 50
	expect "$mode: first sample time" "$(grep -m1 -oE '[0-9]+\.[0-9]{6}:' "$work/script.txt")" \
		"1000.010101:"
	expect "$mode: frames in the known function of our MMAP2" \
		"$(grep -cE '^\s+[0-9a-f]+ perf_data_tool_known_function\+0x4 \(.*/perf_data_tool\)$' \
			"$work/script.txt")" 100
	perf report --stdio -i "$file" >"$work/report.txt" 2>"$work/report.err"
	expect "$mode: perf report stderr" "$(head -c 300 "$work/report.err")" ""
	expect "$mode: perf report names the known function" \
		"$(grep -cE '100\.00%.* perf_data_tool_known_function$' "$work/report.txt")" 1
	perf report --header-only -i "$file" >"$work/header.txt" 2>&1
	expect "$mode: header event" "$(grep -c '^# event : name = cpu-clock,' "$work/header.txt")" 1
	expect "$mode: header cmdline" "$(grep -c '^# cmdline : perf_data_tool write' "$work/header.txt")" 1
	expect "$mode: header clockid" "$(grep -c '^# clockid frequency: ' "$work/header.txt")" 1
	if [[ $mode == compress ]]; then
		expect "compress: header compression" \
			"$(grep -c '^# compressed : Zstd, level = 1' "$work/header.txt")" 1
	fi
	expect "$mode: perf evlist" "$(perf evlist -i "$file" 2>&1)" "cpu-clock"
done

# 250,000 samples (22 MB of records): the writer's zstd stream spans frames
# (a new one each 16 MiB of records), which perf reads on as one stream.
file=$work/ours-frames.data
if "$tool" write "$file" compress 250000; then
	perf script -i "$file" >"$work/script.txt" 2>"$work/script.err"
	expect "frames: perf script stderr" "$(head -c 300 "$work/script.err")" ""
	expect "frames: samples perf script sees" "$(grep -c ' cpu-clock: *$' "$work/script.txt")" 250000
else
	fail "perf_data_tool write compress 250000"
fi

# perf record's files, read by our reader: every sample, as "TID [CPU]
# SECONDS.MICROSECONDS", must be one that perf script prints. CPU is
# compared where the recording has it (perf record -a).
has_cpu() {
	grep -q 'sample_type: [A-Z|]*|CPU' <(perf evlist -v -i "$1" 2>/dev/null)
}

our_samples() {
	local cpu=0
	has_cpu "$1" && cpu=1
	"$tool" summary "$1" | awk -v cpu=$cpu '/^sample: / {
		if ($5 < 1) print "sample without a callchain"
		printf "%s %s%d.%06d\n", $2, cpu ? $3 " " : "", int($4 / 1e9), int(($4 % 1e9) / 1e3) }' |
		sort
}

perf_samples() {
	local fields=tid,time,event
	has_cpu "$1" && fields=tid,cpu,time,event
	perf script -i "$1" -F $fields 2>/dev/null |
		awk '/cpu-clock/ {
			gsub(/[\[\]:]/, "")
			if (NF == 4) print $1, $2 + 0, $3; else print $1, $2 }' | sort
}

check_recording() {
	local name=$1 file=$work/$1.data
	shift
	# The workload's exit status (timeout's 124) is perf record's.
	perf record -q -o "$file" "$@" >/dev/null 2>"$work/record.err"
	if [[ ! -s $file ]]; then
		fail "$name: perf record $*: $(head -c 300 "$work/record.err")"
		return
	fi
	our_samples "$file" >"$work/ours.txt"
	perf_samples "$file" >"$work/perf.txt"
	if [[ $(wc -l <"$work/perf.txt") -lt 20 ]]; then
		fail "$name: perf script found only $(wc -l <"$work/perf.txt") samples"
	fi
	expect "$name: samples we read" "$(wc -l <"$work/ours.txt")" "$(wc -l <"$work/perf.txt")"
	expect "$name: same tid, cpu and time" "$(cmp -s "$work/ours.txt" "$work/perf.txt" && echo same)" same
}

if ! perf record -q -o "$work/probe.data" -- true >/dev/null 2>&1; then
	echo "perf record cannot sample here (perf_event_paranoid?); skipping its half"
else
	busy=(timeout 1 sha256sum /dev/zero)
	check_recording plain -g -F 499 -- "${busy[@]}"
	check_recording compressed -z -g -F 499 -- "${busy[@]}"
	check_recording monotonic-clock -k 1 -g -F 499 -- "${busy[@]}"
	check_recording system-wide -g -a -F 99 -- "${busy[@]}"
	sha256sum /dev/zero &
	busy_pid=$!
	check_recording attached -g -F 499 -p "$busy_pid" -- sleep 1
fi

if ((failures)); then
	echo "$failures checks failed"
	exit 1
fi
echo "all checks passed"
