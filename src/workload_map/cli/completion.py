"""Shell completion: small bash/zsh/fish scripts that ask ``wlmap __complete`` for candidates.

One protocol for every shell: the script passes the words typed so far (the last one being the
word under the cursor); Python answers one candidate per line, or ``:files`` to let the shell
complete a path. Live candidates (types, names, namespaces) use a 2 s budget; any failure just
yields nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workload_map.catalog.definitions import Definitions
from workload_map.cli import config
from workload_map.cli.choices import DEFINITIONS_OUTPUTS, DESCRIBE_OUTPUTS, GET_OUTPUTS, PHASES
from workload_map.cli.completion_scripts import script
from workload_map.cli.exits import OK
from workload_map.cli.live_targets import resolve_type
from workload_map.kube.kubeconfig import kubeconfig_contexts

if TYPE_CHECKING:
    from workload_map.cli.context import Context

__all__ = ["complete", "script"]

# the scripts are printed by cli.completion_scripts (``completion SHELL`` loads no context)

_FILE_FLAGS = {"-f", "--file", "--pods", "--definition", "--crd", "--kubeconfig", "--config"}
_OUTPUT_FLAGS = {"-o", "--output"}
_NS_FLAGS = {"-n", "--namespace"}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {k: v for k, v in action.choices.items() if not k.startswith("__")}
    return {}


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(s for s in parser._option_string_actions if s.startswith("--") or len(s) == 2)


def _value_flags(parser: argparse.ArgumentParser) -> set[str]:
    return {s for s, a in parser._option_string_actions.items() if a.nargs != 0}


def complete(
    words: list[str], ctx: Context, command_tree: Callable[[], argparse.ArgumentParser]
) -> int:
    """Print completion candidates for ``words`` (the last is the word being completed);
    ``command_tree`` builds the parser of every command (the command table's, passed in so
    that this module does not import the one that loads it)."""
    try:
        for candidate in _candidates(words, ctx, command_tree()):
            ctx.stdout.write(candidate + "\n")
    except Exception:  # completion must never print an error into the user's prompt
        pass
    ctx.warnings.clear()
    return OK


def _candidates(words: list[str], ctx: Context, parser: argparse.ArgumentParser) -> list[str]:
    current = words[-1] if words else ""
    before = words[:-1]
    subs = _subparsers(parser)
    command = None
    positionals: list[str] = []
    sub_parser: argparse.ArgumentParser = parser
    skip = False
    for word in before:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _value_flags(sub_parser)
            continue
        if command is None and word in subs:
            command, sub_parser = word, subs[word]
        else:
            positionals.append(word)
    previous = before[-1] if before else ""
    if previous in _FILE_FLAGS:
        return [":files"]
    if previous in _OUTPUT_FLAGS:
        return list(_outputs(command))
    if previous in _NS_FLAGS:
        return _live(ctx, _namespaces)
    if previous == "--context":
        return _contexts(ctx)
    if previous == "--phase":
        return list(PHASES)
    if current.startswith("-"):
        return _flags(sub_parser)
    if command is None:
        return [c for c in subs if c != "jq"] + ["jq"]
    if command == "completion":
        return ["bash", "zsh", "fish"] if not positionals else []
    if command == "validate":
        return [":files"]
    if command == "definitions":
        return [d.name for d in ctx.definitions(None).all()] if not positionals else []
    if command in ("get", "describe"):
        return _workload_words(command, positionals, current, ctx)
    return []


def _workload_words(command: str, positionals: list[str], current: str, ctx: Context) -> list[str]:
    """TYPE, TYPE/NAME, ``TYPE NAME…`` (the space form) and ``TYPE,TYPE`` for get."""
    several = command == "get"  # get takes several names and comma-separated types
    if "/" in current and (not positionals or (several and "/" in positionals[0])):
        type_token = current.split("/", 1)[0]
        return [f"{type_token}/{n}" for n in _live(ctx, lambda c: _names(c, type_token))]
    if not positionals:
        if several and "," in current:
            head = current.rpartition(",")[0]
            return [f"{head},{t}" for t in _types(ctx)]
        return _types(ctx)
    first = positionals[0]
    if "/" in first or (not several and len(positionals) > 1):
        return []
    given = set(positionals[1:])
    names: set[str] = set()
    for token in first.split(",") if several else [first]:
        if token:
            names.update(_live(ctx, lambda c, t=token: _names(c, t)))
    return sorted(names - given)


def _outputs(command: str | None) -> tuple[str, ...]:
    """The formats ``-o`` accepts for ``command`` (validate takes none)."""

    by_command: dict[str | None, tuple[str, ...]] = {
        "describe": DESCRIBE_OUTPUTS,
        "get": GET_OUTPUTS,
        "definitions": DEFINITIONS_OUTPUTS,
        "validate": (),
    }
    return by_command.get(command, config.OUTPUTS)


def _types(ctx: Context) -> list[str]:
    definitions = ctx.definitions(None)
    by_kind: dict[str, list[Any]] = {}
    for d in definitions.all():
        if d.gvk is not None and d.gvk.kind:
            by_kind.setdefault(d.gvk.kind.lower(), []).append(d.gvk)
    out = []
    for kind, gvks in sorted(by_kind.items()):
        if len({(g.group, g.version) for g in gvks}) == 1:
            out.append(kind)
        else:
            out.extend(
                f"{kind}.{g.version}.{g.group}" if g.group else f"{kind}.{g.version}" for g in gvks
            )
    return out


def _live(ctx: Context, fetch: Any, budget: float = 2.0) -> list[str]:
    """Run a cluster look-up within the completion budget; nothing on failure or timeout."""
    import threading

    import msgspec

    ctx.connection = msgspec.structs.replace(ctx.connection, timeout=budget)
    result: list[str] = []

    def work() -> None:
        try:
            result.extend(fetch(ctx.cluster()))
        except Exception:
            result.clear()

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(budget)
    return [] if worker.is_alive() else list(result)


def _namespaces(cluster: Any) -> list[str]:
    res = cluster.resource_for("v1", "Namespace")
    if res is None:
        return []
    return sorted(str((o.get("metadata") or {}).get("name")) for o in cluster.iter_list(res, None))


def _names(cluster: Any, type_token: str) -> list[str]:

    target = resolve_type(type_token, cluster, Definitions.builtin())
    ns = cluster.namespace if target.resource.namespaced else None
    return sorted(
        str((o.get("metadata") or {}).get("name")) for o in cluster.iter_list(target.resource, ns)
    )


def _contexts(ctx: Context) -> list[str]:
    try:
        return sorted(kubeconfig_contexts(ctx.connection))
    except Exception:
        return []
