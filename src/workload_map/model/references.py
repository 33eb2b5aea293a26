"""Cross-resource references: the rules every consumer shares (our extension, after #80).

A definition lists ``references`` on its structure definition; each names another object (a
``lookup`` by name) or a set of objects (a ``list`` by label selector) that a consumer reads and
binds as the jq variable ``$<name>``. This module is pure: which names a path may use, the order
references resolve in (a reference's own paths may use earlier ones), and the validation rules.
Reading the objects is the consumers' job (:mod:`workload_map.engine.references`).

Where the variables are bound: every path evaluated on the workload (spec, scale, status,
instance ids, suspend actions, the gang annotations) and the alpha gang paths; never the
pod-selector paths (``componentTypeSelector``, ``componentInstanceSelector``,
``replicaSelector``), which must decide a pod's place from the pod alone (#80's rule).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from workload_map import jq
from workload_map.model.labels import match_label_findings
from workload_map.model.shape import JqField, iter_jq_fields
from workload_map.model.types import GVK, Karta, Reference

if TYPE_CHECKING:
    from workload_map.model.findings import Finding

__all__ = [
    "MAX_LIST_ITEMS",
    "MAX_REFERENCES",
    "REFERENCES_PATH",
    "SELECTOR_KEYS",
    "check",
    "forbidden_kind",
    "reference_names",
    "resolution_order",
    "unbound_variables",
    "variables_used",
]

REFERENCES_PATH = "spec.structureDefinition.references"
#: a definition reads at most this many other objects (each one read per workload)
MAX_REFERENCES = 8
#: a ``list`` binds at most this many objects (the rest are dropped, with a finding)
MAX_LIST_ITEMS = 100
#: the jq keys of the pod-selector objects: references are never bound there
SELECTOR_KEYS = frozenset({"keyPath", "idPath"})
#: patterns as text, compiled (and kept) by ``re`` at their first use: a command that reads a
#: definition without references compiles neither
_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,62}"
#: names jq itself gives a meaning (``$ENV``, ``$__loc__``, ``$__prog_args``)
_RESERVED = frozenset({"ENV", "__loc__", "__prog_args"})
_VAR = r"\$([A-Za-z_][A-Za-z0-9_]*)"


def reference_names(karta: Karta) -> tuple[str, ...]:
    """The names the definition's references bind, in definition order."""
    return tuple(r.name for r in karta.spec.structure_definition.references if r.name)


def variables_used(expression: str, names: Iterable[str]) -> tuple[str, ...]:
    """Which of ``names`` the expression mentions as ``$name`` (a textual over-approximation:
    a local ``as $name`` or a string holding ``$name`` counts too, which only costs a binding)."""
    wanted = set(names)
    seen: list[str] = []
    for match in re.finditer(_VAR, expression):
        name = match.group(1)
        if name in wanted and name not in seen:
            seen.append(name)
    return tuple(seen)


def unbound_variables(expression: str, allowed: Sequence[str]) -> list[tuple[str, int]]:
    """``($name, offset)`` of every variable the expression uses that neither jq nor ``allowed``
    binds. Unparsable expressions give nothing (the jq rules report them)."""
    names = list(allowed)
    out: list[tuple[str, int]] = []
    for _ in range(32):  # each round finds one more; a path mentions a few variables at most
        try:
            jq.compile(expression, variables=names)
        except jq.JqCompileError as err:
            text = err.message
            if not text.startswith("variable not defined: $"):
                return out
            name = text.removeprefix("variable not defined: $")
            out.append((name, err.offset if err.offset is not None else -1))
            names.append(name)
            continue
        except (jq.JqError, RecursionError):
            return out
        return out
    return out


def forbidden_kind(gvk: GVK, reference: Reference) -> str | None:
    """Why ``reference`` may never read ``gvk`` (None when it may).

    Secrets are never readable through a definition: a Karta is cluster-wide and its bindings
    reach every consumer's output (describe, the web view, events). ConfigMaps often hold
    configuration but sometimes credentials, so a reference reads one only when it says so
    (``allowConfigMap: true``), which reviewers of the definition then see.
    """
    if gvk.group == "" and gvk.kind == "Secret":
        return "Secrets are never readable through a definition"
    if gvk.group == "" and gvk.kind == "ConfigMap" and not reference.allow_config_map:
        return "ConfigMaps are readable only with allowConfigMap: true"
    return None


def _reference_paths(reference: Reference) -> list[tuple[str, str]]:
    """``(field key, expression)`` of the reference's own jq paths."""
    out: list[tuple[str, str]] = []
    target = reference.target
    if target is None:
        return out
    for key, attr in (
        ("kindPath", "kind_path"),
        ("namePath", "name_path"),
        ("namespacePath", "namespace_path"),
        ("matchLabelsPath", "match_labels_path"),
    ):
        value = getattr(target, attr, None)
        if isinstance(value, str) and value:
            out.append((key, value))
    return out


def _dependencies(karta: Karta) -> dict[str, tuple[str, ...]]:
    names = reference_names(karta)
    return {
        r.name: tuple(
            dict.fromkeys(
                name for _, expr in _reference_paths(r) for name in variables_used(expr, names)
            )
        )
        for r in karta.spec.structure_definition.references
    }


def resolution_order(karta: Karta) -> tuple[list[Reference], list[list[str]]]:
    """The references in an order where each comes after those its paths use, and the cycles
    (each a list of names) that no order satisfies; references in a cycle are left out."""
    refs = {r.name: r for r in karta.spec.structure_definition.references}
    deps = _dependencies(karta)
    order: list[Reference] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done, 3 in a cycle
    cycles: list[list[str]] = []

    def visit(name: str, stack: list[str]) -> bool:
        mark = state.get(name)
        if mark == 2:
            return True
        if mark == 1 or mark == 3:
            if mark == 1:
                cycle = stack[stack.index(name) : -1]
                cycles.append(cycle)
                for member in cycle:
                    state[member] = 3
            return False
        state[name] = 1
        ok = True
        for dep in deps.get(name, ()):
            if dep in refs and not visit(dep, [*stack, dep]):
                ok = False
        if state.get(name) == 3 or not ok:
            state[name] = 3
            return False
        state[name] = 2
        order.append(refs[name])
        return True

    for name in refs:
        visit(name, [name])
    return order, cycles


def _kind_findings(path: str, reference: Reference, kinds: Sequence[GVK]) -> list[Finding]:
    from workload_map.model.findings import ERROR, Finding, FindingCode

    out: list[Finding] = []
    if not kinds:
        out.append(
            Finding(
                f"{path}.kinds",
                FindingCode.REFERENCE_INVALID,
                ERROR,
                "a reference must name at least one kind",
            )
        )
    for i, gvk in enumerate(kinds):
        kpath = f"{path}.kinds[{i}]"
        if not gvk.version or not gvk.kind:
            out.append(
                Finding(
                    kpath,
                    FindingCode.REFERENCE_INVALID,
                    ERROR,
                    "a referenced kind needs its version and kind (group empty for core)",
                )
            )
        why = forbidden_kind(gvk, reference)
        if why is not None:
            out.append(
                Finding(
                    kpath,
                    FindingCode.REFERENCE_FORBIDDEN_KIND,
                    ERROR,
                    f"reference '{reference.name}' may not read {gvk.kind}: {why}",
                )
            )
    return out


def _declaration_findings(karta: Karta) -> list[Finding]:
    from workload_map.model.findings import ERROR, WARNING, Finding, FindingCode

    refs = karta.spec.structure_definition.references
    out: list[Finding] = []
    if len(refs) > MAX_REFERENCES:
        out.append(
            Finding(
                REFERENCES_PATH,
                FindingCode.REFERENCE_INVALID,
                ERROR,
                f"a definition may declare at most {MAX_REFERENCES} references, "
                f"this one declares {len(refs)}",
            )
        )
    seen: set[str] = set()
    for i, ref in enumerate(refs):
        path = f"{REFERENCES_PATH}[{i}]"
        if not re.fullmatch(_NAME, ref.name) or ref.name in _RESERVED:
            out.append(
                Finding(
                    f"{path}.name",
                    FindingCode.REFERENCE_INVALID,
                    ERROR,
                    f"reference name {json.dumps(ref.name)} must be a jq variable name "
                    "(a letter or '_', then letters, digits or '_', at most 63) and not one jq "
                    "reserves (ENV, __loc__, __prog_args)",
                )
            )
        elif ref.name in seen:
            out.append(
                Finding(
                    f"{path}.name",
                    FindingCode.DUPLICATE_LIST_KEY,
                    ERROR,
                    f"reference name '{ref.name}' is declared twice",
                )
            )
        seen.add(ref.name)
        if (ref.lookup is None) == (ref.list is None):
            out.append(
                Finding(
                    path,
                    FindingCode.REFERENCE_INVALID,
                    ERROR,
                    f"reference '{ref.name}' must set exactly one of lookup or list",
                )
            )
        if ref.lookup is not None:
            out += _kind_findings(f"{path}.lookup", ref, ref.lookup.kinds)
            if not ref.lookup.name_path:
                out.append(
                    Finding(
                        f"{path}.lookup.namePath",
                        FindingCode.REFERENCE_INVALID,
                        ERROR,
                        f"reference '{ref.name}' lookup needs a namePath",
                    )
                )
        if ref.list is not None:
            lpath = f"{path}.list"
            out += _kind_findings(lpath, ref, ref.list.kinds)
            if ref.list.match_labels is None and not ref.list.match_labels_path:
                out.append(
                    Finding(
                        lpath,
                        FindingCode.REFERENCE_INVALID,
                        ERROR,
                        f"reference '{ref.name}' list needs matchLabels or matchLabelsPath "
                        "(listing every object of a kind is not bounded)",
                    )
                )
            for key, value in (ref.list.match_labels or {}).items():
                kpath = f"{lpath}.matchLabels[{json.dumps(key)}]"
                out.extend(match_label_findings(kpath, key, value))
        if ref.allow_config_map and not any(
            g.group == "" and g.kind == "ConfigMap"
            for g in (ref.target.kinds if ref.target is not None else ())
        ):
            out.append(
                Finding(
                    f"{path}.allowConfigMap",
                    FindingCode.REFERENCE_INVALID,
                    WARNING,
                    f"reference '{ref.name}' allows ConfigMaps but reads none",
                )
            )
    return out


def _variable_findings(karta: Karta, fields: Iterable[JqField]) -> list[Finding]:
    from workload_map.model.findings import ERROR, Finding, FindingCode

    names = reference_names(karta)
    out: list[Finding] = []
    for field in fields:
        if "$" not in field.expression:
            continue  # every jq variable is spelled $name: nothing to bind or report
        in_reference = field.path.startswith(REFERENCES_PATH)
        selector = field.target == "pod" and field.key in SELECTOR_KEYS
        if in_reference:
            index = int(field.path[len(REFERENCES_PATH) + 1 :].split("]", 1)[0])
            own = karta.spec.structure_definition.references[index].name
            allowed = tuple(n for n in names if n != own)
        else:
            allowed = () if selector else names
        for name, offset in unbound_variables(field.expression, allowed):
            if selector and name in names:
                message = (
                    f"${name} is a reference, and references are not bound in pod-selector "
                    "paths (a pod's place must follow from the pod alone)"
                )
                code = FindingCode.REFERENCE_IN_SELECTOR
            elif in_reference and name == own:
                message = f"reference '{own}' uses its own variable ${name}"
                code = FindingCode.REFERENCE_CYCLE
            else:
                message = f"unknown variable ${name}: no reference of this definition binds it"
                code = FindingCode.UNKNOWN_VARIABLE
            out.append(
                Finding(
                    field.path,
                    code,
                    ERROR,
                    message,
                    field.component,
                    offset if offset >= 0 else None,
                )
            )
    _, cycles = resolution_order(karta)
    for cycle in cycles:
        if len(cycle) < 2:
            continue  # a reference naming itself is reported at its path above
        index = next(
            i
            for i, r in enumerate(karta.spec.structure_definition.references)
            if r.name == cycle[0]
        )
        out.append(
            Finding(
                f"{REFERENCES_PATH}[{index}]",
                FindingCode.REFERENCE_CYCLE,
                ERROR,
                "references form a cycle: " + " -> ".join([*cycle, cycle[0]]),
            )
        )
    return out


def check(karta: Karta, fields: Sequence[JqField] | None = None) -> list[Finding]:
    """Every finding about the definition's references and the variables its paths use.

    ``fields`` are the definition's jq fields (:func:`iter_jq_fields`) when the caller has
    already walked them (the validator shares one walk with its jq rules).
    """
    if fields is None:
        fields = tuple(iter_jq_fields(karta))
    return _declaration_findings(karta) + _variable_findings(karta, fields)
