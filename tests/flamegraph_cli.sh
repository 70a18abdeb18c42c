#!/usr/bin/env bash
# End to end: the real `profcpu flamegraph` and `profcpu diff` commands on
# files, the SVG checked with xmllint and by its text.
# usage: flamegraph_cli.sh PROFCPU DATA_DIR. Exit 0 passed, 1 failed, 77 skipped.
set -uo pipefail
profcpu=$1
data=$2
command -v xmllint >/dev/null || { echo "SKIP: xmllint missing (libxml2-utils)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then
		echo "ok   $what"
	else
		echo "FAIL $what"
		failures=$((failures + 1))
	fi
}
contains() { grep -qF -- "$2" "$1"; }

# A .NET capture: valid XML, titled, with hover titles and percentages.
"$profcpu" flamegraph --title 'Checkout <API>' --subtitle 'pid 42' --notes 'made by a test' \
	-i "$data/dotnet.folded" -o "$work/dotnet.svg" 2>"$work/err"
check "flamegraph writes an SVG" test -s "$work/dotnet.svg"
check "SVG is well-formed XML" xmllint --noout "$work/dotnet.svg"
check "title is escaped" contains "$work/dotnet.svg" '>Checkout &lt;API&gt;</text>'
check "subtitle" contains "$work/dotnet.svg" '>pid 42</text>'
check "notes" contains "$work/dotnet.svg" '<desc>made by a test</desc>'
check "root frame has every sample" contains "$work/dotnet.svg" '<title>all (1,050 samples, 100%)</title>'
check "hover title of a managed frame" contains "$work/dotnet.svg" \
	'<title>int32 [System.Private.CoreLib] System.SpanHelpers::IndexOf(char&amp;,char,int32)[OptimizedTier1] (412 samples, 39.24%)</title>'
check "kernel annotation stripped" contains "$work/dotnet.svg" '<title>entry_SYSCALL_64 ('
check "no warnings on good input" test ! -s "$work/err"

# Standard input and output, options, every palette.
"$profcpu" flamegraph --inverted --reverse --width 800 --height 20 --minwidth 1% --countname ms \
	--colors hot --hash <"$data/dotnet.folded" >"$work/icicle.svg"
check "icicle with options is well-formed" xmllint --noout "$work/icicle.svg"
check "icicle title and count name" contains "$work/icicle.svg" '>Icicle Graph</text>'
check "count name used" contains "$work/icicle.svg" ' ms, '
check "width honoured" contains "$work/icicle.svg" 'width="800" height='
"$profcpu" flamegraph --flamechart "$data/dotnet.folded" >"$work/chart.svg"
check "flame chart title" contains "$work/chart.svg" '>Flame Chart</text>'

# Bad lines are reported; empty input is an error.
{ cat "$data/dotnet.folded"; echo 'not folded'; echo 'a;b x'; } >"$work/bad.folded"
"$profcpu" flamegraph "$work/bad.folded" >"$work/bad.svg" 2>"$work/err"
check "bad lines skipped, graph still drawn" xmllint --noout "$work/bad.svg"
check "bad lines reported" contains "$work/err" 'skipped 2 bad lines'
: >"$work/empty.folded"
"$profcpu" flamegraph "$work/empty.folded" >"$work/empty.svg" 2>"$work/err"
check "empty input fails" test $? -eq 1
check "empty input explained" contains "$work/err" 'no stacks in'
"$profcpu" flamegraph --colors nope "$data/dotnet.folded" >/dev/null 2>"$work/err"
check "unknown palette rejected" contains "$work/err" "unknown palette 'nope'"
"$profcpu" flamegraph --minwidth 5pt "$data/dotnet.folded" >/dev/null 2>"$work/err"
check "bad minwidth rejected" contains "$work/err" 'invalid value for -minwidth'
check "usage has examples" bash -c "'$profcpu' flamegraph --help | grep -q '^EXAMPLES:'"

# diff joins two captures; the result draws a differential graph.
printf 'a;b 10\na;c 5\n' >"$work/before.folded"
printf 'a;c 8\na;d 2\na;b 4\n' >"$work/after.folded"
"$profcpu" diff "$work/before.folded" "$work/after.folded" >"$work/diff.folded"
check "diff joins stacks" diff -u <(printf 'a;b 10 4\na;c 5 8\na;d 0 2\n') "$work/diff.folded"
"$profcpu" diff --normalize "$work/before.folded" "$work/after.folded" -o "$work/normal.folded"
check "diff --normalize scales BEFORE" diff -u <(printf 'a;b 9.333333 4\na;c 4.666667 8\na;d 0 2\n') \
	"$work/normal.folded"
"$profcpu" flamegraph <"$work/diff.folded" >"$work/diff.svg"
check "differential SVG well-formed" xmllint --noout "$work/diff.svg"
check "differential title" contains "$work/diff.svg" '>Differential Flame Graph</text>'
check "b shrank" contains "$work/diff.svg" '<title>b (4 samples, 28.57%; -6, -42.86%)</title>'
"$profcpu" diff "$work/before.folded" >/dev/null 2>"$work/err"
check "diff needs two files" contains "$work/err" 'give two folded files'

if ((failures)); then
	echo "$failures check(s) failed"
	exit 1
fi
echo "all checks passed"
