"""Where the web view's workloads come from: a live cluster (watches) or a folder of files."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from workload_map.cluster.feed import FeedProblem, InventoryFeed
from workload_map.cluster.inventory import Entry, Inventory
from workload_map.errors import WlmapError
from workload_map.kube.cache import InformerSet
from workload_map.kube.connect_api import open_api
from workload_map.kube.options import ConnectionOptions
from workload_map.model.load import KartaLoadError, parse_documents

__all__ = [
    "FileSource",
    "LiveSource",
    "MultiSource",
    "Source",
    "SourceError",
    "load_documents",
    "new_inventory",
]


def new_inventory() -> Inventory:
    """The inventory of a served cluster: its list and vitals read each workload's phases and
    totals, its workload page the describe view, nothing the gangs and pod places of the
    shared evaluation (which cost a fifth of a cold fleet's evaluation): left out."""
    return Inventory(detail=False)


log = logging.getLogger(__name__)  # a package name in a string counts as its import

_MAX_FILE = 16 * 2**20  # a bigger file is not a workload dump anyone means to serve


class SourceError(WlmapError):
    """A folder or file that cannot be served."""


class Source(Protocol):
    """What the pages read."""

    mode: str  # "cluster" or "files"

    @property
    def inventory(self) -> Inventory: ...

    def clusters(self) -> dict[str, Inventory]:
        """The inventory of each cluster by its context's name ("" for the only one)."""
        ...

    def problems(self) -> dict[str, FeedProblem]: ...

    def events(self, entry: Entry) -> tuple[list[dict[str, Any]], str | None]: ...

    def close(self) -> None: ...


def load_documents(paths: Iterable[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    """Every object of these YAML/JSON files (Lists unwrapped), and a message per bad file."""
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for path in paths:
        try:
            if path.stat().st_size > _MAX_FILE:
                problems.append(f"{path}: larger than {_MAX_FILE // 2**20} MiB, skipped")
                continue
            # the CLI's one splitter: YAML or JSON streams, Lists expanded, timestamps as text
            docs = parse_documents(path.read_text(encoding="utf-8"), source=str(path))
        except KartaLoadError as exc:
            problems.append(str(exc))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            problems.append(f"{path}: {reason}")
            continue
        out.extend(
            doc
            for doc in docs
            if isinstance(doc, dict) and doc.get("kind") and doc.get("apiVersion")
        )
    return out, problems


class FileSource:
    """Every workload in the YAML/JSON files under ``folder``, re-read when a file changes.

    A definition's references (a TrainJob's runtime) read the other objects of the files and
    the objects of the ``refs`` files (``wlmap serve -f DIR --ref FILE``), which are only
    referenced, never shown as workloads; an edited file re-evaluates every workload."""

    mode = "files"

    def __init__(
        self, folder: Path, *, poll_seconds: float = 2.0, refs: Iterable[Path] = ()
    ) -> None:
        if not folder.exists():
            raise SourceError(f"{folder}: no such file or folder")
        self.refs = list(refs)
        for ref in self.refs:
            if not ref.is_file():
                raise SourceError(f"--ref {ref}: no such file")
        self.folder = folder
        self._problems: list[str] = []
        self._stamp = self._mtimes()
        self._inventory = self._load()
        self._stop = threading.Event()
        self._generation = 0
        if poll_seconds > 0:
            threading.Thread(
                target=self._watch, args=(poll_seconds,), name="web-files", daemon=True
            ).start()

    @property
    def inventory(self) -> Inventory:
        return self._inventory

    def _files(self) -> list[Path]:
        if self.folder.is_file():
            return [self.folder]
        return sorted(
            p
            for p in self.folder.rglob("*")
            if p.is_file() and p.suffix.lower() in (".yaml", ".yml", ".json")
        )

    def _mtimes(self) -> tuple[tuple[str, float], ...]:
        out = []
        for p in [*self._files(), *self.refs]:
            try:
                out.append((str(p), p.stat().st_mtime))
            except OSError:
                continue
        return tuple(out)

    def _load(self) -> Inventory:
        objects, self._problems = load_documents(self._files())
        referenced, problems = load_documents(self.refs)
        self._problems += [f"--ref {p}" for p in problems]
        inventory = new_inventory()
        for obj in referenced:  # before the workloads: their first evaluation binds them
            inventory.apply_referenced("ADDED", obj)
        inventory.apply_documents(objects)
        return inventory

    def _watch(self, every: float) -> None:
        while not self._stop.wait(every):
            stamp = self._mtimes()
            if stamp != self._stamp:
                self._stamp = stamp
                fresh = self._load()
                fresh.generation = self._inventory.generation + 1
                self._inventory = fresh

    def clusters(self) -> dict[str, Inventory]:
        return {"": self._inventory}

    def problems(self) -> dict[str, FeedProblem]:
        return {f"file {i + 1}": FeedProblem(p, "error") for i, p in enumerate(self._problems)}

    def events(self, entry: Entry) -> tuple[list[dict[str, Any]], str | None]:
        return [], "files have no events"

    def close(self) -> None:
        self._stop.set()


class LiveSource:
    """The cluster of a kubeconfig, watched (one namespace's permissions are enough with
    ``namespaces``)."""

    mode = "cluster"

    def __init__(
        self,
        connection: ConnectionOptions | str | None = None,
        context: str | None = None,
        *,
        namespaces: tuple[str, ...] = (),
        sync_timeout: float = 30.0,
    ) -> None:
        """``connection``: what ``wlmap serve``'s connection flags selected (or a kubeconfig
        path, with ``context``)."""
        if not isinstance(connection, ConnectionOptions):
            connection = ConnectionOptions(kubeconfig=connection, context=context, timeout=10.0)
        self.api = open_api(connection)
        self.server = self.api.server
        self._informers = InformerSet(self.api.transport())
        self._inventory = new_inventory()
        self.feed = InventoryFeed(
            self._inventory, self.api.transport(), self._informers, namespaces=namespaces
        ).start()
        started = time.monotonic()
        self.feed.wait_synced(sync_timeout)
        log.info("caches synced in %.1f s", time.monotonic() - started)

    @property
    def inventory(self) -> Inventory:
        return self._inventory

    def clusters(self) -> dict[str, Inventory]:
        return {"": self._inventory}

    def problems(self) -> dict[str, FeedProblem]:
        return self.feed.check()

    def events(self, entry: Entry) -> tuple[list[dict[str, Any]], str | None]:
        path = (
            f"/api/v1/namespaces/{entry.namespace}/events"
            if entry.namespace
            else ("/api/v1/events")
        )
        try:
            doc = self.api.request(
                "GET",
                path,
                query=[("fieldSelector", f"involvedObject.uid={entry.uid}"), ("limit", "50")],
                timeout=5.0,
            )
        except WlmapError as exc:
            return [], f"events could not be read: {exc}"
        items = [i for i in doc.get("items") or [] if isinstance(i, dict)]
        items.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
        return items[-20:], None

    def close(self) -> None:
        self.feed.stop()
        self._informers.stop()
        self.api.close()


class MultiSource:
    """Several clusters at once (``wlmap serve --context A --context B``, ``--all-contexts``):
    a :class:`LiveSource` per context, each with its own connection and credentials, opened
    side by side. A context that cannot be served is a problem of its own; the others serve."""

    mode = "cluster"

    def __init__(
        self,
        connections: dict[str, ConnectionOptions],
        *,
        namespaces: tuple[str, ...] = (),
        sync_timeout: float = 30.0,
        opener: Any = None,
    ) -> None:
        """``connections``: the options of each context, by its name. ``opener`` (tests):
        makes a source from (options, namespaces, sync_timeout); default :class:`LiveSource`."""
        open_one = opener or (
            lambda options, ns, timeout: LiveSource(options, namespaces=ns, sync_timeout=timeout)
        )
        self._sources: dict[str, Source] = {}
        self._failed: dict[str, str] = {}
        results: dict[str, Any] = {}

        def connect(name: str, options: ConnectionOptions) -> None:
            try:
                results[name] = open_one(options, namespaces, sync_timeout)
            except WlmapError as exc:
                results[name] = exc

        threads = [
            threading.Thread(target=connect, args=item, name=f"web-{item[0]}", daemon=True)
            for item in connections.items()
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name in connections:  # in the order given
            got = results.get(name)
            if isinstance(got, WlmapError) or got is None:
                self._failed[name] = str(got or "did not connect")
                log.warning("context %s: %s", name, got)
            else:
                self._sources[name] = got
        if not self._sources:
            raise SourceError(
                "no context could be served: "
                + "; ".join(f"{n}: {why}" for n, why in self._failed.items())
            )

    @property
    def inventory(self) -> Inventory:
        """The first cluster's (what a page that shows one cluster reads by default)."""
        return next(iter(self._sources.values())).inventory

    def clusters(self) -> dict[str, Inventory]:
        return {name: source.inventory for name, source in self._sources.items()}

    def source_of(self, cluster: str) -> Source | None:
        return self._sources.get(cluster)

    def problems(self) -> dict[str, FeedProblem]:
        """Each cluster's problems apart, named by its context."""
        out = {
            f"{name}: connection": FeedProblem(why, "error") for name, why in self._failed.items()
        }
        for name, source in self._sources.items():
            out.update({f"{name}: {key}": p for key, p in source.problems().items()})
        return out

    def events(self, entry: Entry) -> tuple[list[dict[str, Any]], str | None]:
        for source in self._sources.values():
            found = source.inventory.find(entry.gvk, entry.namespace, entry.name)
            if found is not None and found.uid == entry.uid:
                return source.events(entry)
        return [], "the workload's cluster is no longer served"

    def close(self) -> None:
        for source in self._sources.values():
            source.close()
