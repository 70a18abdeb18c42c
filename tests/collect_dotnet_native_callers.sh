#!/usr/bin/env bash
# A real ASP.NET Core service hashing with SHA256 (OpenSSL's libcrypto, built
# without frame pointers) and compressing with gzip (the runtime's zlib in
# libSystem.IO.Compression.Native.so) under load (tests/dotnet/WebMix). In
# the default hybrid mode the samples in those libraries keep their managed
# callers, and nearly every stack reaches its thread's start. A caller is a
# managed frame: the runtime's native shim in between
# (libSystem.Security.Cryptography.Native.OpenSsl.so) does not count. For
# gzip it is System.IO.Compression's ReadyToRun code. For SHA256 the JIT
# inlines the route's lambda, SHA256.HashData and its P/Invoke into the
# delegate ASP.NET Core compiles for the route (dynamicClass::lambda_methodN,
# optimized at once): the runtime's own sampler also shows that delegate as
# the last managed frame (collect_dotnet_runtime_stacks).
# System.Security.Cryptography's frames count where they are not inlined.
source "$(dirname "$0")/lib.sh"

build_dotnet_app WebMix
port=$(free_port)
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$port" 60 sha256,gzip
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 199 -o "$workdir/out" | tee "$workdir/stdout"
kill "$started_pid"
script=$workdir/out/perf_script.out

# callers LIBRARY CALLER MINIMUM_SAMPLES LOW: at least LOW% of the samples
# in LIBRARY carry CALLER above it.
callers() {
	local result
	result=$(python3 "$tests_dir/native_callers.py" "$script" "$1" "$2")
	echo "samples in /$1/ with a /$2/ caller: $result"
	python3 -c "import re, sys; k, t, p = map(float, re.match(r'(\d+) of (\d+) \(([\d.]+)%\)', '$result').groups()); sys.exit(0 if t >= $3 and p >= $4 else 1)" ||
		fail "samples in /$1/: $result with a managed caller, expected at least $3 samples and $4%"
}

sha256_caller='System\.Security\.Cryptography|dynamicClass::lambda_method'
callers 'libcrypto\.so' "$sha256_caller" 50 90
callers 'libcrypto\.so|libz\.so|libSystem\.IO\.Compression\.Native' \
	"$sha256_caller|System\.IO\.Compression" 50 90
callers 'libz\.so|libSystem\.IO\.Compression\.Native' 'System\.IO\.Compression' 3 80

rooted=$(sed -n 's/^stacks: .*(\([0-9.]*\)%) reach a thread root.*/\1/p' "$workdir/out/profcpu.log")
echo "stacks that reach a thread root: $rooted%"
python3 -c "import sys; sys.exit(0 if $rooted >= 97 else 1)" || fail "only $rooted% of the stacks reach a thread root"
echo "ok"
