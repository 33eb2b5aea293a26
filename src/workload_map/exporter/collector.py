"""The ``workloadmap_*`` metric families, computed from the inventory at each scrape.

A ``prometheus_client`` custom collector: ``collect()`` reads the watch-fed
:class:`~workload_map.cluster.inventory.Inventory` (no API call per scrape) and yields one
family per metric (declared in :mod:`workload_map.exporter.families`).

Each workload's rows (and their formatted sample lines) are memoised with its inventory entry,
so a scrape of 10k unchanged workloads only concatenates text. :meth:`WorkloadCollector.exposition`
is that fast path: byte for byte what ``prometheus_client.generate_latest`` prints for this
collector (a test holds it to that), without re-escaping every label of every series at every
scrape, which alone would cost seconds for half a million series (the lines are written by
:mod:`workload_map.exporter.lines`).

The memo holds each workload's lines already encoded, one ``bytes`` per family, and
:meth:`WorkloadCollector.exposition_chunks` hands out those very objects in exposition order:
the server streams them (``service.py``), so a scrape of 10k/100k adds no copy of the text.
Joining the text as one ``str`` and encoding it held three copies at once (memo, joined text,
bytes: about 0.45 GiB at that size, issue 21).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any, cast

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)

from workload_map.cluster.inventory import Entry, Inventory
from workload_map.engine.summary import ComponentTally, PodPlace, Tally, WorkloadSummary
from workload_map.exporter.families import (
    COMPONENT_PODS,
    COMPONENT_REQUESTS,
    COMPONENT_RESOURCES,
    DEFINITION,
    DEFINITION_READY,
    ERRORS,
    FAMILIES,
    GANG_MIN,
    GANG_PODS,
    GENERATION,
    LEADER,
    OBSERVED_GENERATION,
    PER_WORKLOAD,
    PHASE,
    PHASE_SINCE,
    PHASES,
    POD,
    PODS,
    REFERENCES,
    REQUESTS,
    RESOURCES,
    RESTARTS,
    SYNC,
    SYNCED,
    WORKLOAD,
    Family,
    label_name,
)
from workload_map.exporter.lines import (
    CONSTANTS_CLEAN,
    SHAPES_KEPT,
    Lines,
    Row,
    escape,
    escaped_identity,
    has_escape,
)
from workload_map.exporter.phase_history import PhaseClock, generations, status_since

__all__ = ["ExporterHealth", "LabelPolicy", "WorkloadCollector", "base_units"]


#: (format, lines) of a tally's pods, resources and deprecated requests families
_TallyShape = tuple[tuple[str, int], tuple[str, int], tuple[str, int]]

#: the default clock of the phases' first-seen times (Unix seconds)
CLOCK: Callable[[], float] = time.time


@dataclass(frozen=True)
class LabelPolicy:
    """Which workload labels are copied onto ``workloadmap_workload_info`` (an allowlist)."""

    workload_labels: tuple[str, ...] = ()


@dataclass
class ExporterHealth:
    """What the exporter knows about its own feed (set by whoever runs the watches)."""

    last_sync: float | None = None
    watch_restarts: int = 0
    #: True once the caches synced and the fleet was evaluated once (set by the service;
    #: a collector made without a service is synced from the start)
    synced: bool = True
    #: False on a replica that is not the leader: it exports its health only, so that two
    #: replicas never duplicate a workload series (duplicates break ``group_left`` joins)
    is_leader: Callable[[], bool] = lambda: True
    informers: list[Any] = field(default_factory=list)

    def restarts(self) -> int:
        relists = sum(max(0, int(getattr(i, "lists", 1)) - 1) for i in self.informers)
        return self.watch_restarts + relists


@dataclass(slots=True)
class _Memo:
    entry: Entry
    rows: dict[str, list[Row]] | None  # dropped once formatted (rebuilt if collect() asks)
    #: no label value of ``rows`` holds a character to escape (see ``WorkloadCollector._rows``)
    clean: bool = False
    #: the encoded lines of each per-workload family, in :data:`PER_WORKLOAD` order (a tuple,
    #: not a dict by name: 10k workloads' memos are kept between scrapes)
    lines: tuple[bytes, ...] | None = None


class WorkloadCollector:
    """Yields the ``workloadmap_*`` families from ``inventory`` at each ``collect()``."""

    def __init__(
        self,
        inventory: Inventory,
        *,
        health: ExporterHealth | None = None,
        labels: LabelPolicy | None = None,
        now: Callable[[], float] | None = None,
    ) -> None:
        """``now``: the clock of the phases' first-seen times (default :data:`CLOCK`, which
        tests replace)."""
        self.inventory = inventory
        self.health = health or ExporterHealth()
        self._phase_clock = PhaseClock(now if now is not None else CLOCK)
        self.labels = labels or LabelPolicy()
        self._copied = tuple(self.labels.workload_labels)
        self._workload_labels = WORKLOAD.labels + tuple(label_name(k) for k in self._copied)
        self._memo: dict[str, _Memo] = {}
        #: the per-workload part of the last exposition, and the inventory generation it is
        #: of: a scrape when nothing changed reuses it whole (no entry, memo or family walked)
        self._steady: tuple[int, list[bytes]] | None = None
        self._formatters = {
            f.name: Lines(f, self._workload_labels if f is WORKLOAD else f.labels) for f in FAMILIES
        }
        #: (name, formatter) of each per-workload family, in exposition order
        self._each = [(f.name, self._formatters[f.name]) for f in PER_WORKLOAD]
        #: the phase and tally families' formats of a workload by its phases and tallies (by
        #: id, the tallies held: see _shaped_text)
        self._workload_shapes: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}
        #: the tally families' formats by (component and instance, or (), tally id), with
        #: the tally (see _tally_formats)
        self._tally_shapes: dict[tuple[Any, ...], tuple[Tally, _TallyShape]] = {}

    def describe(self) -> list[Metric]:
        return []  # no families at registration time (they come from the caches)

    # -- the two outputs ------------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        for family, rows in self._families():
            labels = self._workload_labels if family is WORKLOAD else family.labels
            metric = family.metric(labels)
            for values, value in rows or ():
                if family.type == "info":
                    assert isinstance(metric, InfoMetricFamily)
                    metric.add_metric(list(values), {})
                else:
                    assert isinstance(metric, GaugeMetricFamily | CounterMetricFamily)
                    metric.add_metric(list(values), value)
            yield metric

    def exposition(self) -> bytes:
        """The text format of :meth:`collect`, from memoised lines."""
        return b"".join(self.exposition_chunks())

    def exposition_chunks(self) -> list[bytes]:
        """:meth:`exposition` in pieces, to be written one after the other: family headers,
        the families without a memo, and the memoised ``bytes`` of each workload themselves
        (no copy is made of them; empty pieces are left out)."""
        chunks: list[bytes] = []
        for family, rows in self._families(chunks=chunks):
            chunks.append(family.header().encode())
            chunks.append(self._formatters[family.name].text(rows))
        return list(filter(None, chunks))  # (in C: a fleet's text is ~15 pieces a workload)

    # -- building -------------------------------------------------------------------------

    def _families(self, chunks: list[bytes] | None = None) -> Iterator[tuple[Family, list[Row]]]:
        """(family, rows) in exposition order; with ``chunks``, the per-workload families are
        not yielded but appended to it as memoised text, after the others were yielded."""
        leader = self.health.is_leader()
        synced = self.health.synced
        # read before the entries: a change while they are read makes the next scrape redo them
        generation = self.inventory.generation
        steady = self._steady
        reuse = (
            steady[1]
            if chunks is not None and leader and synced and steady and steady[0] == generation
            else None
        )
        memos: list[_Memo] = []
        if reuse is None:
            # before the first full evaluation no workload series: a scrape then would record
            # the whole fleet as gone (absent() alerts, broken rates) while the caches fill
            entries = self.inventory.entries() if leader and synced else []
            # for text, each workload is formatted as soon as its rows are built (and the rows
            # dropped): the rows of the whole fleet at once would outweigh its text
            memos = [self._memoised(e, text=chunks is not None) for e in entries]
            live = {m.entry.uid for m in memos}
            for uid in [u for u in self._memo if u not in live]:
                del self._memo[uid]
            if leader and synced:
                self._phase_clock.forget(live)
        yield SYNC, [((), self.health.last_sync)] if self.health.last_sync is not None else []
        yield RESTARTS, [((), float(self.health.restarts()))]
        yield LEADER, [((), 1.0 if leader else 0.0)]
        yield SYNCED, [((), 1.0 if synced else 0.0)]
        yield ERRORS, [((n,), float(c)) for n, c in sorted(self.inventory.errors.items())]
        if not leader or not synced:
            return
        yield from self._definition_rows()
        if chunks is None:
            for family in PER_WORKLOAD:
                yield family, [row for m in memos for row in self._rows_of(m).get(family.name, ())]
            return
        if reuse is None:
            reuse = []
            # once per workload, not once per family (made by _memoised: no call)
            texts = [m.lines if m.lines is not None else self._text(m) for m in memos]
            # each family's pieces of every workload (transposed in C), the empty ones left out
            columns = zip(*texts, strict=True) if texts else [()] * len(PER_WORKLOAD)
            for family, column in zip(PER_WORKLOAD, columns, strict=True):
                reuse.append(family.header().encode())
                reuse.extend(filter(None, column))
            self._steady = (generation, reuse)
        chunks.extend(reuse)

    def _rows_of(self, memo: _Memo) -> dict[str, list[Row]]:
        if memo.rows is None:
            memo.rows = self._rows(memo.entry, [])
            memo.clean = False  # not checked again: the text then escapes value by value
        return memo.rows

    def _text(self, memo: _Memo) -> tuple[bytes, ...]:
        if memo.lines is None:
            rows = self._rows_of(memo)
            # the escape check was made once for the workload's rows of every family (when
            # they were built), not once per family: a first scrape formats 10k workloads of
            # a dozen families each
            clean = memo.clean
            # most families of a workload are empty (an owned one has one row in all): no call
            identity: tuple[str, ...] | None = None
            out: list[bytes] = []
            for name, lines in self._each:
                found = rows[name]
                if not found:
                    out.append(b"")
                elif lines.shapes is not None:
                    if identity is None:
                        e = memo.entry
                        identity = escaped_identity(e.namespace, e.name, e.gvk.kind, e.gvk.group)
                    out.append(lines.shared_text(found, identity))
                else:
                    out.append(lines.text(found, clean=clean))
            memo.lines = tuple(out)
            # the text is what scrapes read; keep one copy (the rows dropped first: above)
            memo.rows = None
        return memo.lines

    def _memoised(self, entry: Entry, *, text: bool = False) -> _Memo:
        memo = self._memo.get(entry.uid)
        if memo is None or memo.entry is not entry:
            if text:
                # straight to text, no rows (collect() builds them if it is ever asked)
                memo = _Memo(entry, None, lines=self._lines(entry))
            else:
                values: list[str] = []
                memo = _Memo(entry, self._rows(entry, values))
                memo.clean = CONSTANTS_CLEAN and not has_escape(values)
            self._memo[entry.uid] = memo
        if text:
            self._text(memo)
        return memo

    def _lines(self, e: Entry) -> tuple[bytes, ...]:
        """The workload's text, one ``bytes`` per family of :data:`PER_WORKLOAD`, written
        without rows: what :meth:`_text` makes of :meth:`_rows` (a test holds them equal),
        each family's lines written as soon as its values are known. A first scrape formats
        10k workloads of fifteen families each: no dict of row lists per workload, and no
        second pass over the families."""
        meta = e.obj.get("metadata")
        if type(meta) is not dict:
            meta = meta if isinstance(meta, Mapping) else {}
        ns = str(meta.get("namespace") or "")
        name = str(meta.get("name") or "")
        gvk = e.gvk
        kind = gvk.kind
        wl = (ns, name, kind, gvk.group)
        info: tuple[str, ...] = (
            *wl,
            gvk.version,
            e.uid,
            e.definition.name,
            e.definition.origin,
            "true" if e.top_level else "false",
        )
        if self._copied:  # (no labels copied by default: no generator per workload)
            obj_labels = meta.get("labels")
            obj_labels = obj_labels if isinstance(obj_labels, Mapping) else {}
            info += tuple(str(obj_labels.get(k, "")) for k in self._copied)
        formatters = self._formatters
        summary = e.summary
        if summary is None or not e.top_level:
            # an owned workload (the Jobs of a JobSet) is counted through its top-level one
            return (formatters[WORKLOAD.name].text([(info, 1.0)]), *_NO_LINES)
        values = list(info)  # checked for escapes at once (the identity included)
        matched = set(summary.phases)
        identity = escaped_identity(*wl)
        shaped: dict[str, bytes] = {}
        # the phases' and (unless the evaluation failed) the tallies' text at once
        self._shaped_text(shaped, summary, identity, tallies=e.error is None)
        first_seen = self._phase_clock.seen(e.uid, matched)
        since_rows: list[Row] = []
        for phase in (x for x in PHASES if x in matched):
            since = status_since(e.definition.karta, e.obj, phase)
            since_rows.append(
                ((*wl, phase, "exporter"), first_seen[phase])
                if since is None
                else ((*wl, phase, "status"), since)
            )
        ref_rows: list[Row] = []
        for ref in e.references:  # before the error return: a missing runtime is shown
            ref_kind = (ref.kind or "").rpartition(" ")[2]
            reason = (ref.reason or "") if ref.problem else ""
            labels = (*wl, ref.name, ref_kind, ref.object_name or "", reason)
            ref_rows.append((labels, float(ref.found)))
            values += labels[4:]
        generation, observed = generations(e.obj)
        gang_min: list[Row] = []
        gang_pods: list[Row] = []
        pods = b""
        if e.error is None:  # counts of a half-evaluated workload would mislead
            for g in summary.gangs:
                values.append(g.name)
                gang_min.append(((*wl, g.name), float(g.min_member)))
                gang_pods.append(((*wl, g.name, "total"), float(g.current)))
                gang_pods.append(((*wl, g.name, "scheduled"), float(g.scheduled)))
            if summary.pods:
                pods = self._pod_text(summary.pods, ns, name, kind)
        clean = CONSTANTS_CLEAN and not has_escape(values)
        get = shaped.get
        return (
            formatters[WORKLOAD.name].text([(info, 1.0)], clean=clean),
            pods,
            get(PHASE.name, b""),
            # (no call for a family without rows: most workloads have no references, and
            # a third no gangs)
            formatters[PHASE_SINCE.name].text(since_rows, clean=clean) if since_rows else b"",
            b""
            if generation is None
            else formatters[GENERATION.name].text([(wl, generation)], clean=clean),
            b""
            if observed is None
            else formatters[OBSERVED_GENERATION.name].text([(wl, observed)], clean=clean),
            get(PODS.name, b""),
            get(COMPONENT_PODS.name, b""),
            get(RESOURCES.name, b""),
            get(COMPONENT_RESOURCES.name, b""),
            get(REQUESTS.name, b""),
            get(COMPONENT_REQUESTS.name, b""),
            formatters[GANG_MIN.name].text(gang_min, clean=clean) if gang_min else b"",
            formatters[GANG_PODS.name].text(gang_pods, clean=clean) if gang_pods else b"",
            formatters[REFERENCES.name].text(ref_rows, clean=clean) if ref_rows else b"",
        )

    def _definition_rows(self) -> Iterator[tuple[Family, list[Row]]]:
        info: list[Row] = []
        ready: list[Row] = []
        in_force = {(d.name, d.origin): d for d in self.inventory.definitions()}
        for (name, origin), d in sorted(in_force.items()):
            gvk = d.gvk
            assert gvk is not None
            info.append(((name, gvk.group, gvk.version, gvk.kind, origin), 1.0))
            ready.append(((name, origin), 1.0 if _operator_ready(d.raw) else 0.0))
        for name, definition in self.inventory.cluster_kartas().items():
            if (name, "cluster") in in_force:
                continue
            gvk = definition.gvk if definition is not None else None
            if gvk is None:  # invalid: known by name only
                info.append(((name, "", "", "", "cluster"), 1.0))
            else:  # valid but another Karta of the same kind is in force
                info.append(((name, gvk.group, gvk.version, gvk.kind, "cluster"), 1.0))
            ready.append(((name, "cluster"), 0.0))
        yield DEFINITION, info
        yield DEFINITION_READY, ready

    def _rows(self, e: Entry, values: list[str]) -> dict[str, list[Row]]:
        """The workload's rows by family (for :meth:`collect`; the text is written without
        rows: :meth:`_lines`); ``values`` gets every label value they hold that the collector
        did not write itself (checked for escapes once, not row by row: the workload's
        identity repeats in every row, so the rows hold ten times as many)."""
        rows: dict[str, list[Row]] = {f.name: [] for f in PER_WORKLOAD}
        wl = (e.namespace, e.name, e.gvk.kind, e.gvk.group)
        meta = e.obj.get("metadata")
        obj_labels = meta.get("labels") if isinstance(meta, Mapping) else None
        obj_labels = obj_labels if isinstance(obj_labels, Mapping) else {}
        info = (
            *wl,
            e.gvk.version,
            e.uid,
            e.definition.name,
            e.definition.origin,
            "true" if e.top_level else "false",
            *(str(obj_labels.get(k, "")) for k in self._copied),
        )
        rows[WORKLOAD.name].append((info, 1.0))
        values += info  # the identity (wl) included
        summary = e.summary
        if summary is None or not e.top_level:
            # an owned workload (the Jobs of a JobSet) is counted through its top-level one
            return rows
        matched = set(summary.phases)
        rows[PHASE.name] = [((*wl, p), 1.0 if p in matched else 0.0) for p in PHASES]
        first_seen = self._phase_clock.seen(e.uid, matched)
        for phase in (x for x in PHASES if x in matched):
            since = status_since(e.definition.karta, e.obj, phase)
            rows[PHASE_SINCE.name].append(
                ((*wl, phase, "exporter"), first_seen[phase])
                if since is None
                else ((*wl, phase, "status"), since)
            )
        for ref in e.references:  # before the error return: a missing runtime is shown
            kind = (ref.kind or "").rpartition(" ")[2]
            reason = (ref.reason or "") if ref.problem else ""
            labels = (*wl, ref.name, kind, ref.object_name or "", reason)
            rows[REFERENCES.name].append((labels, float(ref.found)))
            values += labels[4:]
        generation, observed = generations(e.obj)
        if generation is not None:
            rows[GENERATION.name].append((wl, generation))
        if observed is not None:
            rows[OBSERVED_GENERATION.name].append((wl, observed))
        if e.error is not None:
            return rows  # counts of a half-evaluated workload would mislead: error counted
        self._all_tally_rows(rows, wl, summary.totals, summary.components, values)
        gang_min, gang_pods = rows[GANG_MIN.name], rows[GANG_PODS.name]
        for g in summary.gangs:
            values.append(g.name)
            gang_min.append(((*wl, g.name), float(g.min_member)))
            gang_pods.append(((*wl, g.name, "total"), float(g.current)))
            gang_pods.append(((*wl, g.name, "scheduled"), float(g.scheduled)))
        ns, name, kind = e.namespace, e.name, e.gvk.kind
        pod_rows = rows[POD.name]
        for p in summary.pods:
            values += (p.name, p.uid, p.component, p.instance, p.replica, p.pod_group)
            pod_rows.append(
                (
                    (
                        ns,
                        p.name,
                        p.uid,
                        name,
                        kind,
                        p.component,
                        p.instance,
                        p.replica,
                        p.pod_group,
                    ),
                    1.0,
                )
            )
        return rows

    def _pod_text(self, pods: tuple[PodPlace, ...], ns: str, name: str, kind: str) -> bytes:
        """The pods' lines (``workloadmap_pod_workload_info``, the rows' text): the workload's
        own values (kind, namespace, workload) written into the line's format once, each pod's
        six read in C in the lines' label order (:data:`POD_ORDER`), all checked for escapes
        at once."""
        args = list(chain.from_iterable(map(_POD_VALUES, pods)))  # in C: no step per pod
        if has_escape(args):
            args = [escape(a) for a in args]
        k, n, w = (escape(v).replace("%", "%%") for v in (kind, ns, name))
        slot = "%s"
        line = self._formatters[POD.name].constant(1, 1.0) % (
            slot,
            slot,
            k,
            n,
            slot,
            slot,
            slot,
            slot,
            w,
        )
        return ((line * len(pods)) % tuple(args)).encode()

    def _all_tally_rows(
        self,
        rows: dict[str, list[Row]],
        wl: tuple[str, ...],
        totals: Tally,
        components: tuple[ComponentTally, ...],
        values: list[str],
    ) -> None:
        _tally_rows(rows, PODS, RESOURCES, REQUESTS, wl, totals, values)
        for c in components:
            key = (*wl, c.component, c.instance)
            values += (c.component, c.instance)
            _tally_rows(
                rows, COMPONENT_PODS, COMPONENT_RESOURCES, COMPONENT_REQUESTS, key, c.tally, values
            )

    def _shaped_text(
        self,
        shaped: dict[str, bytes],
        summary: WorkloadSummary,
        identity: tuple[str, ...],
        *,
        tallies: bool,
    ) -> None:
        """The text of the phase and tally families of a workload, from one format per family
        kept by all they hold past the workload's identity (its phases, and the tallies of it
        and of its components: equal tallies are one object across a fleet,
        engine/summary.py), as bytes: one lookup per workload, and the identity encoded once
        for every family."""
        components = summary.components if tallies else ()
        key = (
            summary.phases,
            id(summary.totals) if tallies else None,
            *[(c.component, c.instance, id(c.tally)) for c in components],
        )
        found = self._workload_shapes.get(key)
        if found is None:
            if len(self._workload_shapes) >= SHAPES_KEPT:
                self._workload_shapes.clear()
            made = [(PHASE.name, self._phase_format(summary.phases), len(PHASES))]
            if tallies:
                made += self._tally_formats(summary.totals, components)
            formats = tuple((name, template.encode(), lines) for name, template, lines in made)
            # the tallies held with their formats: their ids in the key stay theirs
            held = (summary.totals, *[c.tally for c in components])
            found = self._workload_shapes[key] = (held, formats)
        ident = tuple(map(str.encode, identity))
        for name, template, lines in found[1]:
            shaped[name] = template % (ident * lines)

    def _phase_format(self, phases: tuple[str, ...]) -> str:
        """The phase family's lines of a workload in ``phases``, a %-format of its identity."""
        lines = self._formatters[PHASE.name]
        assert lines.shapes is not None
        template = lines.shapes.get(phases)
        if template is None:
            if len(lines.shapes) >= SHAPES_KEPT:
                lines.shapes.clear()
            matched = set(phases)
            rest = [((p,), 1.0 if p in matched else 0.0) for p in PHASES]
            template = lines.shapes[phases] = lines.shape(rest)
        return template

    def _tally_formats(
        self, totals: Tally, components: tuple[ComponentTally, ...]
    ) -> list[tuple[str, str, int]]:
        """(family, %-format of the workload's identity, lines) of the tally families of a
        workload, those with lines: its totals' and its components' (each tally's formats
        kept by the tally and what it is of: :meth:`_tally_shape`)."""
        out: list[tuple[str, str, int]] = []
        for name, (template, count) in zip(
            (PODS.name, RESOURCES.name, REQUESTS.name), self._tally_shape((), totals), strict=True
        ):
            if count:
                out.append((name, template, count))
        if not components:
            return out
        parts: tuple[list[str], list[str], list[str]] = ([], [], [])
        counts = [0, 0, 0]
        for c in components:
            for at, (template, count) in enumerate(
                self._tally_shape((c.component, c.instance), c.tally)
            ):
                parts[at].append(template)
                counts[at] += count
        for at, name in enumerate(
            (COMPONENT_PODS.name, COMPONENT_RESOURCES.name, COMPONENT_REQUESTS.name)
        ):
            if counts[at]:
                out.append((name, "".join(parts[at]), counts[at]))
        return out

    def _tally_shape(self, key: tuple[str, ...], tally: Tally) -> _TallyShape:
        """(format, lines) of the pods, resources and deprecated requests families of
        ``tally`` under ``key`` (``()``: the workload's; (component, instance))."""
        at = (key, id(tally))
        found = self._tally_shapes.get(at)
        if found is not None and found[0] is tally:
            return found[1]
        families = (PODS, RESOURCES, REQUESTS) if not key else _COMPONENT_TALLY
        rows: dict[str, list[Row]] = {f.name: [] for f in families}
        _tally_rows(rows, *families, key, tally, [])
        made = cast(
            _TallyShape,
            tuple(
                (self._formatters[f.name].shape(rows[f.name]), len(rows[f.name])) for f in families
            ),
        )
        if len(self._tally_shapes) >= SHAPES_KEPT:
            self._tally_shapes.clear()
        self._tally_shapes[at] = (tally, made)  # the tally held: its id stays its own
        return made


_COMPONENT_TALLY = (COMPONENT_PODS, COMPONENT_RESOURCES, COMPONENT_REQUESTS)

#: the text of a workload counted through its owner: every family past its info line empty
_NO_LINES = (b"",) * (len(PER_WORKLOAD) - 1)

#: a pod's own values in its line's label order (:data:`POD_ORDER` less the workload's kind,
#: namespace and name, which :meth:`WorkloadCollector._pod_text` writes into the format)
_POD_VALUES = attrgetter("component", "instance", "name", "pod_group", "replica", "uid")


def _tally_rows(
    rows: dict[str, list[Row]],
    pods: Family,
    resources: Family,
    deprecated: Family,
    key: tuple[str, ...],
    tally: Tally,
    values: list[str],
) -> None:
    """The tally's rows under ``key``; the resource names they hold go to ``values``."""
    out = rows[pods.name]
    for state, value in (
        ("desired", tally.desired),
        ("current", tally.current),
        ("ready", tally.ready),
        ("pending", tally.pending),
        ("held", tally.held),
    ):
        if value is not None:
            out.append(((*key, state), float(value)))
    by_state = rows[resources.name]
    for state, totals in (
        ("requested", tally.requested),
        ("pending", tally.pending_requests),
        ("held", tally.held_requests),
    ):
        if totals is not None:
            units = _units(totals)
            values += [r for r, _ in units]
            by_state += [((*key, r, state), v) for r, v in units]
    old = rows[deprecated.name]
    old += [((*key, r, "spec"), v) for r, v in _units(tally.requested)]
    if tally.current_requests is not None:
        units = _units(tally.current_requests)
        values += [r for r, _ in units]
        old += [((*key, r, "pods"), v) for r, v in units]


#: base_units of totals by identity, the totals kept alongside (so an id is not reused while
#: its entry lives): the engine keeps equal totals as one object (engine/summary.py), so a
#: fleet's tallies convert a few distinct totals, each many times
_UNITS: dict[int, tuple[Mapping[str, int], list[tuple[str, float]]]] = {}
_UNITS_KEPT = 4096


def _units(totals: Mapping[str, int]) -> list[tuple[str, float]]:
    """:func:`base_units`, memoised by identity (the result is read only)."""
    found = _UNITS.get(id(totals))
    if found is not None and found[0] is totals:
        return found[1]
    if len(_UNITS) >= _UNITS_KEPT:
        _UNITS.clear()
    out = base_units(totals)
    _UNITS[id(totals)] = (totals, out)
    return out


def base_units(totals: Mapping[str, int]) -> list[tuple[str, float]]:
    """Engine totals in Prometheus base units, by resource name: cpu in cores, memory in bytes,
    extended resources (names with a domain) in units; zeros left out."""
    out: list[tuple[str, float]] = []
    for name, value in totals.items():
        if not value:
            continue
        if name == "cpu":
            out.append((name, value / 1000.0))
        elif name == "memory" or (_extended(name)):
            out.append((name, float(value)))
    out.sort()
    return out


def _extended(name: str) -> bool:
    return "/" in name and not name.startswith("kubernetes.io/")


def _operator_ready(raw: Mapping[str, Any] | None) -> bool:
    """False only when the operator set Ready=False on the Karta (no status: not known → 1)."""
    if raw is None:
        return True
    status = raw.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for c in conditions if isinstance(conditions, list) else ():
        if isinstance(c, Mapping) and c.get("type") == "Ready":
            return c.get("status") != "False"
    return True
