#!/usr/bin/env bash
# meson install puts the binary, the perfcollect link, the man pages (made
# from each command's --help) and bash completion where users look for them;
# the completion completes commands and each command's options.
source "$(dirname "$0")/lib.sh"
build=$(dirname "$(dirname "$PROFCPU")")
command -v help2man >/dev/null || skip "help2man is not installed (no man pages are built)"

meson install -C "$build" --no-rebuild --destdir "$workdir/root" >"$workdir/install.log" ||
	{ cat "$workdir/install.log"; fail "meson install failed"; }
prefix=$workdir/root$(meson introspect "$build" --buildoptions |
	python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
for file in bin/profcpu bin/perfcollect share/bash-completion/completions/profcpu \
	share/bash-completion/completions/perfcollect; do
	[[ -e "$prefix/$file" ]] || fail "meson install left out $file"
done
for page in profcpu profcpu-collect profcpu-watch profcpu-push profcpu-ps profcpu-serve perfcollect; do
	man -l "$prefix/share/man/man1/$page.1" >"$workdir/$page.txt" 2>/dev/null ||
		fail "man cannot show $page.1"
done
grep -q -- '-processfilter NAME' "$workdir/profcpu-collect.txt" || fail "profcpu-collect(1) lacks -processfilter"
grep -q -- '--max-captures N' "$workdir/profcpu-watch.txt" || fail "profcpu-watch(1) lacks --max-captures"
grep -q 'Retry-After' "$workdir/profcpu-serve.txt" || fail "profcpu-serve(1) lacks the 409 rule"
grep -q 'profcpu-serve' "$workdir/profcpu.txt" || fail "profcpu(1) does not point to profcpu-serve(1)"
grep -q 'view NAME.trace.zip' "$workdir/perfcollect.txt" || fail "perfcollect(1) lacks view"
grep -q -- '--push-interval SECS' "$workdir/profcpu-collect.txt" || fail "profcpu-collect(1) lacks --push-interval"
grep -q -- '--basic-auth-password-file' "$workdir/profcpu-push.txt" || fail "profcpu-push(1) lacks its options"

# complete WORDS...: what the installed completion offers for the last word.
complete_words() {
	PATH="$prefix/bin:$PATH" bash -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_profcpu; printf "%s\n" "${COMPREPLY[@]}"' sh \
		"$prefix/share/bash-completion/completions/profcpu" "$@"
}
[[ $(complete_words profcpu se) == serve ]] || fail "profcpu se does not complete to serve"
[[ $(complete_words profcpu pu) == push ]] || fail "profcpu pu does not complete to push"
# Two options begin so: the whole list read before grep (-q would cut it short).
[[ $'\n'$(complete_words profcpu push --basic-auth-p)$'\n' == *$'\n--basic-auth-password-file\n'* ]] ||
	fail "no --basic-auth-password-file for push"
[[ $(complete_words perfcollect se) == setenv ]] || fail "perfcollect se does not complete to setenv"
[[ $(complete_words profcpu wa) == watch ]] || fail "profcpu wa does not complete to watch"
[[ $'\n'$(complete_words profcpu watch --max-c)$'\n' == *$'\n--max-captures\n'* ]] ||
	fail "no --max-captures for watch"
complete_words profcpu collect -proc | grep -qx -- -processfilter || fail "no -processfilter for collect"
complete_words profcpu serve -tok | grep -qx -- -token-file || fail "no -token-file for serve"
complete_words profcpu agent --otlp-bea | grep -qx -- --otlp-bearer-token-file ||
	fail "no --otlp-bearer-token-file for agent (options with two dashes)"
complete_words perfcollect collect sample -collect | grep -qx -- -collectsec || fail "no -collectsec for perfcollect"
complete_words profcpu collect -pid "$$" | grep -qx "$$" || fail "-pid does not complete pids"
true
