#!/usr/bin/env bash
# A .NET app under the watch: its JIT frames are named in the capture as
# collect names them, from the perf map and jitdump the watch switched on
# and copied into the capture's folder while sampling.
source "$(dirname "$0")/lib.sh"

build_dotnet_app HotLoop
start_dotnet_app "$workdir/HotLoop/hotloop.dll" 600
target=$started_pid
"$PROFCPU" watch -pid "$target" --before 3 --after 1 --once -o "$workdir/out" \
	2>"$workdir/stderr" &
watch=$!
until grep -q 'sampling pid' "$workdir/stderr"; do sleep 0.1; done
# Past the app's first second, whose HotMethod runs as tier-0 and OSR code
# whose samples skip Caller (a fifth of a window that began there): the
# --before window begins 2 s of CPU after the watch began.
start_ticks=$(cpu_ticks "$target")
until (($(cpu_ticks "$target") > start_ticks + 500)); do sleep 0.5; done
kill -USR1 "$watch"
status=0
wait "$watch" || status=$?
cat "$workdir/stderr"
((status == 0)) || fail "watch exited with $status"
captures=("$workdir"/out/*_manual)
((${#captures[@]} == 1)) || fail "expected one capture, found: ${captures[*]}"
capture=${captures[0]}
assert_file "$capture/perf-$target.map"
assert_share "$capture/folded_stacks.out" 'Demo\.Program::Main;hotloop!Demo\.Program::Caller;hotloop!Demo\.Program::HotMethod' 80 100
