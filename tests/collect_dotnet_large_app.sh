#!/usr/bin/env bash
# A large app no one here wrote, framework-heavy and compiling code at run
# time: the C# compiler (Roslyn's csc.dll from the .NET 10 SDK) compiling a
# generated 1,500-class file with LINQ lambdas, sampled by collect from its
# first second of CPU to its exit, twice: through its diagnostics IPC
# (--names auto: the perf map and jitdump, and the runtime's memory for the
# stubs and code they leave unnamed) and with DOTNET_EnableDiagnostics=0
# (the runtime's memory alone). Each run has at most 1% of its samples with
# a [JIT] frame (before the runtime's stubs were named: 7.8% through the
# IPC, 9% from memory: FixupPrecodes, virtual call stubs, dynamic helpers),
# and the shares of Roslyn's phases agree between the two.
source "$(dirname "$0")/lib.sh"

command -v dotnet >/dev/null || skip "dotnet is not installed"
dotnet_root=$(dirname "$(readlink -f "$(command -v dotnet)")")
csc=$(compgen -G "$dotnet_root/sdk/10.*/Roslyn/bincore/csc.dll" | sort -V | tail -1 || true)
framework=$(compgen -G "$dotnet_root/shared/Microsoft.NETCore.App/10.*" | sort -V | tail -1 || true)
[[ -n $csc && -n $framework ]] || skip "no .NET 10 SDK's csc.dll and runtime"

python3 - "$workdir/big.cs" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    out.write("using System; using System.Linq; using System.Collections.Generic;\nnamespace Big {\n")
    for i in range(1500):
        out.write(f"public class C{i} {{ public int F(int x) {{ var l = new List<int>(); "
                  f"for (int k = 0; k < x; k++) l.Add(k * {i}); "
                  f"return l.Where(v => v % 3 == 0).Select(v => v + {i}).Sum(); }}\n"
                  f" public string G(string s) => s + \"{i}\" + F({i}).ToString(); }}\n")
    out.write("}\n")
PY
references=()
for assembly in System.Runtime System.Linq System.Collections System.Console System.Private.CoreLib; do
	references+=("-r:$framework/$assembly.dll")
done

# collect_csc NAME [VARIABLE=VALUE...]: csc compiling big.cs in that
# environment, sampled by collect from its first second of CPU (the runtime
# is up) to its exit, into $workdir/NAME.
collect_csc() {
	local name=$1 pid
	shift
	start env "$@" dotnet "$csc" -nologo -target:library "-out:$workdir/$name.dll" "${references[@]}" "$workdir/big.cs"
	pid=$started_pid
	until (($(cpu_ticks "$pid") >= $(getconf CLK_TCK))); do
		kill -0 "$pid" 2>/dev/null || fail "csc ended before it was sampled"
		sleep 0.1
	done
	"$PROFCPU" collect -pid "$pid" -o "$workdir/$name" >/dev/null 2>"$workdir/$name.stderr" ||
		{ cat "$workdir/$name.stderr"; fail "collect failed on csc ($name)"; }
	wait "$pid" || fail "csc failed to compile the generated file ($name)"
	grep -o '\[stub\] [A-Za-z_]*' "$workdir/$name/folded_stacks.out" | sort | uniq -c | sort -rn
	grep "names from the runtime's memory" "$workdir/$name/profcpu.log" || true
	assert_share "$workdir/$name/folded_stacks.out" '\[JIT\]' 0 1
	grep -q "names from the runtime's memory" "$workdir/$name/profcpu.log" ||
		fail "collect named nothing from csc's memory ($name)"
}

collect_csc ipc
grep -q "from the runtime's memory for what they leave unnamed" "$workdir/ipc/profcpu.log" ||
	fail "collect did not name what csc's perf map and jitdump left unnamed from its memory"
collect_csc memory DOTNET_EnableDiagnostics=0
grep -q "naming the JIT frames of .NET pid [0-9]* from its runtime's memory" "$workdir/memory.stderr" ||
	fail "collect did not say it names csc's JIT frames from its runtime's memory"

# Roslyn's phases, by the frames of their own methods (a stub's name holds
# the method it leads to: "[stub] FixupPrecode for ...", not counted), as
# shares of Roslyn's own samples: the two runs' tiered compilation and GC
# threads take shares that differ with the machine's load (Binder 51.4%
# against 40.2% of all samples once, beside another test).
for name in memory ipc; do
	grep -F ';Microsoft.CodeAnalysis' "$workdir/$name/folded_stacks.out" >"$workdir/$name.roslyn.folded" ||
		fail "no sample of Roslyn's methods ($name)"
done
assert_shares_agree memory "$workdir/memory.roslyn.folded" ipc "$workdir/ipc.roslyn.folded" 10 \
	';Microsoft\.CodeAnalysis\.CSharp!Microsoft\.CodeAnalysis\.CSharp\.MethodCompiler' \
	';Microsoft\.CodeAnalysis\.CSharp!Microsoft\.CodeAnalysis\.CSharp\.Binder::' \
	';Microsoft\.CodeAnalysis!Microsoft\.CodeAnalysis\.CodeGen\.' \
	';Microsoft\.CodeAnalysis!Microsoft\.Cci\.'
