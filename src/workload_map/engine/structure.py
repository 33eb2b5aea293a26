"""A Karta prepared for evaluation: validated once, indexed once, expressions compiled once.

Every question about a workload walks the component tree (parents, children, which components
describe pods) and evaluates the same expressions many times; :func:`prepare` builds that index a
single time per definition and keeps it (a small cache keyed by the definition object).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from workload_map.engine.errors import InvalidDefinitionError
from workload_map.engine.runner import ExpressionCache
from workload_map.model import Component, Karta, load_karta
from workload_map.model.references import reference_names

__all__ = ["Structure", "load_definition", "prepare"]


class Structure:
    """Indexes over one definition's components.

    A plain class, not a dataclass: ``@dataclass`` generates and compiles its methods at
    import, about 5M instructions of every command (this module is on a live ``get``'s path),
    and one Structure is made per definition, compared and printed by nobody."""

    def __init__(
        self,
        karta: Karta,
        components: dict[str, Component],
        order: tuple[str, ...],
        parent: dict[str, str | None],
        children: dict[str, tuple[str, ...]],
        pod_bearing: tuple[str, ...],
        expressions: ExpressionCache | None = None,
        selectors: ExpressionCache | None = None,
    ) -> None:
        self.karta = karta
        self.components = components
        self.order = order
        self.parent = parent
        self.children = children
        #: the components that describe pods (``Component.has_pod_definition``), in order
        self.pod_bearing = pod_bearing
        self.expressions = ExpressionCache() if expressions is None else expressions
        #: the pod-selector paths: compiled without the reference variables (#80's rule)
        self.selectors = ExpressionCache() if selectors is None else selectors
        self._ancestors: dict[str, list[str]] = {}
        self._entries: dict[str, Any] = {}
        self._subtrees: dict[str, list[str]] = {}
        #: derived tables other modules build once per definition (attribution plans, …)
        self.memo: dict[Any, Any] = {}
        #: per fragmented component, where the object holds it (see ``Extractor._fragment_root``)
        self.fragment_roots: dict[str, tuple[str | int, ...] | None] = {}

    def status_entries(self, name: str) -> Any:
        """The component's status mappings in the fixed order, only statuses with matchers."""
        found = self._entries.get(name)
        if found is None:
            definition = self.components[name].status_definition
            entries = definition.status_mappings.entries() if definition else ()
            found = self._entries[name] = tuple((s, m) for s, m in entries if m)
        return found

    @property
    def root(self) -> Component:
        return self.karta.root

    def ancestors(self, name: str) -> list[str]:
        """Parent, grandparent, … up to the root (or an owner the definition lacks)."""
        found = self._ancestors.get(name)
        if found is not None:
            return found
        out: list[str] = []
        current = self.parent.get(name)
        while current is not None and current in self.components and current not in out:
            out.append(current)
            current = self.parent.get(current)
        self._ancestors[name] = out
        return out

    def subtree(self, name: str) -> list[str]:
        """``name`` and every descendant, depth first in definition order (cycles cut)."""
        found = self._subtrees.get(name)
        if found is not None:
            return found
        out: list[str] = []
        seen: set[str] = set()
        stack = [name]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            out.append(current)
            stack.extend(reversed(self.children.get(current, ())))
        self._subtrees[name] = out
        return out

    def is_childless(self, name: str) -> bool:
        """A component without children (the subtree-scale rule's leaf)."""
        return not self.children.get(name)

    def has_pod_definition(self, name: str) -> bool:
        """Whether the component ``name`` describes pods (see ``Component.has_pod_definition``)."""
        return self.components[name].has_pod_definition

    def eval(self, expr: str, value: Any) -> list[Any]:
        """Every output of ``expr`` (compiled once) on ``value``."""
        return self.expressions.get(expr).evaluate(value)


def load_definition(karta: Karta | Mapping[str, Any] | str) -> Karta:
    """A :class:`Karta` from a model object, a dict, YAML/JSON text or a file path."""
    if isinstance(karta, Karta):
        return karta
    loaded = load_karta(karta)
    if isinstance(loaded, list):
        if len(loaded) != 1:
            raise InvalidDefinitionError(f"expected one Karta definition, got {len(loaded)}")
        loaded = loaded[0]
    return loaded


def _validate(karta: Karta) -> None:
    # start-up boundary: the validator (model.validation) loads only when a definition is
    # prepared with validate=True; the CLI's get and describe prepare checked definitions
    # without it and never load it (tests/cli/test_startup.py)
    try:
        from workload_map.model import validate
    except ImportError:  # the validator is optional for evaluation
        return
    findings = [f for f in validate(karta) if getattr(f, "severity", "error") == "error"]
    if findings:
        text = "; ".join(f"{f.path}: {f.message}" for f in findings)
        raise InvalidDefinitionError(f"invalid karta: {text}")


_CACHE: OrderedDict[int, Structure] = OrderedDict()
_CACHE_SIZE = 128


def prepare(karta: Karta, *, validate: bool = True) -> Structure:
    """The (cached) structure of ``karta``; invalid definitions raise InvalidDefinitionError."""
    key = id(karta)
    found = _CACHE.get(key)
    if found is not None and found.karta is karta:
        _CACHE.move_to_end(key)
        return found
    if validate:
        _validate(karta)
    comps = karta.components()
    components = {c.name: c for c in comps}
    parent: dict[str, str | None] = {c.name: c.owner_ref or None for c in comps}
    parent[karta.root.name] = None
    # children from the one parent each name has, so what hangs under the root is a tree even
    # in a definition evaluated without validation (duplicate names, cycles, self-owners)
    names = list(components)
    children = {name: tuple(k for k in names if parent[k] == name and k != name) for name in names}
    structure = Structure(
        karta=karta,
        components=components,
        order=tuple(c.name for c in comps),
        parent=parent,
        children=children,
        pod_bearing=tuple(c.name for c in comps if c.has_pod_definition),
        expressions=ExpressionCache(reference_names(karta)),
    )
    _CACHE[key] = structure
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return structure
