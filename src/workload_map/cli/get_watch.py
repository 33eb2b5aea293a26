"""``wlmap get -w`` / ``--watch-only``: follow one type (or one workload) through the API's watch.

Two watches, one on the workloads and one on the namespace's pods (kept in a cache), so a pod
turning Ready updates its workload's PODS even when the operator writes no status. Each event
re-reads the workload through its definition, and the row is printed again only when what it
shows changed, like kubectl. Table columns keep the
widths of the first screen so the rows stay aligned; JSON/YAML print one document per change.
Runs until interrupted (Ctrl-C exits 130, as a shell reports a SIGINT).
"""

from __future__ import annotations

import argparse
import queue
import threading
from typing import TYPE_CHECKING, Any

from workload_map.cli.exits import OK
from workload_map.cli.render import dump_document, visible_len
from workload_map.cli.workload_view import view_name
from workload_map.cluster.ownership import claims, owner_chain
from workload_map.kube.errors import ApiError
from workload_map.kube.watch import Watch, WatchEvent, WatchExpired, list_version, open_watch

if TYPE_CHECKING:
    from workload_map.cli.context import Context
    from workload_map.cli.get_rows import Row
    from workload_map.cli.targets import Target
    from workload_map.cluster.ownership import Chain
    from workload_map.kube.client import Cluster

__all__ = ["follow"]

# how long the command's end waits for each stopped pump (an aborted read returns at once)
_STOP_SECONDS = 10.0


class _Screen:
    """Prints rows as they change, aligned to the first screen's column widths."""

    def __init__(self, ctx: Context, opts: Any, hooks: Any, initial: list[Row]) -> None:
        self.ctx = ctx
        self.opts = opts
        self.hooks = hooks
        self.last: dict[str, str] = {}
        self.widths: list[int] = []
        kept = [r for r in initial if hooks.keep(r, opts)]
        self.header_done = bool(kept) or opts.no_headers  # the first screen printed one
        table = self.tabular
        if table:
            lines = [] if opts.no_headers else [hooks.header(opts)]
            lines += [hooks.cells(r, ctx, opts) for r in kept]
            self._grow(lines)
        for row in kept:
            self.last[row.key] = self._text(row)

    @property
    def tabular(self) -> bool:
        return self.opts.spec.kind in ("table", "wide", "custom-columns")

    def _grow(self, lines: list[list[str]]) -> None:

        for cells in lines:
            for i, cell in enumerate(cells):
                if i >= len(self.widths):
                    self.widths.append(0)
                self.widths[i] = max(self.widths[i], visible_len(cell))

    def _line(self, cells: list[str]) -> str:

        gap = 3
        out = []
        for i, cell in enumerate(cells):
            last = i == len(cells) - 1
            width = self.widths[i] if i < len(self.widths) else 0
            if self.opts.spec.kind == "custom-columns":
                width = max(width + gap, 6) - gap
            out.append(cell if last else cell + " " * max(width - visible_len(cell), 0))
        return (" " * gap).join(out).rstrip()

    def _text(self, row: Row) -> str:

        kind = self.opts.spec.kind
        if self.tabular:
            return "\t".join(self.hooks.cells(row, self.ctx, self.opts))
        if kind in ("json", "yaml"):
            return dump_document(row.view, kind)
        if kind == "name":
            return view_name(row.view) + "\n"
        return str(self.opts.spec.render_object(row.view))

    def show(self, row: Row) -> None:
        if not self.hooks.keep(row, self.opts):
            return
        text = self._text(row)
        if self.last.get(row.key) == text:
            return
        self.last[row.key] = text
        out = self.ctx.stdout
        if self.tabular:
            cells = self.hooks.cells(row, self.ctx, self.opts)
            if not self.header_done:
                header = self.hooks.header(self.opts)
                self._grow([header, cells])
                out.write(self._line(header) + "\n")
                self.header_done = True
            self._grow([cells])
            out.write(self._line(cells) + "\n")
        elif self.opts.spec.kind == "yaml":
            out.write("---\n" + text)
        else:
            out.write(text)
        out.flush()


class _Follower:
    """Workload and pod events merged in one thread: each stream is read by its own thread
    into a queue, so a pod turning Ready refreshes its workload's row like a status change."""

    def __init__(
        self,
        ctx: Context,
        cluster: Cluster,
        target: Target,
        ns: str | None,
        label: str,
        hooks: Any,
        screen: _Screen,
    ) -> None:
        self.ctx = ctx
        self.cluster = cluster
        self.target = target
        self.ns = ns
        self.label = label
        self.hooks = hooks
        self.screen = screen
        self.objs: dict[str, dict[str, Any]] = {}
        self.pods: dict[str, dict[str, Any]] | None = None  # None: pods are not watched
        self.chains: dict[str, Chain] = {}
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        # the open watches, so that the command's end stops the pump threads reading them
        self._watches: list[Watch] = []
        self._stopped = False
        self._lock = threading.Lock()

    # -- pods ----------------------------------------------------------------------------------
    def _chain(self, pod: dict[str, Any]) -> Chain:
        """The pod's controller chain (stops at a workload we follow)."""

        return owner_chain(self.cluster, pod, stop=self.objs)

    def _claimants(self, pod: dict[str, Any], chain: Chain) -> list[dict[str, Any]]:
        """The followed workloads the pod belongs to (``get``'s rule: cluster.ownership.claims)."""

        return [w for w in self.objs.values() if claims(w, pod, chain)]

    def pods_of(self, uid: str) -> list[dict[str, Any]] | None:
        if self.pods is None:
            return None  # the row then finds its pods by itself
        workload = self.objs.get(uid)
        if workload is None:
            return [p for key, p in self.pods.items() if uid in self.chains[key].uids]

        return [p for key, p in self.pods.items() if claims(workload, p, self.chains[key])]

    def start_pods(self, selector_ns: str | None) -> str | None:
        """List the pods once (the cache), return the version to watch from; None if denied."""

        res = self.cluster.resource_for("v1", "Pod")
        if res is None:
            return None
        try:
            version = list_version(self.cluster, res, selector_ns)
            pods = {
                str((p.get("metadata") or {}).get("uid")): p
                for p in self.cluster.iter_list(res, selector_ns)
            }
        except ApiError as exc:
            self.ctx.warn(f"{exc}; pod changes are not followed, only the workloads' own")
            return None
        self.pods = pods
        self.chains = {uid: self._chain(p) for uid, p in pods.items()}
        return version

    # -- the loop ------------------------------------------------------------------------------
    def pump(self, kind: str, res: Any, ns: str | None, version: str, **selectors: Any) -> None:

        try:
            while True:
                one = self._open_watch(res, ns, version, selectors)
                try:
                    for event in one.events():
                        self.events.put((kind, event))
                    return
                except WatchExpired:
                    if self._stopped:
                        return
                    # the version is gone: take the current one and re-read what is there
                    version = list_version(self.cluster, res, ns, **selectors)
                    self.relist(kind, res, ns, selectors)
        except BaseException as exc:  # the main thread re-raises it (Ctrl-C in tests too)
            self.events.put(("error", exc))

    def _open_watch(
        self, res: Any, ns: str | None, version: str, selectors: dict[str, Any]
    ) -> Watch:
        one = open_watch(
            self.cluster,
            res,
            ns,
            resource_version=version,
            label_selector=selectors.get("label_selector"),
            field_selector=selectors.get("field_selector"),
        )
        with self._lock:
            self._watches.append(one)
            stopped = self._stopped
        if stopped:  # the command ended before this pump got here: no stream opens
            one.stop()
        return one

    def stop(self) -> None:
        """End every watch: each pump's blocked read returns and its thread ends."""
        with self._lock:
            self._stopped = True
            watches = list(self._watches)
        for one in watches:
            one.stop()

    def relist(self, kind: str, res: Any, ns: str | None, selectors: dict[str, Any]) -> None:

        wanted = str(selectors.get("field_selector") or "").removeprefix("metadata.name=")
        for obj in self.cluster.iter_list(res, ns, label_selector=selectors.get("label_selector")):
            if wanted and (obj.get("metadata") or {}).get("name") != wanted:
                continue
            self.events.put((kind, WatchEvent("MODIFIED", obj)))

    def refresh(self, obj: dict[str, Any]) -> None:
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        row = self.hooks.row(
            self.ctx, self.cluster, self.target, obj, self.label, self.pods_of(uid)
        )
        if row is not None:
            self.screen.show(row)

    def handle(self, kind: str, event: Any) -> None:
        obj = event.object
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        if kind == "workload":
            if event.type == "DELETED":
                self.objs.pop(uid, None)
            else:
                self.objs[uid] = obj
            self.refresh(obj)
            return
        assert self.pods is not None
        if event.type == "DELETED":
            self.pods.pop(uid, None)
            chain = self.chains.pop(uid, None)
        else:
            self.pods[uid] = obj
            chain = self.chains[uid] = self._chain(obj)
        for owner in self._claimants(obj, chain) if chain is not None else ():
            self.refresh(owner)

    def run(self) -> None:
        while True:
            try:
                kind, event = self.events.get(timeout=0.5)
            except queue.Empty:
                continue  # (a wait with a timeout keeps Ctrl-C working)
            if kind == "error":
                raise event
            self.handle(kind, event)
            self.ctx.flush_warnings()


def follow(
    ctx: Context,
    cluster: Cluster,
    target: Target,
    namespace: str | None,
    name: str | None,
    args: argparse.Namespace,
    opts: Any,
    initial: list[Row],
    hooks: Any,
    version: str,
) -> int:
    """Print changes from ``version`` on until interrupted."""
    res = target.resource
    ns = namespace if res.namespaced else None
    if name is not None:
        ns = cluster.namespace if res.namespaced else None
    field_selector = f"metadata.name={name}" if name else None
    screen = _Screen(ctx, opts, hooks, initial)
    label = initial[0].type_label if initial else res.kind
    follower = _Follower(ctx, cluster, target, ns, label, hooks, screen)
    for row in initial:
        if row.obj is not None:
            follower.objs[row.key] = row.obj
    pod_version = follower.start_pods(ns if res.namespaced else None)
    for obj in list(follower.objs.values()):
        follower.refresh(obj)  # pods that changed between the first screen and the pod cache
    threads = [
        threading.Thread(
            target=follower.pump,
            args=("workload", res, ns, version),
            kwargs={"label_selector": args.selector, "field_selector": field_selector},
            name="wlmap-get-watch-workloads",
            daemon=True,
        )
    ]
    pods_res = cluster.resource_for("v1", "Pod")
    if pod_version is not None and pods_res is not None:
        threads.append(
            threading.Thread(
                target=follower.pump,
                args=("pod", pods_res, ns if res.namespaced else None, pod_version),
                name="wlmap-get-watch-pods",
                daemon=True,
            )
        )
    for thread in threads:
        thread.start()
    try:
        follower.run()
    finally:
        # in-process callers (tests, embedders) outlive the command: leave no pump running
        follower.stop()
        for thread in threads:
            thread.join(timeout=_STOP_SECONDS)
    return OK
