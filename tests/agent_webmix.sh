#!/usr/bin/env bash
# The node agent's stacks by default (hybrid) on an ASP.NET Core service
# under its own load (tests/dotnet/WebMix: JSON, regex, LINQ, SHA256 through
# OpenSSL, gzip through zlib), on the OpenSSL path tests/lib.sh forces: at
# least 98% of the samples it pushes reach a thread root with every frame
# named, and the samples in OpenSSL's libcrypto keep their managed caller.
# WebMix is named from its runtime's memory (the agent's default for .NET
# 9+); what is left is mostly a [JIT] leaf under named callers (0.2% of
# the samples in two runs; 0.5-0.6% on the perf map route, docs/AGENT.md)
# and the JIT compiler's own frames: the stacks that are not are printed.
# The agent runs in a PID namespace of its own, with WebMix, and pushes to
# the tests' stand-in receiver (no Pyroscope server can run here).
if [[ ${AGENT_WEBMIX_INSIDE:-} != 1 ]]; then
	AGENT_WEBMIX_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

build_dotnet_app WebMix
port=$(free_port)
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$port" 60
webmix=$started_pid

receiver_port=$(free_port)
mkdir "$workdir/received"
start python3 "$tests_dir/pyroscope_receiver.py" "$receiver_port" "$workdir/received" ok
until [[ -e $workdir/received/ready ]]; do sleep 0.1; done
sleep 3 # past WebMix's start-up, into its steady load
start "$PROFCPU" agent --push "http://127.0.0.1:$receiver_port" --push-interval 5 \
	--push-timeout 60 --spool "$workdir/spool" 2>"$workdir/agent.err"
agent=$started_pid
sleep 16
kill -INT "$agent"
wait "$agent" || fail "the agent exited with status $?"
cat "$workdir/agent.err"

python3 - "$workdir/received" "$webmix" "$tests_dir" <<'PY' || fail "the agent's WebMix stacks are not whole and named"
import glob, os, re, sys
sys.path.insert(0, sys.argv[3])
from protobuf_wire import pprof_samples

received, pid = sys.argv[1], sys.argv[2]
# The thread roots profcpu's replay knows (src/profile/replay.c).
ROOTS = {"start_thread", "__libc_start_call_main", "__libc_start_main", "_start", "clone3",
         "__clone3"}
UNNAMED = re.compile(r"^\[(unknown|JIT|[A-Za-z0-9_.]+\.dll)\]$")
LIBCRYPTO = re.compile(r"^(\[libcrypto\.so\.3\]|SHA(256|512)_|EVP_|CRYPTO_|OPENSSL_|ossl_)")
total = whole = crypto = crypto_called = 0
broken = []  # stacks not whole or not named, to say which
# The CPU pushes in the order they came, from the second one holding
# WebMix: the first period began before the agent turned its perf map on.
# (Its lock contention and exceptions come as profiles of their own.)
pushes = [[sample for sample in pprof_samples(open(path, "rb").read())
           if sample[0].get("pid") == pid and sample[2]]
          for path in sorted(glob.glob(f"{received}/*.pb.gz"),
                             key=lambda p: int(os.path.basename(p).split(".")[0]))
          if "label.__name__=process_cpu\n" in open(path[:-len(".pb.gz")] + ".query").read()]
for push in [push for push in pushes if push][1:]:
    for labels, values, names in push:
        count = values[0]
        total += count
        if names[-1] in ROOTS and not any(UNNAMED.match(name) for name in names):
            whole += count
        elif len(broken) < 8:
            broken.append(";".join(reversed(names)))
        inside = [i for i, name in enumerate(names) if LIBCRYPTO.match(name)]
        if inside:
            crypto += count
            # names run from the leaf up: a managed frame (Module!Type::Method) above
            if any("!" in name and "::" in name for name in names[max(inside) + 1:]):
                crypto_called += count
print(f"WebMix as the agent pushed it: {total} samples, {100 * whole / max(total, 1):.1f}% "
      f"whole and named; {crypto} in libcrypto, {100 * crypto_called / max(crypto, 1):.1f}% "
      f"of them with their managed caller")
for stack in broken:
    print("not whole and named:", stack)
sys.exit(0 if total >= 100 and whole >= 0.98 * total and crypto > 0 and
         crypto_called >= 0.99 * crypto else 1)
PY
echo "ok"
