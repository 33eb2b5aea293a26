"""The one registry of jq builtins: ``(name, arity)`` to what implements it.

A builtin is registered in exactly one way, whatever it is:

* a function in a group module (``GROUPS``) marked ``@builtin(name, arity, kind=…, effect=…)``
  (the mark is ``marks.py``'s, so that no group module imports this one);
  ``kind`` says how the compiler calls it: ``"value"`` ``fn(input, *argument values)`` returning
  one value, ``"stream"`` the same returning an iterable, ``"special"``
  ``fn(compiler, argument codes, call node)`` returning a ``Code`` (closures, the interpreter);
* or a definition in ``builtin.jq`` (kind ``"jq"``), compiled by the compiler on its first call.

A value or stream native whose work can be long (serialising, sorting) declares a keyword-only
``meter`` parameter: a call in a program then passes the evaluation's context, on which it
counts its work as it goes (``workload_map.jq.meter``); a direct Python call passes none.

``effect`` names the workload-map safety rule a call breaks (``environment``, ``input``,
``halt``, ``logging``, ``unbounded-loop``): ``jq.safety`` refuses by this mark, not by its own list.

Nothing is registered at import. ``index.py``, generated from the marks (``registry.write_index()``,
checked by tests/jq/test_registry.py), says which group module
holds each builtin, so that a group module (dates, regexes, math…) is imported the first time a
program calls one of its builtins; the registry itself is built on the first lookup. No library
does this: Python's entry points are per distribution and cost more to read than they save.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Iterator
from typing import Any

from workload_map.jq.builtins.marks import EFFECTS, KINDS, builtin, marked

__all__ = [
    "EFFECTS",
    "GROUPS",
    "KINDS",
    "Builtin",
    "built",
    "builtin",
    "entries",
    "implementation",
    "index_text",
    "jq_source",
    "lookup",
    "names",
    "native",
    "write_index",
]

#: the group modules, by the short name the index uses; "jq" is builtin.jq
GROUPS = {
    "collections": "workload_map.jq.builtins.collections",
    "control": "workload_map.jq.builtins.control",
    "conversions": "workload_map.jq.builtins.conversions",
    "formats": "workload_map.jq.builtins.formats",
    "jsontext": "workload_map.jq.builtins.jsontext",
    "math": "workload_map.jq.builtins.math",
    "operators": "workload_map.jq.builtins.operators",
    "paths": "workload_map.jq.builtins.paths",
    "process": "workload_map.jq.builtins.process",
    "recursion": "workload_map.jq.builtins.recursion",
    "regex": "workload_map.jq.builtins.regex",
    "strings": "workload_map.jq.builtins.strings",
    "time": "workload_map.jq.builtins.time",
    "specials": "workload_map.jq.specials",
}


class Builtin:
    """One registry entry: where the builtin lives (``group``), how it is called, its effect."""

    __slots__ = ("arity", "effect", "group", "kind", "listed", "name", "needs_ctx")

    def __init__(
        self,
        name: str,
        arity: int,
        group: str,
        kind: str,
        effect: str,
        listed: bool = True,
        needs_ctx: bool = True,
    ) -> None:
        self.name, self.arity, self.group, self.kind, self.effect = name, arity, group, kind, effect
        #: whether ``builtins`` names it
        self.listed = listed and not name.startswith(("_", "@", "$"))
        #: whether a call can loop, recurse or read the run's context
        self.needs_ctx = needs_ctx

    @property
    def key(self) -> tuple[str, int]:
        return (self.name, self.arity)

    def __repr__(self) -> str:
        return f"Builtin({self.name}/{self.arity}, {self.kind}, {self.group})"


#: the entries made so far: those looked up, or all of them once ``_COMPLETE``
_REGISTRY: dict[tuple[str, int], Builtin] = {}
_COMPLETE = False
_IMPLS: dict[str, dict[tuple[str, int], Callable[..., Any]]] = {}
_JQ_SOURCES: dict[tuple[str, int], str] = {}
_LOCK = _thread.RLock()  # threading.RLock, without importing threading
#: a definition's head in builtin.jq: every one starts a line (its body lines are indented)
_DEF_HEAD = r"def\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(([^)]*)\))?\s*:"


def built() -> bool:
    """Whether the whole registry has been built (by a listing, or a lookup of a name the index
    does not hold); never at import, and not by looking up indexed builtins."""
    return _COMPLETE


def _build() -> dict[tuple[str, int], Builtin]:
    global _COMPLETE
    if _COMPLETE:
        return _REGISTRY
    with _LOCK:
        if not _COMPLETE:
            from workload_map.jq.builtins.index import INDEX

            found = {
                key: Builtin(key[0], key[1], group, kind, effect, listed, needs_ctx)
                for key, (group, kind, effect, listed, needs_ctx) in INDEX.items()
            }
            for key in _split_builtin_jq():
                if key in found:
                    raise RuntimeError(f"builtin {key[0]}/{key[1]} is registered twice")
                found[key] = Builtin(key[0], key[1], "jq", "jq", "")
            found.update(_REGISTRY)  # the entries already handed out stay the ones in use
            _REGISTRY.update(found)
            _COMPLETE = True
    return _REGISTRY


def _indexed(key: tuple[str, int]) -> Builtin | None:
    """The entry of ``key`` from the generated index alone, made on its first lookup: a program
    calling native builtins needs neither the other ~260 entries nor builtin.jq's text (together
    about 3M instructions of a live ``get``, docs/cli.md). None when the index does not hold it
    (builtin.jq's definitions, unknown names): the whole registry answers those."""
    from workload_map.jq.builtins.index import INDEX

    row = INDEX.get(key)
    if row is None:
        return None
    with _LOCK:
        entry = _REGISTRY.get(key)
        if entry is None:
            entry = _REGISTRY[key] = Builtin(key[0], key[1], *row)
    return entry


def _split_builtin_jq() -> dict[tuple[str, int], str]:
    """The text of each builtin.jq definition by (name, arity): a program parses only the
    definitions it calls (parsing them all was a good part of a short command's run time)."""
    import os.path
    import re  # imported here, with the file, as no import of the package needs them

    path = os.path.join(os.path.dirname(__file__), "builtin.jq")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    else:  # a zipped install: only then is importlib.resources worth its import
        from importlib import resources

        text = resources.files("workload_map.jq.builtins").joinpath("builtin.jq").read_text()
    head_re = re.compile(_DEF_HEAD)
    sources: dict[tuple[str, int], str] = {}
    chunk: list[str] = []
    for line in [*text.splitlines(), "def"]:
        if line.startswith("def") and chunk:
            head = head_re.match(chunk[0])
            if head is None:
                raise RuntimeError(f"builtin.jq: not a definition: {chunk[0]!r}")
            params = head.group(2)
            arity = len(params.split(";")) if params is not None else 0
            sources[(head.group(1), arity)] = "\n".join(chunk)
            chunk = []
        if line.startswith("def") or (chunk and line.startswith((" ", "\t"))):
            chunk.append(line)
    _JQ_SOURCES.update(sources)
    return sources


def lookup(name: str, arity: int) -> Builtin | None:
    """The builtin ``name/arity``, or None (the one lookup: compiler, listing, safety rules)."""
    key = (name, arity)
    found = _REGISTRY.get(key)
    if found is not None or _COMPLETE:
        return found
    return _indexed(key) or _build().get(key)


def entries() -> Iterator[Builtin]:
    """Every registered builtin (builds the registry, imports no group module)."""
    return iter(list(_build().values()))


def names() -> list[str]:
    """Every builtin a program can call, as ``name/arity`` (what ``builtins`` yields)."""
    return sorted(f"{b.name}/{b.arity}" for b in entries() if b.listed)


def jq_source(key: tuple[str, int]) -> str | None:
    """The builtin.jq text of the definition ``key``, or None when it is not jq-defined."""
    _build()
    return _JQ_SOURCES.get(key)


def implementation(entry: Builtin) -> Callable[..., Any]:
    """The function of a value, stream or special builtin (imports its group on first use)."""
    if entry.kind == "jq":
        raise TypeError(f"{entry.name}/{entry.arity} is defined in builtin.jq: it is compiled")
    impls = _IMPLS.get(entry.group)
    if impls is None:
        with _LOCK:
            impls = _IMPLS.get(entry.group)
            if impls is None:
                impls = _load_group(entry.group)
    return impls[entry.key]


def native(name: str, arity: int) -> Callable[..., Any]:
    """The function of the value or stream builtin ``name/arity`` (KeyError when there is none)."""
    entry = lookup(name, arity)
    if entry is None or entry.kind not in ("value", "stream"):
        raise KeyError((name, arity))
    return implementation(entry)


def _load_group(group: str) -> dict[tuple[str, int], Callable[..., Any]]:
    import importlib

    from workload_map.jq.builtins.index import INDEX

    module = importlib.import_module(GROUPS[group])
    marks = marked(module)
    # from the index, not the registry: loading a group builds no entries of other builtins
    expected = {key for key, row in INDEX.items() if row[0] == group}
    if set(marks) != expected:
        raise RuntimeError(
            f"jq builtin index is stale for {group} (run {__name__}.write_index()): "
            f"{sorted(set(marks) ^ expected)}"
        )
    impls = {key: mark[0] for key, mark in marks.items()}
    _IMPLS[group] = impls
    return impls


def index_text() -> str:
    """The text of ``index.py``, from the marks of every group module (imports them all)."""
    import importlib

    rows: list[str] = []
    seen: dict[tuple[str, int], str] = {}
    for group in sorted(GROUPS):
        module = importlib.import_module(GROUPS[group])
        for (name, arity), (_fn, kind, effect, listed, ctx) in sorted(marked(module).items()):
            if (name, arity) in seen:
                raise RuntimeError(f"builtin {name}/{arity}: in {seen[name, arity]} and {group}")
            seen[name, arity] = group
            row = f"({name!r}, {arity}): ({group!r}, {kind!r}, {effect!r}, {listed}, {ctx}),"
            rows.append("    " + row.replace("'", '"'))
    return (
        '"""Which group module holds each jq builtin: generated from the ``@builtin`` marks by\n'
        '``workload_map.jq.builtins.registry.write_index()``; do not edit (a test checks it)."""\n\n'
        "INDEX: dict[tuple[str, int], tuple[str, str, str, bool, bool]] = {\n"
        + "\n".join(rows)
        + "\n}\n"
    )


def write_index() -> None:
    """Regenerate ``index.py`` after adding, renaming or moving a builtin."""
    import pathlib

    pathlib.Path(__file__).with_name("index.py").write_text(index_text(), encoding="utf-8")
