#!/usr/bin/env bash
# A runtime before .NET 10 has no CollectTracing5 (the request that leaves
# unread GC events out): collect falls back to CollectTracing2 with the same
# providers and the rundown, and records the stream. Only .NET 10 runs on
# this machine, so a stand-in answers on the diagnostics socket as .NET 8
# and 9 do (tests/fake_dotnet_runtime.py) and streams a fixed file.
source "$(dirname "$0")/lib.sh"

head -c 100000 /dev/urandom >"$workdir/stream" # not nettrace: the summary says so
touch "$workdir/fake.out"
python3 "$tests_dir/fake_dotnet_runtime.py" "$workdir" "$workdir/stream" "$workdir/commands" >"$workdir/fake.out" &
fake=$!
background_pids+=("$fake")
until grep -q ready "$workdir/fake.out"; do
	kill -0 "$fake" 2>/dev/null || fail "the stand-in runtime did not start"
	sleep 0.05
done

"$PROFCPU" collect -pid "$fake" -duration 1 -noperf -o "$workdir/out" 2>"$workdir/err" ||
	{ cat "$workdir/err"; fail "collect -noperf failed"; }
cat "$workdir/err" "$workdir/commands"
# CollectTracing5 (2 6) first, refused; then CollectTracing2 (2 3) with the
# default keywords and the rundown; then StopTracing (2 1).
grep -qx '2 6' "$workdir/commands" || fail "collect did not try CollectTracing5 first"
grep -qx '2 3 rundown 1 providers Microsoft-Windows-DotNETRuntime:0x1c019:4' "$workdir/commands" ||
	fail "no CollectTracing2 with the default providers and the rundown after CollectTracing5 was refused"
grep -qx '2 1' "$workdir/commands" || fail "the session was not stopped"
cmp "$workdir/stream" "$workdir/out/runtime.nettrace" || fail "runtime.nettrace is not the stream the runtime sent"
grep -qF 'no runtime events (GC, exceptions, JIT)' "$workdir/err" && fail "collect said it recorded no events"
echo PASS
