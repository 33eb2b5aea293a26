"""What a jq expression reads of its input: the paths whose values decide its results.

Two workloads of a fleet often hold equal parts (the trimmed watch caches keep equal subtrees
as one object: ``kube/trim.py``), and a definition's expressions read a few of them: a Job's
replicas read ``.spec.parallelism`` and ``.spec.completions``, its statuses ``.spec.suspend``
and ``.status``. :func:`input_paths` finds those paths from the expression's syntax, so an
evaluation can be reused for any input that holds the same values there
(:mod:`workload_map.engine.equal_inputs`).

The analysis is conservative: it follows the input through constant field lookups
(``.spec.suspend``), pipes, alternatives, comparisons, variables bound with ``as $x`` and the
builtins whose arguments it knows (``select``, ``any``, ``map``, ``not``, ``length``…). Any
other use of a value (iterating it, passing it to another function) reads all of it, and
anything it does not know (a function definition, ``reduce``, ``..``, an unbound variable such
as a definition's ``$runtime``, a use of the whole input) answers None: unknown, never reused.

A value is tracked as the subtree at a path of the input (an alias: ``.spec`` is the input's
``spec``) or as derived from subtrees (``.spec.replicas * 2``): a lookup on an alias is an alias
one level down; a lookup on a derived value reads it. Reading a path reads its whole subtree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map import jq
from workload_map.jq import ast as jq_ast

__all__ = ["Path", "input_paths", "minimal"]

#: a path of object keys from the input (``()``: the input itself)
Path = tuple[str, ...]

_EMPTY: frozenset[Path] = frozenset()
_ROOT: Path = ()


class _Unknown(Exception):
    """The expression does something the analysis does not follow."""


class _Taint:
    """Where a value may come from: subtrees it is (aliases) or is computed from (derived)."""

    __slots__ = ("aliases", "derived")

    def __init__(self, aliases: frozenset[Path] = _EMPTY, derived: frozenset[Path] = _EMPTY):
        self.aliases = aliases
        self.derived = derived

    def paths(self) -> frozenset[Path]:
        return self.aliases | self.derived

    def __or__(self, other: _Taint) -> _Taint:
        return _Taint(self.aliases | other.aliases, self.derived | other.derived)


_CONSTANT = _Taint()
_INPUT = _Taint(frozenset({_ROOT}))

#: builtins that read their input and their arguments (evaluated on the input) whole; the
#: result is computed from them
_READERS: frozenset[tuple[str, int]] = frozenset(
    {
        *((n, 0) for n in ("not", "length", "tostring", "tonumber", "type", "ascii_downcase")),
        *((n, 0) for n in ("ascii_upcase", "keys", "add", "min", "max", "floor", "ceil")),
        *((n, 0) for n in ("round", "fabs", "sqrt", "tojson", "fromjson", "sort", "unique")),
        *((n, 0) for n in ("reverse", "any", "all", "utf8bytelength", "abs", "error")),
        *((n, 1) for n in ("test", "startswith", "endswith", "ltrimstr", "rtrimstr", "split")),
        *((n, 1) for n in ("join", "contains", "inside", "has", "index", "rindex", "error")),
        *((n, 1) for n in ("match", "capture", "indices")),
        ("test", 2),
        ("match", 2),
        ("capture", 2),
        ("split", 2),
    }
)
#: builtins whose one argument runs on each element of their input (an array), which they read
_PER_ELEMENT = frozenset({"map", "max_by", "min_by", "sort_by", "group_by", "unique_by"})
#: builtins whose output is their one argument's (run on the input)
_PASS = frozenset({"first", "last"})


class _Flow:
    """One expression's analysis: every path read so far."""

    def __init__(self) -> None:
        self.reads: set[Path] = set()
        #: every alias made: a lookup requires the value it looks into to be an object or
        #: null (anything else fails), so that is part of what the results depend on
        self.walked: set[Path] = set()

    def read(self, taint: _Taint) -> None:
        """The value is inspected: every subtree it is or comes from is read."""
        self.reads |= taint.aliases
        self.reads |= taint.derived
        if _ROOT in taint.aliases or _ROOT in taint.derived:
            raise _Unknown  # the whole input

    def derived(self, *taints: _Taint) -> _Taint:
        """A value computed from these (they are read)."""
        out: set[Path] = set()
        for t in taints:
            self.read(t)
            out |= t.paths()
        return _Taint(derived=frozenset(out))

    def run(self, node: Any, inp: _Taint, env: Mapping[str, _Taint]) -> _Taint:
        kind = type(node)
        if kind is jq_ast.Identity:
            return inp
        if kind is jq_ast.Literal:
            return _CONSTANT
        if kind is jq_ast.Index:
            target = self.run(node.target, inp, env)
            key = node.key
            if type(key) is jq_ast.Literal and type(key.value) is str:
                # a constant lookup: an alias one level down (a derived value is read)
                self.read(_Taint(derived=target.derived))
                aliases = frozenset((*a, key.value) for a in target.aliases)
                self.walked |= aliases
                return _Taint(aliases, target.derived)
            return self.derived(target, self.run(key, inp, env))
        if kind is jq_ast.Optional:
            return self.run(node.target, inp, env)
        if kind is jq_ast.Try and node.catch is None:
            return self.run(node.body, inp, env)
        if kind is jq_ast.Pipe:
            return self.run(node.right, self.run(node.left, inp, env), env)
        if kind is jq_ast.Comma:
            return self.run(node.left, inp, env) | self.run(node.right, inp, env)
        if kind is jq_ast.Alt:
            left = self.run(node.left, inp, env)
            self.read(left)  # its truth decides
            return left | self.run(node.right, inp, env)
        if kind is jq_ast.Binary:
            return self.derived(self.run(node.left, inp, env), self.run(node.right, inp, env))
        if kind is jq_ast.Unary:
            return self.derived(self.run(node.operand, inp, env))
        if kind is jq_ast.Iterate:
            return self.derived(self.run(node.target, inp, env))
        if kind is jq_ast.Array:
            body = self.run(node.body, inp, env) if node.body is not None else _CONSTANT
            return _Taint(derived=body.paths())
        if kind is jq_ast.Object:
            return self._object(node, inp, env)
        if kind is jq_ast.Str:
            parts = [self.run(p, inp, env) for p in node.parts if not isinstance(p, str)]
            if node.fmt is not None:
                raise _Unknown
            return self.derived(*parts)
        if kind is jq_ast.If:
            out = self._if(node, inp, env)
            return out
        if kind is jq_ast.Var:
            found = env.get(node.name)
            if found is None:
                raise _Unknown  # a definition's reference ($runtime), $ENV, $__loc__…
            return found
        if kind is jq_ast.Bind:
            if len(node.patterns) != 1 or type(node.patterns[0]) is not jq_ast.PVar:
                raise _Unknown
            source = self.run(node.source, inp, env)
            return self.run(node.body, inp, {**env, node.patterns[0].name: source})
        if kind is jq_ast.Call:
            return self._call(node, inp, env)
        raise _Unknown  # reduce, foreach, .., @format, label, definitions, updates, slices

    def _object(self, node: Any, inp: _Taint, env: Mapping[str, _Taint]) -> _Taint:
        out = _CONSTANT
        for entry in node.entries:
            key = entry.key
            if entry.value is None:  # {a}: {a: .a}; {$x}: {x: $x}
                if type(key) is jq_ast.Literal and type(key.value) is str:
                    value = self.run(jq_ast.Index(jq_ast.Identity(), key), inp, env)
                elif type(key) is jq_ast.Var:
                    value = self.run(key, inp, env)
                else:
                    raise _Unknown
                out = out | value
                continue
            if not (type(key) is jq_ast.Literal and type(key.value) is str):
                out = out | self.derived(self.run(key, inp, env))
            out = out | self.run(entry.value, inp, env)
        return _Taint(derived=out.paths())

    def _if(self, node: Any, inp: _Taint, env: Mapping[str, _Taint]) -> _Taint:
        self.read(self.run(node.cond, inp, env))
        out = self.run(node.then, inp, env)
        for cond, then in node.elifs:
            self.read(self.run(cond, inp, env))
            out = out | self.run(then, inp, env)
        return out | (self.run(node.otherwise, inp, env) if node.otherwise is not None else inp)

    def _call(self, node: Any, inp: _Taint, env: Mapping[str, _Taint]) -> _Taint:
        name, args = node.name, node.args
        arity = len(args)
        if (name, arity) in _READERS:
            return self.derived(inp, *(self.run(a, inp, env) for a in args))
        if arity == 0 and name in ("empty", "null", "true", "false"):
            return _CONSTANT
        if arity == 1 and name == "select":
            self.read(self.run(args[0], inp, env))
            return inp
        if arity == 1 and name in _PASS:
            return self.run(args[0], inp, env)
        if arity == 1 and name == "isempty":
            return self.derived(self.run(args[0], inp, env))
        if arity == 2 and name == "limit":
            self.read(self.run(args[0], inp, env))
            return self.run(args[1], inp, env)
        if arity == 2 and name in ("any", "all"):
            generated = self.run(args[0], inp, env)
            return self.derived(self.run(args[1], generated, env))
        if arity == 1 and name in ("any", "all"):
            each = self.derived(inp)  # .[]
            return self.derived(self.run(args[0], each, env))
        if arity == 1 and name in _PER_ELEMENT:
            each = self.derived(inp)
            mapped = self.run(args[0], each, env)
            if name != "map":
                self.read(mapped)  # the keys order, group or pick the elements
                return each
            return _Taint(derived=mapped.paths())
        raise _Unknown


_CACHE: dict[str, tuple[Path, ...] | None] = {}


def input_paths(text: str) -> tuple[Path, ...] | None:
    """The paths of its input whose values decide the results of the expression ``text``
    (sorted, none a prefix of another; ``()`` for a constant), or None when that is unknown
    (see the module doc). Cached by text."""
    if text in _CACHE:
        return _CACHE[text]
    found: tuple[Path, ...] | None
    try:
        flow = _Flow()
        flow.read(flow.run(jq.parse(text), _INPUT, {}))  # the results are read
        found = minimal(flow.reads | _unchecked(flow.walked, flow.reads))
    except (_Unknown, jq.JqError, RecursionError):
        found = None
    if len(_CACHE) > 4096:  # definitions come and go with cluster Kartas
        _CACHE.clear()
    _CACHE[text] = found
    return found


def _unchecked(walked: set[Path], reads: set[Path]) -> set[Path]:
    """The aliases made whose way down no path read checks: a read path through one (or
    under it) walks the same objects; the others are read themselves (a lookup whose value
    nothing reads: ``.a.b | empty`` still fails where ``.a`` is a string)."""
    return {w for w in walked if not any(w[: len(r)] == r or r[: len(w)] == w for r in reads)}


def minimal(paths: Iterable[Path]) -> tuple[Path, ...]:
    """The paths, without those under another one (reading ``.a`` reads ``.a.b``)."""
    out: list[Path] = []
    for path in sorted(paths, key=lambda p: (len(p), p)):
        if not any(path[: len(p)] == p for p in out):
            out.append(path)
    return tuple(sorted(out))
