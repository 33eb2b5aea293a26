"""The events ``wlmap describe`` shows for one live workload: its own, and the warnings of the
objects and pods it owns (summarised and ordered by :mod:`workload_map.engine.events`).

Two lists of core ``v1`` Events in the workload's namespace, both narrowed by the API server:

* ``fieldSelector=involvedObject.uid=<workload uid>``: the workload's own events, every type,
  as ``kubectl describe`` asks for them;
* ``fieldSelector=type=Warning``: the namespace's warnings, kept when the object they concern
  belongs to the workload.

Core ``v1`` rather than ``events.k8s.io/v1``: the API server serves the same events through
both, kubectl describe reads core v1, and its field selectors (``involvedObject.uid``,
``type``) are the ones every server version supports. The warnings are one list per namespace
rather than one per owned object: a gang of hundreds of pods would otherwise cost hundreds of
requests, and the objects that matter most (a Job that cannot create its pods) have no pod
through which they could be found. A warning belongs to the workload when the object it
concerns is one of the workload's pods, or is on the controller chain of one of them, or its
own controller chain reaches the workload (read through the :class:`Cluster`'s owner cache,
once per object). Events of objects already deleted cannot be placed and are left out.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from workload_map.cluster.ownership import owner_chain
from workload_map.engine.events import EventsView, events_view
from workload_map.errors import WlmapError
from workload_map.kube.client import Cluster

__all__ = ["EventReader", "workload_events"]

#: at most this many events are read per list (the newest are what describe shows)
LIST_LIMIT = 500


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _involved(event: dict[str, Any]) -> dict[str, Any]:
    ref = event.get("involvedObject")
    return ref if isinstance(ref, dict) else {}


class _Members:
    """Whether an object (by its event's reference) belongs to the workload; each object's
    answer is worked out once."""

    def __init__(self, cluster: Cluster, root_uid: str, pods: Iterable[dict[str, Any]]) -> None:
        self.cluster = cluster
        self.root_uid = root_uid
        self.known: dict[str, bool] = {}
        for pod in pods:
            uid = str(_meta(pod).get("uid") or "")
            if uid:
                self.known[uid] = True
            chain = owner_chain(cluster, pod, stop=(root_uid,))
            if root_uid in chain.uids:
                for link in chain.uids:
                    if link != root_uid:
                        self.known[link] = True

    def __call__(self, ref: dict[str, Any], namespace: str | None) -> bool:
        uid = str(ref.get("uid") or "")
        if not uid or uid == self.root_uid:
            return False
        if uid not in self.known:
            self.known[uid] = self._reaches_root(ref, uid, namespace)
        return self.known[uid]

    def _reaches_root(self, ref: dict[str, Any], uid: str, namespace: str | None) -> bool:
        api_version, kind, name = ref.get("apiVersion"), ref.get("kind"), ref.get("name")
        if not (isinstance(api_version, str) and isinstance(kind, str) and isinstance(name, str)):
            return False
        obj = self.cluster.get_cached(api_version, kind, name, ref.get("namespace") or namespace)
        if obj is None or _meta(obj).get("uid") != uid:
            return False  # gone, unreadable, or a new object of the same name
        chain = owner_chain(self.cluster, obj, stop=(self.root_uid,))
        return self.root_uid in chain.uids


class EventReader:
    """The event lists of one command, each read once.

    Per workload it asks the server for that workload's events and, once per namespace, for
    the namespace's warnings (both narrowed by field selectors). ``whole_namespaces`` (``describe
    TYPE``, many workloads of a namespace) reads each namespace's events once, every type, and
    picks the workloads' own from it: one request per namespace instead of one per workload.
    A list the server refuses becomes a note.
    """

    def __init__(self, cluster: Cluster, *, whole_namespaces: bool = False) -> None:
        self.cluster = cluster
        self.whole_namespaces = whole_namespaces
        self.res = cluster.resource_for("v1", "Event")
        self._lists: dict[tuple[str | None, str], tuple[list[dict[str, Any]], list[str]]] = {}

    def _listed(
        self, namespace: str | None, selector: str
    ) -> tuple[list[dict[str, Any]], list[str]]:
        key = (namespace, selector)
        if key not in self._lists:
            out: list[dict[str, Any]] = []
            notes: list[str] = []
            assert self.res is not None
            try:
                for event in self.cluster.iter_list(
                    self.res, namespace, field_selector=selector or None
                ):
                    out.append(event)
                    if len(out) >= LIST_LIMIT:
                        what = f" of {selector}" if selector else ""
                        notes.append(f"only the first {LIST_LIMIT} events{what} were read")
                        break
            except WlmapError as exc:
                notes.append(f"events could not be read: {exc}")
            self._lists[key] = (out, notes)
        return self._lists[key]

    def own(self, namespace: str | None, uid: str) -> tuple[list[dict[str, Any]], list[str]]:
        if self.whole_namespaces:
            events, notes = self._listed(namespace, "")
            return [e for e in events if _involved(e).get("uid") == uid], notes
        return self._listed(namespace, f"involvedObject.uid={uid}")

    def warnings(self, namespace: str | None) -> tuple[list[dict[str, Any]], list[str]]:
        if self.whole_namespaces:
            events, notes = self._listed(namespace, "")
            return [e for e in events if e.get("type") == "Warning"], notes
        return self._listed(namespace, "type=Warning")


def workload_events(
    cluster: Cluster,
    workload: dict[str, Any],
    pods: Iterable[dict[str, Any]] | None,
    *,
    gang_pods: Collection[str] = (),
    reader: EventReader | None = None,
) -> EventsView:
    """The events section of ``workload``'s describe view (see the module doc).

    ``pods``: the workload's pods (None when they could not be read); ``gang_pods``: the names
    of those in its gangs; ``reader``: the command's shared :class:`EventReader` (default: one
    for this workload). A list the server refuses becomes the view's note, not an error.
    """
    reader = reader or EventReader(cluster)
    uid = str(_meta(workload).get("uid") or "")
    namespace = _meta(workload).get("namespace")
    namespace = namespace if isinstance(namespace, str) and namespace else None
    if reader.res is None or not uid:
        return events_view((), (), note="this cluster serves no events")
    own, notes = reader.own(namespace, uid)
    warnings, more = reader.warnings(namespace)
    members = _Members(cluster, uid, pods or ())
    theirs = [e for e in warnings if members(_involved(e), namespace)]
    note = "; ".join(dict.fromkeys([*notes, *more])) or None
    return events_view(own, theirs, gang_pods=gang_pods, note=note)
