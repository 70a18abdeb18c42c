#!/usr/bin/env bash
# Every option a command's --help lists is in that command's reference doc,
# by its first name as --help writes it: the doc a user reads first never
# lacks what the program takes.
source "$(dirname "$0")/lib.sh"
docs=$(dirname "$0")/../docs

# The options of `profcpu COMMAND --help` ("  -pid PID", "  -F, -frequency HZ").
options_of() {
	"$PROFCPU" "$1" --help | sed -nE 's/^  (--?[A-Za-z][-A-Za-z0-9]*).*/\1/p' | sort -u
}

missing=0
while read -r command doc; do
	for option in $(options_of "$command"); do
		# Written as code in the doc: `-pid PID`, `profcpu ps -json`.
		if ! grep -qE -- "\`([^\`]* )?$option([ =\`]|\\\\\|)" "$docs/$doc"; then
			echo "docs/$doc lacks profcpu $command's $option"
			missing=$((missing + 1))
		fi
	done
done <<'COMMANDS'
collect COLLECT.md
postprocess COLLECT.md
ps COLLECT.md
agent AGENT.md
push OUTPUTS.md
flamegraph OUTPUTS.md
diff OUTPUTS.md
view OUTPUTS.md
serve CONTAINERS.md
lines SOURCE_LINES.md
watch WATCH.md
COMMANDS
((missing == 0)) || fail "$missing options of --help are in no doc"
