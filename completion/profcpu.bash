# bash completion for profcpu and perfcollect. Options are read from each
# command's --help, so they never fall behind the program.

# The options a command's --help lists ("  -pid PID", "  -F, -frequency HZ").
_profcpu_options() {
	"$1" "${@:2}" --help 2>/dev/null |
		sed -nE 's/^  (--?[A-Za-z][-A-Za-z]*)(, (--?[-A-Za-z]+))?.*/\1 \3/p'
}

_profcpu() {
	local current=${COMP_WORDS[COMP_CWORD]} previous=${COMP_WORDS[COMP_CWORD - 1]}
	local program=${COMP_WORDS[0]} command=${COMP_WORDS[1]:-}
	# The commands (perfcollect's actions) its --help lists, as the options.
	local commands
	commands=$("$program" --help 2>/dev/null | sed -nE 's/^  ([a-z]+)( .*)?$/\1/p')

	if ((COMP_CWORD == 1)); then
		mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$current")
		return
	fi
	case ${previous,,} in
	-pid | --pid)
		mapfile -t COMPREPLY < <(compgen -W "$(ls /proc | grep -E '^[0-9]+$')" -- "$current")
		return
		;;
	-processfilter | --processfilter)
		mapfile -t COMPREPLY < <(compgen -W "$(cat /proc/[0-9]*/comm 2>/dev/null | sort -u)" -- "$current")
		return
		;;
	-watch | --watch) # serve's: a pid or a process name
		mapfile -t COMPREPLY < <(compgen -W "$(ls /proc | grep -E '^[0-9]+$') $(cat /proc/[0-9]*/comm 2>/dev/null | sort -u)" -- "$current")
		return
		;;
	-o | --o | -output | --output | -dir | --dir | -d | --symbols | --spool | --container-state)
		mapfile -t COMPREPLY < <(compgen -d -- "$current")
		return
		;;
	-i | --i | -token-file | --token-file | --bearer-token-file | --basic-auth-password-file | \
		--otlp-bearer-token-file | --otlp-basic-auth-password-file)
		mapfile -t COMPREPLY < <(compgen -f -- "$current")
		return
		;;
	esac
	if [[ $current == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_profcpu_options "$program" "$command")" -- "$current")
	elif [[ $command == view || $command == diff || $command == flamegraph ]]; then
		mapfile -t COMPREPLY < <(compgen -f -- "$current")
	elif [[ $command == push ]]; then
		mapfile -t COMPREPLY < <(compgen -d -- "$current")
	fi
}
complete -F _profcpu profcpu perfcollect
