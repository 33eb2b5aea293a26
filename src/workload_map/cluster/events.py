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
own controller chain reaches the workload. Events of objects already deleted cannot be placed
and are left out. The objects the warnings name and their owners are read a level of their
chains at a time (:func:`~workload_map.cluster.ownership.reaching`): a GET each for a few of a
kind, one metadata-only list of the namespace's objects of that kind for more (a busy
namespace's 400 pending pods, each with the scheduler's warning, were 400 GETs, then one per
Job and one per JobSet above them: 1202 requests, 2.6 s, for one ``describe``; now 8), and
each chain is walked once for all the workloads of a ``describe TYPE``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from workload_map.cluster.ownership import OwnerReader, owner_chain, reaching
from workload_map.engine.events import EventsView, events_view
from workload_map.engine.owners import OwnerRef, walk_chain
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

    def __init__(
        self,
        cluster: Cluster,
        root_uid: str,
        pods: Iterable[dict[str, Any]],
        owners: OwnerReader | None = None,
    ) -> None:
        self.cluster = cluster
        self.root_uid = root_uid
        self.known: dict[str, bool] = {}
        pods = list(pods)
        if owners is not None:
            # the namespace's reader, shared by the command's workloads: the Jobs of 500
            # JobSets described together are one list, not a GET each
            owners.expect(pods)
        for pod in pods:
            uid = str(_meta(pod).get("uid") or "")
            if uid:
                self.known[uid] = True
            chain = (
                owner_chain(cluster, pod, stop=(root_uid,))
                if owners is None
                else walk_chain(pod, owners, until=self._at_root)
            )
            if root_uid in chain.uids:
                for link in chain.uids:
                    if link != root_uid:
                        self.known[link] = True

    def _at_root(self, ref: OwnerRef) -> bool:
        return ref.uid is not None and ref.uid == self.root_uid

    def settle(self, refs: Iterable[dict[str, Any]], namespace: str, owners: OwnerReader) -> None:
        """Work out at once whether each object of ``namespace`` these references name
        belongs (:func:`~workload_map.cluster.ownership.reaching`: the objects and their
        owners read by kind, not a GET per object and per owner); :meth:`__call__` then
        answers them without a request. Others (another namespace's, a cluster-scoped
        object's) are left to it."""
        wanted: dict[str, OwnerRef] = {}
        for ref in refs:
            uid = str(ref.get("uid") or "")
            if not uid or uid == self.root_uid or uid in self.known or uid in wanted:
                continue
            api_version, kind, name = ref.get("apiVersion"), ref.get("kind"), ref.get("name")
            if not (isinstance(api_version, str) and isinstance(kind, str)):
                continue
            if isinstance(name, str) and ref.get("namespace") == namespace:
                wanted[uid] = OwnerRef(api_version, kind, name, uid, namespace)
        if not wanted:
            return
        reached = reaching(self.cluster, namespace, wanted.values(), self.root_uid, owners=owners)
        for uid in wanted:
            self.known[uid] = uid in reached

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
        self._owners: dict[str, OwnerReader] = {}

    def owners(self, namespace: str) -> OwnerReader:
        """The reader of ``namespace``'s owner-chain links, shared by the command's workloads
        (a kind listed for one is not listed again for the next)."""
        if namespace not in self._owners:
            self._owners[namespace] = OwnerReader(self.cluster, namespace)
        return self._owners[namespace]

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
    note = "; ".join(dict.fromkeys([*notes, *more])) or None
    if not warnings:  # nothing to place: the pods' chains are not walked (nor owners read)
        return events_view(own, (), gang_pods=gang_pods, note=note)
    owners = reader.owners(namespace) if namespace is not None else None
    members = _Members(cluster, uid, pods or (), owners)
    if namespace is not None and owners is not None:
        # the chains of the warned objects are walked whole: one through the workload reads
        # it as described, not again
        meta = _meta(workload)
        api_version, kind = str(workload.get("apiVersion")), str(workload.get("kind"))
        if not cluster.has_cached(api_version, kind, str(meta.get("name")), namespace):
            cluster.remember(workload)
        members.settle([_involved(e) for e in warnings], namespace, owners)
    theirs = [e for e in warnings if members(_involved(e), namespace)]
    return events_view(own, theirs, gang_pods=gang_pods, note=note)
