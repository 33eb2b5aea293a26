"""Sample lines of the text exposition format, written as ``prometheus_client`` writes them.

The collector's fast path (:meth:`~workload_map.exporter.collector.WorkloadCollector.exposition`)
keeps each workload's lines as text; this module makes that text byte for byte as
``generate_latest`` would (label values escaped, labels sorted by name, numbers in Go's float
formatting), with the %-formats that let a fleet's repeated lines be written once. Written here
because the client formats every series at every scrape and has no way to keep lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

from prometheus_client.utils import floatToGoString

from workload_map.exporter.families import (
    COMPONENT_PODS,
    COMPONENT_REQUESTS,
    COMPONENT_RESOURCES,
    PHASE,
    PHASES,
    PODS,
    REQUESTS,
    RESOURCES,
    STATES,
    WORKLOAD_LABELS,
    Family,
)

__all__ = ["Lines", "Row"]

Row = tuple[tuple[str, ...], float]


#: sample values as the client prints them, by value: counts repeat the same few numbers
_NUMBERS: dict[float, str] = {}


#: the same, each followed by the line's end (a row's text then takes one concatenation)
_NUMBER_LINES: dict[float, str] = {}


def _number_line(value: float) -> str:
    text = _NUMBER_LINES.get(value)
    if text is None:
        text = number(value) + "\n"
        if len(_NUMBER_LINES) < 65536:
            _NUMBER_LINES[value] = text
    return text


def number(value: float) -> str:
    """A sample value as the client prints it (Go's float formatting)."""
    text = _NUMBERS.get(value)
    if text is None:
        text = str(floatToGoString(value))  # type: ignore[no-untyped-call]
        if len(_NUMBERS) < 65536:
            _NUMBERS[value] = text
    return text


def escape(value: str) -> str:
    if "\\" not in value and "\n" not in value and '"' not in value:
        return value  # nearly every label value: nothing to escape
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


class Lines:
    """Formats rows of one family as sample lines (labels sorted by name, as the client)."""

    def __init__(self, family: Family, labels: tuple[str, ...]) -> None:
        self.prefix = family.exposed
        self.order = sorted(range(len(labels)), key=lambda i: labels[i])
        self.names = labels
        # one %-format per family: the label names in the client's order (names are
        # [a-zA-Z_][a-zA-Z0-9_]*, so they hold no %), the values filled in per row
        inner = ",".join(f'{labels[i]}="%s"' for i in self.order)
        self.template = f"{self.prefix}{{{inner}}} "
        # the values in that order, picked in C (itemgetter of one index returns the item,
        # not a 1-tuple)
        self.pick = _picker(self.order) if self.order else None
        self._repeats: dict[int, str] = {}
        self._constants: dict[tuple[int, float], str] = {}
        if family.name == "workloadmap_pod_workload":
            in_line = tuple(labels[i] for i in self.order)
            assert in_line == POD_ORDER, in_line  # the order _pod_text gives the values in
        #: a workload's lines of this family by what its rows hold past the workload's
        #: identity (see :meth:`shared_text`); None: the family's rows are the workload's own
        shaped = family.name in SHAPED and labels[: len(WORKLOAD_LABELS)] == WORKLOAD_LABELS
        if shaped:
            in_line = tuple(labels[i] for i in self.order if i < len(WORKLOAD_LABELS))
            assert in_line == _IDENTITY_ORDER, in_line  # (labels are sorted by name)
        self.shapes: dict[tuple[Any, ...], str] | None = {} if shaped else None

    def line(self, row: Row) -> str:
        values, value = row
        if not self.order:
            return f"{self.prefix} {number(value)}\n"
        shown = tuple(escape(values[i]) for i in self.order)
        return self.template % shown + number(value) + "\n"

    def text(self, rows: list[Row], *, clean: bool = False) -> bytes:
        """The rows' lines, encoded (UTF-8, as ``generate_latest``). ``clean``: the caller
        checked that no label value of ``rows`` holds a character to escape."""
        if not rows:
            return b""
        pick = self.pick
        # one check of every value of the rows at once, in C: label values almost never hold
        # a character to escape, and escaping value by value was most of a first scrape's
        # formatting (a call per label of 600k series)
        if pick is None or (not clean and _escaped(rows)):
            line = self.line
            return "".join([line(r) for r in rows]).encode()
        # one %-format for all the rows (the line's format repeated, each line's number a
        # value): one call in C instead of a format, a concatenation and a list item per line
        numbers = _NUMBER_LINES
        args: list[str] = []
        for v, x in rows:
            args += pick(v)
            args.append(numbers.get(x) or _number_line(x))
        return (self._repeated(len(rows)) % tuple(args)).encode()

    def constant(self, count: int, value: float) -> str:
        """The line's format ``count`` times, each with the number ``value`` written in."""
        key = (count, value)
        found = self._constants.get(key)
        if found is None:
            if len(self._constants) >= SHAPES_KEPT:
                self._constants.clear()
            line = self.template + number(value).replace("%", "%%") + "\n"
            found = self._constants[key] = line * count
        return found

    def _repeated(self, count: int) -> str:
        """The line's format ``count`` times, its number a ``%s`` (kept per count)."""
        found = self._repeats.get(count)
        if found is None:
            if len(self._repeats) >= SHAPES_KEPT:
                self._repeats.clear()
            found = self._repeats[count] = (self.template + "%s") * count
        return found

    def shared_text(self, rows: list[Row], identity: tuple[str, ...]) -> bytes:
        """The rows' lines, as :meth:`text`, for rows that start with the workload's identity
        (:data:`WORKLOAD_LABELS`'s values; ``identity`` has them escaped, in the lines' order:
        :func:`escaped_identity`): the rest of each row written into one format (:meth:`shape`),
        kept by that rest, and the identity formatted in once."""
        assert self.shapes is not None
        size = len(WORKLOAD_LABELS)
        rest = [(v[size:], x) for v, x in rows]
        key = tuple(rest)
        template = self.shapes.get(key)
        if template is None:
            if len(self.shapes) >= SHAPES_KEPT:
                self.shapes.clear()
            template = self.shapes[key] = self.shape(rest)
        return (template % (identity * len(rows))).encode()

    def shape(self, rest: Sequence[tuple[tuple[str, ...], float]]) -> str:
        """The lines of a workload's rows as one %-format of its identity: each row's own
        values (``rest``: past the identity) escaped and written in with its number, the
        identity's four values left as ``%s`` in each line, in :func:`escaped_identity`'s order
        (labels are sorted by name, the identity's always come group, kind, namespace,
        workload). The rest of a workload's rows (states, resources, counts) repeats across
        a fleet's workloads: a format kept by it is one format per workload and family
        instead of one per line."""
        names, size, out = self.names, len(WORKLOAD_LABELS), []
        for values, value in rest:
            inner = ",".join(
                f'{names[i]}="%s"'
                if i < size
                else f'{names[i]}="{escape(values[i - size]).replace("%", "%%")}"'
                for i in self.order
            )
            out.append(f"{self.prefix}{{{inner}}} {number(value)}\n")
        return "".join(out)


#: the per-workload families whose rows past the workload's identity repeat across a fleet
#: (phases, states, resources, components; not names or uids of pods, gangs or objects)
SHAPED = frozenset(
    f.name
    for f in (
        PHASE,
        PODS,
        COMPONENT_PODS,
        RESOURCES,
        COMPONENT_RESOURCES,
        REQUESTS,
        COMPONENT_REQUESTS,
    )
)
#: distinct shapes kept per family (emptied when full)
SHAPES_KEPT = 4096


def escaped_identity(namespace: str, name: str, kind: str, group: str) -> tuple[str, ...]:
    """A workload's identity (:data:`WORKLOAD_LABELS`'s values) escaped, in the order of its labels
    in a line (by name: group, kind, namespace, workload)."""
    return (escape(group), escape(kind), escape(namespace), escape(name))


#: the pods family's labels in their lines' order (by name)
POD_ORDER = (
    "component",
    "instance",
    "kind",
    "namespace",
    "pod",
    "pod_group",
    "replica",
    "uid",
    "workload",
)

#: the identity labels, in that order (checked against each shaped family's)
_IDENTITY_ORDER = ("group", "kind", "namespace", "workload")


_VALUES = itemgetter(0)


def _picker(order: list[int]) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    """The values at ``order``, as a tuple (``itemgetter`` of one index gives the item)."""
    if len(order) > 1:
        return itemgetter(*order)
    only = order[0]
    return lambda values: (values[only],)


def _escaped(rows: list[Row]) -> bool:
    """Whether any label value of ``rows`` holds a character the text format escapes."""
    blob = "".join(chain.from_iterable(map(_VALUES, rows)))
    return "\\" in blob or "\n" in blob or '"' in blob


def has_escape(values: list[str]) -> bool:
    """Whether any of ``values`` holds a character the text format escapes."""
    blob = "".join(values)
    return "\\" in blob or "\n" in blob or '"' in blob


#: the label values the collector itself writes (phases, states, sources): checked once here,
#: so a workload's check reads only the values that come from its objects
CONSTANTS_CLEAN = not has_escape(
    [*PHASES, *STATES, "requested", "exporter", "status", "spec", "pods", "total", "scheduled"]
)
