"""Schema-aware checking: do a definition's jq paths exist in the target CRD's schema?

A typo such as ``.spec.replicatedJob[]`` evaluates to nothing at run time and silently makes a
component disappear. This module catches it before the definition ships, by a static analysis of
the jq syntax tree against the served version's ``openAPIV3Schema``: each expression is
interpreted over *schema locations* instead of values. Constructs whose result cannot be placed in
the schema (user functions, variables bound to locations, unknown builtins) yield "unknown", which
is never reported: the checker does not guess.

A definition's references bind ``$name`` to another object (or a list of them): with that
kind's CRD at hand, :func:`check_references_against_crds` checks every path starting from
``$name`` against its schema the same way, each finding naming the referenced kind.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from workload_map import jq
from workload_map.jq import ast as jq_ast
from workload_map.model.findings import ERROR, WARNING, Finding, FindingCode
from workload_map.model.shape import iter_jq_fields
from workload_map.model.types import GVK, Karta
from workload_map.model.views import View

__all__ = [
    "check_against_crd",
    "check_references_against_crds",
    "crd_schema",
    "schema_nodes_at",
    "schema_types_at",
]

Schema = Mapping[str, Any]


class _Loc(View):
    """A place an expression's output may come from.

    ``schema`` None means unknown (anything may be there); ``path`` None means the value is
    computed rather than read from the object, so nothing below it is reported.
    """

    schema: Schema | None
    path: str | None


_UNKNOWN = _Loc(None, None)


class _Problem(View):
    code: FindingCode
    message: str
    offset: int
    #: the reference variable the path started from (None: the workload)
    variable: str | None = None


def _bound_names(patterns: Iterable[Any]) -> set[str]:
    """Every variable a destructuring pattern binds (``$x``, ``[$a, {b: $c}]``, ``{$d}``)."""
    names: set[str] = set()
    todo = list(patterns)
    while todo:
        node = todo.pop()
        if isinstance(node, jq_ast.PVar | jq_ast.Var):
            names.add(node.name)
        elif isinstance(node, jq_ast.PArray):
            todo.extend(node.elements)
        elif isinstance(node, jq_ast.PObject):
            for key, pattern, _ in node.entries:
                if isinstance(key, jq_ast.Var):
                    todo.append(key)
                if pattern is not None:
                    todo.append(pattern)
    return names


def _variable_of(path: str | None) -> str | None:
    """``runtime`` for a location under ``$runtime`` (its path starts with the variable)."""
    if not path or not path.startswith("$"):
        return None
    name = path[1:]
    for stop in ".[":
        name = name.partition(stop)[0]
    return name


def _type_of(schema: Schema | None) -> str | None:
    if schema is None:
        return None
    if schema.get("x-kubernetes-int-or-string"):
        return None
    typ = schema.get("type")
    if isinstance(typ, str):
        return typ
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def _synthetic(typ: str) -> _Loc:
    return _Loc({"type": typ}, None)


class _Interpreter:
    def __init__(self, env: Mapping[str, _Loc] | None = None) -> None:
        self.ast = jq_ast
        self.problems: list[_Problem] = []
        #: variables bound to schema locations (a reference's object); others are unknown
        self.env: dict[str, _Loc] = dict(env or {})

    # -- helpers -------------------------------------------------------------------------------

    def report(self, code: FindingCode, message: str, node: Any, path: str | None = None) -> None:
        offset = getattr(node, "offset", -1)
        self.problems.append(
            _Problem(code, message, offset if offset >= 0 else 0, _variable_of(path))
        )

    def field(self, loc: _Loc, name: str, node: Any, lenient: bool) -> list[_Loc]:
        schema = loc.schema
        if schema is None:
            return [_UNKNOWN]
        child_path = f"{loc.path}.{name}" if loc.path is not None else None
        typ = _type_of(schema)
        props = schema.get("properties")
        if isinstance(props, Mapping) and name in props:
            return [_Loc(props[name], child_path)]
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return [_Loc(None, child_path)]
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            return [_Loc(extra, child_path)]
        if extra is True:
            return [_Loc(None, child_path)]
        if loc.path is None:
            return [_UNKNOWN]
        if typ == "object" or isinstance(props, Mapping):
            if not isinstance(props, Mapping):
                return [_Loc(None, child_path)]  # an object declared without fields: no guess
            where = loc.path or "."
            hint = ""
            close = difflib.get_close_matches(name, list(props), n=1, cutoff=0.6)
            if close:
                hint = f" (did you mean '{close[0]}'?)"
            self.report(
                FindingCode.SCHEMA_UNKNOWN_FIELD,
                f"field '{name}' does not exist at {where}{hint}",
                node,
                loc.path,
            )
            return []
        if typ in ("array", "string", "integer", "number", "boolean") and not lenient:
            self.report(
                FindingCode.SCHEMA_TYPE_MISMATCH,
                f"cannot read field '{name}': {loc.path or '.'} is {_article(typ)}"
                + (" (iterate it with [] first)" if typ == "array" else ""),
                node,
                loc.path,
            )
            return []
        return [_UNKNOWN]

    def element(self, loc: _Loc, node: Any, lenient: bool, what: str) -> list[_Loc]:
        schema = loc.schema
        if schema is None:
            return [_UNKNOWN]
        child_path = f"{loc.path}[]" if loc.path is not None else None
        typ = _type_of(schema)
        if typ == "array":
            items = schema.get("items")
            return [_Loc(items if isinstance(items, Mapping) else None, child_path)]
        if typ == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, Mapping) and not schema.get("properties"):
                return [_Loc(extra, child_path)]
            return [_Loc(None, child_path)]
        if typ in ("string", "integer", "number", "boolean") and loc.path is not None:
            if not lenient:
                self.report(
                    FindingCode.SCHEMA_TYPE_MISMATCH,
                    f"cannot {what}: {loc.path or '.'} is {_article(typ)}",
                    node,
                    loc.path,
                )
            return []
        return [_UNKNOWN]

    # -- evaluation ----------------------------------------------------------------------------

    def run(self, node: Any, inputs: list[_Loc], lenient: bool = False) -> list[_Loc]:
        a = self.ast
        if not inputs:
            return []
        if isinstance(node, a.Identity):
            return inputs
        if isinstance(node, a.Index):
            targets = self.run(node.target, inputs, lenient)
            key = node.key
            if isinstance(key, a.Literal) and key.kind == "string":
                return _dedupe(
                    out for loc in targets for out in self.field(loc, key.value, node, lenient)
                )
            if isinstance(key, a.Literal) and key.kind == "number":
                return _dedupe(
                    out for loc in targets for out in self.element(loc, node, lenient, "index it")
                )
            self.run(key, inputs, lenient)
            return [_UNKNOWN] if targets else []
        if isinstance(node, a.Slice):
            targets = self.run(node.target, inputs, lenient)
            for bound in (node.start, node.end):
                if bound is not None:
                    self.run(bound, inputs, lenient)
            return targets
        if isinstance(node, a.Iterate):
            targets = self.run(node.target, inputs, lenient)
            return _dedupe(
                out for loc in targets for out in self.element(loc, node, lenient, "iterate")
            )
        if isinstance(node, a.Optional):
            return self.run(node.target, inputs, True)
        if isinstance(node, a.Pipe):
            return self.run(node.right, self.run(node.left, inputs, lenient), lenient)
        if isinstance(node, a.Comma | a.Alt):
            left = self.run(node.left, inputs, lenient)
            right = self.run(node.right, inputs, lenient)
            return _dedupe([*left, *right])
        if isinstance(node, a.Literal):
            return [_literal(node)]
        if isinstance(node, a.Str):
            for part in node.parts:
                if not isinstance(part, str):
                    self.run(part, inputs, lenient)
            return [_synthetic("string")]
        if isinstance(node, a.Unary):
            return self.run(node.operand, inputs, lenient)
        if isinstance(node, a.Binary):
            left = self.run(node.left, inputs, lenient)
            right = self.run(node.right, inputs, lenient)
            return [_binary_result(node.op, left, right)]
        if isinstance(node, a.Array):
            if node.body is not None:
                self.run(node.body, inputs, lenient)
            return [_synthetic("array")]
        if isinstance(node, a.Object):
            return [self.object(node, inputs, lenient)]
        if isinstance(node, a.If):
            return self.conditional(node, inputs, lenient)
        if isinstance(node, a.Try):
            body = self.run(node.body, inputs, True)
            if node.catch is not None:
                body = [*body, *self.run(node.catch, [_UNKNOWN], True)]
            return _dedupe(body)
        if isinstance(node, a.Call):
            return self.call(node, inputs, lenient)
        if isinstance(node, a.Var):
            return [self.env.get(node.name, _UNKNOWN)]
        if isinstance(node, a.Bind):
            self.run(node.source, inputs, lenient)
            shadowed = _bound_names(node.patterns) & set(self.env)
            if not shadowed:
                return self.run(node.body, inputs, lenient)
            saved = self.env
            # `. as $runtime | …` rebinds the name: below it, it is not the reference
            self.env = {n: loc for n, loc in saved.items() if n not in shadowed}
            try:
                return self.run(node.body, inputs, lenient)
            finally:
                self.env = saved
        if isinstance(node, a.Label):
            return self.run(node.body, inputs, lenient)
        if isinstance(node, a.Reduce | a.Foreach):
            self.run(node.source, inputs, lenient)
            return [_UNKNOWN]
        # Var, Format, RecurseAll, Break, WithDefs, Update: nothing to place in the schema
        return [_UNKNOWN]

    def object(self, node: Any, inputs: list[_Loc], lenient: bool) -> _Loc:
        a = self.ast
        props: dict[str, Any] = {}
        exact = True
        for entry in node.entries:
            key = entry.key
            if entry.computed or not isinstance(key, a.Literal):
                self.run(key, inputs, lenient)
                exact = False
            if entry.value is None:
                if isinstance(key, a.Literal) and key.kind == "string":
                    outs = _dedupe(
                        o for loc in inputs for o in self.field(loc, key.value, node, lenient)
                    )
                else:
                    outs = [_UNKNOWN]
            else:
                outs = self.run(entry.value, inputs, lenient)
            if isinstance(key, a.Literal) and key.kind == "string":
                schemas = {id(o.schema): o.schema for o in outs}
                only = next(iter(schemas.values())) if len(schemas) == 1 else None
                props[key.value] = only if only is not None else {}
        if not exact:
            return _synthetic("object")
        return _Loc({"type": "object", "properties": props}, None)

    def conditional(self, node: Any, inputs: list[_Loc], lenient: bool) -> list[_Loc]:
        self.run(node.cond, inputs, lenient)
        outs = list(self.run(node.then, inputs, lenient))
        for cond, then in node.elifs:
            self.run(cond, inputs, lenient)
            outs += self.run(then, inputs, lenient)
        if node.otherwise is not None:
            outs += self.run(node.otherwise, inputs, lenient)
        else:
            outs += inputs
        return _dedupe(outs)

    def call(self, node: Any, inputs: list[_Loc], lenient: bool) -> list[_Loc]:
        name, args = node.name, node.args
        arity = len(args)
        if (name, arity) == ("select", 1):
            self.run(args[0], inputs, lenient)
            return inputs
        if arity == 0 and name in _TYPE_FILTERS:
            return inputs
        if (name, arity) == ("empty", 0) or name == "error":
            return []
        if (name, arity) in (("not", 0), ("length", 0), ("keys", 0), ("type", 0)):
            return [_synthetic(_RESULT_TYPES.get(name, "string"))] if inputs else []
        if (name, arity) == ("to_entries", 0):
            return [self.to_entries(loc, node, lenient) for loc in inputs]
        if (name, arity) in (("first", 0), ("last", 0)):
            return _dedupe(o for loc in inputs for o in self.element(loc, node, True, "index it"))
        if (name, arity) in (("first", 1), ("last", 1), ("limit", 2), ("until", 2)):
            if name == "limit":
                self.run(args[0], inputs, lenient)
            return self.run(args[-1], inputs, lenient)
        if name in ("any", "all") and arity in (1, 2):
            if arity == 1:
                elems = _dedupe(
                    o for loc in inputs for o in self.element(loc, node, lenient, "iterate")
                )
                self.run(args[0], elems, lenient)
            else:
                self.run(args[1], self.run(args[0], inputs, lenient), lenient)
            return [_synthetic("boolean")]
        if arity == 1 and name in ("map", "sort_by", "group_by", "unique_by", "min_by", "max_by"):
            elems = _dedupe(
                o for loc in inputs for o in self.element(loc, node, lenient, "iterate")
            )
            self.run(args[0], elems, lenient)
            return inputs if name == "sort_by" else [_UNKNOWN]
        if name in _VALUE_ARG_BUILTINS.get(arity, ()):
            for arg in args:
                self.run(arg, inputs, lenient)
            typ = _RESULT_TYPES.get(name)
            return [_synthetic(typ) if typ else _UNKNOWN]
        if arity == 0 and name in _RESULT_TYPES:
            return [_synthetic(_RESULT_TYPES[name])]
        return [_UNKNOWN]

    def to_entries(self, loc: _Loc, node: Any, lenient: bool) -> _Loc:
        schema = loc.schema
        if schema is None:
            return _UNKNOWN
        typ = _type_of(schema)
        value: Any = None
        if typ == "object":
            extra = schema.get("additionalProperties")
            props = schema.get("properties")
            if isinstance(extra, Mapping) and not props:
                value = extra
        elif typ == "array":
            items = schema.get("items")
            value = items if isinstance(items, Mapping) else None
        elif typ is not None and loc.path is not None and not lenient:
            self.report(
                FindingCode.SCHEMA_TYPE_MISMATCH,
                f"cannot take to_entries: {loc.path or '.'} is {_article(typ)}",
                node,
            )
            return _UNKNOWN
        entry: dict[str, Any] = {
            "type": "object",
            "properties": {"key": {"type": "integer" if typ == "array" else "string"}},
        }
        if value is not None:
            entry["properties"]["value"] = value
        else:
            entry["x-kubernetes-preserve-unknown-fields"] = True
        return _Loc({"type": "array", "items": entry}, loc.path and f"{loc.path} | to_entries")


_TYPE_FILTERS = frozenset(
    {
        "values",
        "objects",
        "arrays",
        "strings",
        "numbers",
        "nulls",
        "booleans",
        "scalars",
        "iterables",
    }
)
_VALUE_ARG_BUILTINS: dict[int, frozenset[str]] = {
    0: frozenset(),
    1: frozenset(
        {
            "has",
            "contains",
            "inside",
            "startswith",
            "endswith",
            "ltrimstr",
            "rtrimstr",
            "split",
            "join",
            "test",
            "match",
            "capture",
            "index",
            "rindex",
            "indices",
            "splits",
            "in",
            "tostring",
            "ascii",
        }
    ),
    2: frozenset({"test", "match", "capture", "split", "sub", "gsub", "splits"}),
    3: frozenset({"sub", "gsub"}),
}
_RESULT_TYPES: dict[str, str] = {
    "not": "boolean",
    "length": "integer",
    "keys": "array",
    "type": "string",
    "tostring": "string",
    "tojson": "string",
    "tonumber": "number",
    "ascii_downcase": "string",
    "ascii_upcase": "string",
    "has": "boolean",
    "contains": "boolean",
    "inside": "boolean",
    "startswith": "boolean",
    "endswith": "boolean",
    "test": "boolean",
    "ltrimstr": "string",
    "rtrimstr": "string",
    "join": "string",
    "split": "array",
    "sub": "string",
    "gsub": "string",
    "floor": "integer",
    "ceil": "integer",
    "round": "integer",
    "in": "boolean",
    "isvalid": "boolean",
}


def _article(typ: str | None) -> str:
    if typ is None:
        return "a value"
    return f"an {typ}" if typ[0] in "aeiou" else f"a {typ}"


def _literal(node: Any) -> _Loc:
    kind = node.kind
    if kind == "number":
        value = node.value
        return _synthetic(
            "integer" if isinstance(value, int) or float(value).is_integer() else "number"
        )
    return _synthetic(kind if kind != "null" else "null")


def _binary_result(op: str, left: list[_Loc], right: list[_Loc]) -> _Loc:
    if op in ("==", "!=", "<", "<=", ">", ">=", "and", "or"):
        return _synthetic("boolean")
    types = {_type_of(loc.schema) for loc in (*left, *right)}
    if op in ("+", "-", "*", "/", "%") and types and types <= {"integer", "number"}:
        if op == "/" or "number" in types:
            return _synthetic("number")
        return _synthetic("integer")
    return _UNKNOWN


def _dedupe(locs: Iterable[_Loc]) -> list[_Loc]:
    out: list[_Loc] = []
    seen: set[tuple[int, str | None]] = set()
    for loc in locs:
        key = (id(loc.schema), loc.path)
        if key not in seen:
            seen.add(key)
            out.append(loc)
    return out


def _analyse(
    schema: Schema | None, expression: str, env: Mapping[str, _Loc] | None = None
) -> tuple[list[_Loc], list[_Problem]]:
    tree = jq.parse(expression)
    interp = _Interpreter(env)
    outs = interp.run(tree, [_Loc(schema, "" if schema is not None else None)])
    return outs, interp.problems


def schema_nodes_at(schema: Schema, expression: str) -> list[Schema | None]:
    """The schema node of every place ``expression`` may read from (None where unknown).

    Raises ``jq.JqParseError`` for an expression that does not parse.
    """
    outs, _ = _analyse(schema, expression)
    return [loc.schema for loc in outs]


def schema_types_at(
    crd: Mapping[str, Any], expression: str, *, version: str | None = None
) -> frozenset[str]:
    """The OpenAPI types ``expression``'s outputs may have in ``crd`` (``"unknown"`` included
    when some output cannot be placed). ``version`` defaults to the storage version."""
    schema = crd_schema(crd, version)
    if schema is None:
        return frozenset({"unknown"})
    return frozenset(_type_of(node) or "unknown" for node in schema_nodes_at(schema, expression))


def _versions(crd: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, Mapping) else None
    return [v for v in versions if isinstance(v, Mapping)] if isinstance(versions, list) else []


def crd_schema(crd: Mapping[str, Any], version: str | None = None) -> Schema | None:
    """The ``openAPIV3Schema`` of ``version`` (default: the storage version), or None."""
    versions = _versions(crd)
    chosen = None
    for v in versions:
        if (version is None and v.get("storage")) or (
            version is not None and v.get("name") == version
        ):
            chosen = v
            break
    if chosen is None and version is None and versions:
        chosen = versions[0]
    if chosen is not None:
        schema = (chosen.get(FindingCode.SCHEMA) or {}).get("openAPIV3Schema")
        if isinstance(schema, Mapping):
            return schema
    spec = crd.get("spec")
    legacy = spec.get("validation") if isinstance(spec, Mapping) else None
    if isinstance(legacy, Mapping) and isinstance(legacy.get("openAPIV3Schema"), Mapping):
        return legacy["openAPIV3Schema"]  # type: ignore[no-any-return]
    return None


def check_against_crd(karta: Karta, crd: Mapping[str, Any]) -> list[Finding]:
    """Findings for every workload path of ``karta`` that cannot exist in ``crd``'s schema.

    The CRD must describe the Karta's root kind and serve the version the root names.
    """
    root = karta.root
    gvk = root.kind
    kind_path = "spec.structureDefinition.rootComponent.kind"
    if not isinstance(crd, Mapping) or crd.get("kind") != "CustomResourceDefinition":
        return [
            Finding(
                "", FindingCode.CRD_INVALID, ERROR, "the target is not a CustomResourceDefinition"
            )
        ]
    spec = crd.get("spec") if isinstance(crd.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    names = spec.get("names") if isinstance(spec.get("names"), Mapping) else {}
    assert isinstance(names, Mapping)
    crd_gk = f"{names.get('kind')}.{spec.get('group')}"
    if gvk is None:
        return [
            Finding(
                kind_path,
                FindingCode.CRD_MISMATCH,
                ERROR,
                "the root component names no kind to check",
                root.name,
            )
        ]
    if gvk.group != spec.get("group") or gvk.kind != names.get("kind"):
        return [
            Finding(
                kind_path,
                FindingCode.CRD_MISMATCH,
                ERROR,
                f"the CRD defines {crd_gk}, but the root component is {gvk.kind}.{gvk.group}",
                root.name,
            )
        ]
    version = next((v for v in _versions(crd) if v.get("name") == gvk.version), None)
    served = [str(v.get("name")) for v in _versions(crd) if v.get("served")]
    if version is None or not version.get("served"):
        state = "does not define" if version is None else "does not serve"
        return [
            Finding(
                f"{kind_path}.version",
                FindingCode.VERSION_NOT_SERVED,
                ERROR,
                f"the CRD {state} version {gvk.version!r} of {crd_gk} "
                f"(served: {', '.join(served) or 'none'})",
                root.name,
            )
        ]
    schema = crd_schema(crd, gvk.version)
    if schema is None:
        return [
            Finding(
                kind_path,
                FindingCode.CRD_NO_SCHEMA,
                WARNING,
                f"the CRD has no openAPIV3Schema for {gvk.version}; paths were not checked",
                root.name,
            )
        ]
    return _check_paths(karta, schema, gvk)


def _check_paths(karta: Karta, schema: Schema, gvk: GVK) -> list[Finding]:
    out: list[Finding] = []
    for field in iter_jq_fields(karta):
        if field.target != "workload":
            continue
        try:
            _, problems = _analyse(schema, field.expression)
        except jq.JqError:
            continue  # reported by validate() as jq-parse-error
        except RecursionError:
            out.append(
                Finding(
                    field.path,
                    FindingCode.SCHEMA_CHECK_SKIPPED,
                    WARNING,
                    "expression too long to check against the target schema",
                    field.component,
                    None,
                )
            )
            continue
        for problem in problems:
            out.append(
                Finding(
                    field.path,
                    problem.code,
                    ERROR,
                    f"'{field.expression}': {problem.message} in {gvk.kind} {gvk.api_version}",
                    field.component,
                    problem.offset,
                )
            )
    return out


def _crd_for(crds: Iterable[Mapping[str, Any]], gvk: GVK) -> Schema | None:
    """The schema of ``gvk`` among ``crds`` (the version it names, if served), or None."""
    for crd in crds:
        if not isinstance(crd, Mapping) or crd.get("kind") != "CustomResourceDefinition":
            continue
        spec = crd.get("spec")
        names = spec.get("names") if isinstance(spec, Mapping) else None
        if not isinstance(spec, Mapping) or not isinstance(names, Mapping):
            continue
        if (spec.get("group") or "", names.get("kind")) != (gvk.group, gvk.kind):
            continue
        version = next((v for v in _versions(crd) if v.get("name") == gvk.version), None)
        if version is not None and version.get("served"):
            return crd_schema(crd, gvk.version)
    return None


def check_references_against_crds(karta: Karta, crds: Iterable[Mapping[str, Any]]) -> list[Finding]:
    """Findings for every path of ``karta`` that reads a reference (``$name…``) where the
    referenced kind's schema (a CRD among ``crds``) has no such field. A reference that may read
    several kinds (``ClusterTrainingRuntime`` or ``TrainingRuntime``) is reported only where
    the path exists in none of those given; kinds without a CRD given are not checked."""
    crds = list(crds)
    out: list[Finding] = []
    for ref in karta.spec.structure_definition.references:
        target = ref.target
        schemas = [
            (gvk, schema)
            for gvk in (target.kinds if target is not None else ())
            if (schema := _crd_for(crds, gvk)) is not None
        ]
        if not schemas:
            continue
        label = (
            " or ".join(dict.fromkeys(g.kind for g, _ in schemas))
            + " "
            + ", ".join(dict.fromkeys(g.api_version for g, _ in schemas))
        )
        out += _check_variable(karta, ref.name, ref.list is not None, schemas, label)
    return out


def _check_variable(
    karta: Karta, name: str, is_list: bool, schemas: list[tuple[GVK, Schema]], label: str
) -> list[Finding]:
    out: list[Finding] = []
    marker = f"${name}"
    for field in iter_jq_fields(karta):
        if field.target != "workload" or marker not in field.expression:
            continue
        # what every alternative kind reports (a path valid in one of them is not an error)
        common: dict[tuple[FindingCode, str, int], _Problem] | None = None
        try:
            for _, schema in schemas:
                root = {"type": "array", "items": schema} if is_list else schema
                _, problems = _analyse(None, field.expression, {name: _Loc(root, marker)})
                found = {(p.code, p.message, p.offset): p for p in problems if p.variable == name}
                common = found if common is None else {k: common[k] for k in common if k in found}
        except jq.JqError:
            continue  # reported by validate() as jq-parse-error
        except RecursionError:
            out.append(
                Finding(
                    field.path,
                    FindingCode.SCHEMA_CHECK_SKIPPED,
                    WARNING,
                    "expression too long to check against the referenced kind's schema",
                    field.component,
                    None,
                )
            )
            continue
        for problem in (common or {}).values():
            out.append(
                Finding(
                    field.path,
                    problem.code,
                    ERROR,
                    f"'{field.expression}': {problem.message} in {label} (reference '{name}')",
                    field.component,
                    problem.offset,
                )
            )
    return out
