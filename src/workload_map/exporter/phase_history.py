"""When a workload entered its current phase, for ``workloadmap_workload_phase_since_timestamp_seconds``.

From the workload's status where its definition says how: a phase matched by a ``byConditions``
matcher entered that phase when the matched conditions last changed, so its time is the newest
``lastTransitionTime`` among them (read through the definition's ``conditionsDefinition`` path).
A phase matched otherwise (``byPhase``, ``byExpression``: no status field records when) gets
the time this exporter first saw the workload in it, marked ``source="exporter"``; that time
resets when the exporter restarts (documented in docs/metrics.md). The generation series read
``metadata.generation`` and ``status.observedGeneration`` where the object has them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from workload_map import jq
from workload_map.model import Karta

__all__ = ["PhaseClock", "generations", "status_since"]


def _timestamp(text: Any) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


_COMPILED: dict[str, Any] = {}


def _raw_conditions(karta: Karta, obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The workload's conditions as objects (their ``lastTransitionTime`` included)."""
    definition = karta.root.status_definition
    cd = definition.conditions_definition if definition is not None else None
    if cd is None or not cd.path:
        return []
    program = _COMPILED.get(cd.path)
    if program is None:
        program = _COMPILED[cd.path] = jq.compile(cd.path)
    try:
        results = program.all(obj)
    except jq.JqError:
        return []
    out: list[Mapping[str, Any]] = []
    for result in results:
        if isinstance(result, list):
            out.extend(c for c in result if isinstance(c, Mapping))
    return out


#: (id of a definition, phase) -> (the definition, whether a matcher of that phase reads
#: conditions)
_BY_CONDITIONS: dict[tuple[int, str], tuple[Karta, bool]] = {}


def status_since(karta: Karta, obj: Mapping[str, Any], phase: str) -> float | None:
    """When ``obj`` entered ``phase`` by its conditions' ``lastTransitionTime`` (Unix time),
    or None when no ``byConditions`` matcher of that phase holds (or none records a time)."""
    key = (id(karta), phase)
    known = _BY_CONDITIONS.get(key)
    if known is not None and known[0] is karta and not known[1]:
        return None  # (asked per workload of every first scrape: once per definition)
    definition = karta.root.status_definition
    if definition is None:
        return None
    matchers = getattr(definition.status_mappings, phase.lower(), ())
    if known is None or known[0] is not karta:
        if len(_BY_CONDITIONS) >= 1024:
            _BY_CONDITIONS.clear()
        # the definition held: its id stays its own while kept
        known = _BY_CONDITIONS[key] = (karta, any(m.by_conditions for m in matchers))
    if not known[1]:
        return None  # no conditions to read (a phase matched by an expression or counts)
    conditions = _raw_conditions(karta, obj)
    if not conditions:
        return None
    cd = definition.conditions_definition
    assert cd is not None
    type_key, status_key = cd.type_field_name or "type", cd.status_field_name or "status"
    reason_key = cd.reason_field_name
    by_type = {str(c.get(type_key)): c for c in conditions}
    best: float | None = None
    for matcher in matchers:
        if not matcher.by_conditions:
            continue
        times: list[float] = []
        for wanted in matcher.by_conditions:
            got = by_type.get(wanted.type)
            if got is None or (wanted.status is not None and got.get(status_key) != wanted.status):
                break
            if wanted.reason and reason_key and got.get(reason_key) != wanted.reason:
                break
            stamp = _timestamp(got.get("lastTransitionTime"))
            if stamp is not None:
                times.append(stamp)
        else:
            if times:
                when = max(times)
                best = when if best is None else max(best, when)
    return best


def generations(obj: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(``metadata.generation``, ``status.observedGeneration``), each None when absent."""
    meta = obj.get("metadata")
    status = obj.get("status")
    # dict first: the ABC check costs per workload of every first scrape
    return (
        _number(meta.get("generation"))
        if type(meta) is dict or isinstance(meta, Mapping)
        else None,
        _number(status.get("observedGeneration"))
        if type(status) is dict or isinstance(status, Mapping)
        else None,
    )


def _number(value: Any) -> float | None:
    # read per workload of every first scrape: the plain types first, no union isinstance
    kind = type(value)
    if kind is int or kind is float:
        return float(value)
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else None


class PhaseClock:
    """The time this exporter first saw each workload in each of its current phases.

    ``now``: the clock (injected in tests). :meth:`seen` answers for one workload's current
    phases and forgets the phases it left; :meth:`forget` drops workloads that are gone."""

    def __init__(self, now: Callable[[], float]) -> None:
        self.now = now
        self._first: dict[str, dict[str, float]] = {}

    def seen(self, uid: str, phases: Iterable[str]) -> dict[str, float]:
        current = set(phases)
        known = self._first.get(uid)
        stamp = self.now()
        if not known:  # a first scrape: every workload seen anew
            kept = self._first[uid] = dict.fromkeys(current, stamp)
            return kept
        kept = {p: t for p, t in known.items() if p in current}
        for p in current - set(kept):
            kept[p] = stamp
        self._first[uid] = kept
        return kept

    def forget(self, live: Iterable[str]) -> None:
        keep = set(live)
        for uid in [u for u in self._first if u not in keep]:
            del self._first[uid]
