#!/usr/bin/env bash
# _logtails.sh - sourced by tests that start servers or agents: log_tails DIR
# prints the last 40 lines of every *.log under DIR on stderr. A failing test
# calls it before it deletes its temporary directory, so the cause of the
# failure (often only in a server's or an agent's log) is in its output.
log_tails() {
	local f
	while IFS= read -r f; do
		echo "---- last 40 lines of ${f#"$1"/} ----" >&2
		tail -40 "$f" >&2
	done < <(find "$1" -name '*.log' -type f 2>/dev/null | sort)
}
