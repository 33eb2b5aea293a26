"""``wlmap completion SHELL``: the bash, zsh and fish scripts that ask ``wlmap __complete``
(:mod:`workload_map.cli.completion`) for candidates.

Its own module, run without a context (no settings, no connection, no msgspec): a shell's
start runs it (``source <(wlmap completion bash)`` in a profile), so it costs what ``wlmap
--version`` does.
"""

from __future__ import annotations

import argparse
from typing import IO

from workload_map.cli.exits import OK, UsageError

__all__ = ["run", "script"]

_BASH = r"""# bash completion for wlmap (source <(wlmap completion bash))
_wlmap_complete() {
    local cur="${COMP_WORDS[COMP_CWORD]}"
    local out
    out="$("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)"
    if [[ "$out" == ":files" ]]; then
        compopt -o default 2>/dev/null
        COMPREPLY=()
        return 0
    fi
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$out" -- "$cur"))
}
complete -F _wlmap_complete wlmap kubectl-wlmap
"""

_ZSH = r"""#compdef wlmap kubectl-wlmap
# zsh completion for wlmap (source <(wlmap completion zsh), after compinit)
_wlmap() {
    local out
    out="$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null)"
    if [[ "$out" == ":files" ]]; then
        _files
        return
    fi
    local -a candidates
    candidates=("${(@f)out}")
    compadd -- "${candidates[@]}"
}
if (( $+functions[compdef] )); then
    compdef _wlmap wlmap kubectl-wlmap
fi
"""

_FISH = r"""# fish completion for wlmap (wlmap completion fish | source)
function __wlmap_complete
    set -l tokens (commandline -opc) (commandline -ct)
    set -l out ($tokens[1] __complete $tokens[2..-1] 2>/dev/null)
    if test "$out" = ":files"
        __fish_complete_path (commandline -ct)
        return
    end
    printf '%s\n' $out
end
complete -c wlmap -f -a '(__wlmap_complete)'
complete -c kubectl-wlmap -f -a '(__wlmap_complete)'
"""


def run(args: argparse.Namespace, stdout: IO[str]) -> int:
    """``wlmap completion SHELL``: print the script (a command without a context: the table's
    ``context=False``)."""
    stdout.write(script(args.shell))
    return OK


def script(shell: str) -> str:
    """The completion script for ``shell`` (bash, zsh or fish)."""
    scripts = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}
    if shell not in scripts:
        raise UsageError(f"unsupported shell {shell!r} (bash, zsh or fish)")
    return scripts[shell]
