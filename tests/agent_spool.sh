#!/usr/bin/env bash
# profcpu agent's spool is a folder no one else controls: the agent runs
# as root and writes and reads there. A symbolic link, a file, a folder of
# another user or one that others may write, planted where the spool goes,
# stops the agent before it writes anything, with one line that says what
# is wrong and how to fix it; a link planted where a period's folder goes
# is left alone. By default the spool is under $STATE_DIRECTORY (systemd's
# StateDirectory=), not in a shared /tmp. A profile kept while the receiver
# was down that cannot be read when it is back (a link planted in its place,
# bytes that are no gzip-compressed pprof, a link in its labels' place) is
# said to be unreadable, once, naming
# its file and why, not refused by the receiver, and dropped; the other kept
# profiles arrive.
#
# The agent runs in a PID namespace of its own (it samples only that
# namespace's processes). No Pyroscope server can be installed on this
# machine: the receiver is the tests' stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_SPOOL_INSIDE:-} != 1 ]]; then
	AGENT_SPOOL_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
(($(id -u) == 0)) || skip "the agent needs root"

port=$(free_port)
mkdir -p "$workdir/received"
start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received" ok
until [[ -e $workdir/received/ready ]]; do sleep 0.1; done
url=http://127.0.0.1:$port

# refused NAME EXPECTED: an agent with --spool $workdir/NAME must stop at
# once with EXPECTED in its one line, writing nothing.
refused() {
	local status=0
	"$PROFCPU" agent --push "$url" --spool "$workdir/$1" 2>"$workdir/$1.err" || status=$?
	cat "$workdir/$1.err"
	((status == 1)) || fail "$1: exit status $status, expected 1"
	grep -qF "$2" "$workdir/$1.err" || fail "$1: the agent did not say: $2"
	(($(wc -l <"$workdir/$1.err") == 1)) || fail "$1: more than one line"
}

echo "--- a symbolic link where the spool goes"
mkdir -m 700 "$workdir/elsewhere"
ln -s "$workdir/elsewhere" "$workdir/link"
refused link "the spool folder $workdir/link is a symbolic link, which the agent does not follow: remove it or choose another with --spool DIR"
[[ -z $(ls -A "$workdir/elsewhere") ]] || fail "the agent wrote into the link's target"

echo "--- a file where the spool goes"
echo planted >"$workdir/file"
refused file "the spool folder $workdir/file is not a folder"
[[ $(cat "$workdir/file") == planted ]] || fail "the file was changed"

echo "--- a folder of another user"
mkdir -m 700 "$workdir/foreign"
chown 65534:65534 "$workdir/foreign"
refused foreign "the spool folder $workdir/foreign belongs to uid 65534, not to the agent's (uid 0)"
[[ -z $(ls -A "$workdir/foreign") ]] || fail "the agent wrote into another user's folder"

echo "--- a folder others may write"
mkdir "$workdir/open"
chmod 777 "$workdir/open"
refused open "the spool folder $workdir/open is writable by other users (mode 0777): chmod 700 it"
[[ -z $(ls -A "$workdir/open") ]] || fail "the agent wrote into a folder others may write"

echo "--- the default under \$STATE_DIRECTORY; a link in a period's place"
mkdir -m 700 "$workdir/state" "$workdir/state/spool" "$workdir/target"
ln -s "$workdir/target" "$workdir/state/spool/period-0000000000001-000000"
STATE_DIRECTORY=$workdir/state start "$PROFCPU" agent --push "$url" --push-interval 1 2>"$workdir/state.err"
agent_pid=$started_pid
until [[ -e $workdir/received/2.query ]]; do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/state.err"; fail "the agent stopped"; }
	sleep 0.2
done
kill -INT "$agent_pid"
wait "$agent_pid" || fail "the agent exited with status $?"
cat "$workdir/state.err"
[[ -s $workdir/state/spool/agent.log ]] || fail "no agent.log in \$STATE_DIRECTORY/spool"
[[ -z $(ls -A "$workdir/target") ]] || fail "the agent followed the link in a period's place"
[[ -L $workdir/state/spool/period-0000000000001-000000 ]] || fail "the planted link was removed or replaced"

echo "--- kept profiles that cannot be read once the receiver is back"
down_port=$(free_port)
start "$PROFCPU" agent --push "http://127.0.0.1:$down_port" --push-interval 1 --spool "$workdir/kept" \
	2>"$workdir/kept.err"
agent_pid=$started_pid
kept_profiles() { find "$workdir/kept" -name 'series-*.pb.gz' 2>/dev/null | sort; }
until (($(kept_profiles | wc -l) >= 3)); do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/kept.err"; fail "the agent stopped"; }
	sleep 0.2
done
linked=$(kept_profiles | sed -n 1p) garbled=$(kept_profiles | sed -n 2p)
unlabelled=$(kept_profiles | sed -n 3p | sed 's/\.pb\.gz$/.labels/')
ln -s /etc/hostname "$workdir/planted-link"
mv -T "$workdir/planted-link" "$linked"
ln -s /etc/hostname "$workdir/planted-link"
mv -T "$workdir/planted-link" "$unlabelled"
echo "not a profile" >"$workdir/garbage"
mv -T "$workdir/garbage" "$garbled"
mkdir -p "$workdir/back"
start python3 "$tests_dir/pyroscope_receiver.py" "$down_port" "$workdir/back" ok
until [[ -z $(kept_profiles) ]] && [[ -e $workdir/back/1.query ]]; do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/kept.err"; fail "the agent stopped"; }
	sleep 0.2
done
kill -INT "$agent_pid"
wait "$agent_pid" || fail "the agent exited with status $?"
cat "$workdir/kept.err"
grep -qx "profcpu: cannot read $linked: Too many levels of symbolic links; that profile is dropped" \
	"$workdir/kept.err" || fail "the kept profile replaced by a link was not said to be unreadable"
grep -qx "profcpu: cannot read $garbled: it is not a gzip-compressed pprof profile; that profile is dropped" \
	"$workdir/kept.err" || fail "the garbled kept profile was not said to be unreadable"
(($(grep -cx "profcpu: cannot read $unlabelled: Too many levels of symbolic links; that profile is dropped" \
	"$workdir/kept.err") == 1)) || fail "the kept labels replaced by a link were not said to be unreadable, once"
! grep -q "receiver refused" "$workdir/kept.err" || fail "a local read failure was said to be the receiver's refusal"
echo "ok: planted links, files and others' folders refused; the spool under \$STATE_DIRECTORY; unreadable kept profiles said so"
