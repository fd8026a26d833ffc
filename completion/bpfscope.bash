# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Bash completion for the bpfscope tools. Each tool lists its own options
# (TOOL --complete, read from its option tables), so what is offered is
# what the installed binary takes. make install puts this file in
# bash-completion's directory under each tool's name.

# _bpfscope_values ARG CUR: the values an option's argument may take, by the
# argument's name in the tool's help.
_bpfscope_values()
{
	local cur=$2 p
	case $1 in
	FILE)
		compopt -o filenames 2> /dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	PATH)
		# A cgroup v2 path, relative to the cgroup2 mount or absolute.
		compopt -o filenames 2> /dev/null
		if [[ $cur == /* ]]; then
			COMPREPLY=($(compgen -d -- "$cur"))
		else
			COMPREPLY=($(cd /sys/fs/cgroup 2> /dev/null && compgen -d -- "$cur"))
		fi
		;;
	PID | TID | PIDS)
		COMPREPLY=($(compgen -W "$(cd /proc && printf '%s ' [0-9]*)" -- "$cur"))
		;;
	CPU)
		COMPREPLY=($(compgen -W "$(seq 0 $(($(getconf _NPROCESSORS_CONF) - 1)))" -- "$cur"))
		;;
	DISK)
		COMPREPLY=($(compgen -W "$(ls /sys/block 2> /dev/null)" -- "$cur"))
		;;
	COMM)
		COMPREPLY=($(compgen -W "$(cat /proc/[0-9]*/comm 2> /dev/null | sort -u)" -- "$cur"))
		;;
	*)
		COMPREPLY=()
		;;
	esac
}

_bpfscope()
{
	local tool=$1 cur=${COMP_WORDS[COMP_CWORD]} prev opt arg line opts
	opts=$("$tool" --complete 2> /dev/null) || return 0
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	# bash splits "--svg=FILE" at the "=": the option is two words back.
	if [[ $cur == = ]]; then
		opt=$prev
		cur=
	elif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $prev == -* ]]; then
		# "-p PID", "--svg FILE": the argument is the next word. Not for
		# "--debuginfod[=SECONDS]": an optional argument must follow "=".
		while read -r line; do
			if [[ $line == "$prev "* ]]; then
				arg=${line#* }
			elif [[ $prev == --* && $line == "$prev="* ]]; then
				arg=${line#*=}
			fi
		done <<< "$opts"
		if [[ -n $arg ]]; then
			_bpfscope_values "$arg" "$cur"
			return 0
		fi
	fi
	if [[ -n $opt ]]; then
		while read -r line; do
			[[ $line == "$opt="* || $line == "$opt[="* ]] && arg=${line#*=} && arg=${arg%]}
		done <<< "$opts"
		_bpfscope_values "$arg" "$cur"
		return 0
	fi
	if [[ $cur == -* ]]; then
		# Long options that take an argument end in "=", with no space after.
		COMPREPLY=($(compgen -W "$(sed -e 's/\[=.*//' -e 's/=.*/=/' -e 's/ .*//' <<< "$opts")" -- "$cur"))
		[[ ${COMPREPLY[*]} == *= ]] && compopt -o nospace 2> /dev/null
	fi
	return 0
}

complete -F _bpfscope profile offcputime offwaketime runqlat biolatency cachestat funclatency readdirlat
