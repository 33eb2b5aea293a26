"""The one reader of Kubernetes objects from files or stdin: YAML or JSON, documents or streams.

Every command that takes object files (``describe -f``/``--pods``/``--definition``, ``verify``,
``validate``'s text) reads them here. :func:`read_manifests` yields :class:`Manifest` values: the
object, its GVK worked out once, and where it came from (file and document), so later steps
never re-derive a kind nor re-build a message. Every failure is a :class:`UsageError` (exit 2)
naming the file, and the document or YAML line, so a user never sees a parser traceback.
"""

from __future__ import annotations

from typing import IO, Any

import msgspec

from workload_map.catalog.definitions import gvk_text
from workload_map.cli.exits import UsageError
from workload_map.engine.owners import controller_ref
from workload_map.kube import paths
from workload_map.model import GVK
from workload_map.model.load import KartaLoadError, parse_documents

__all__ = [
    "Manifest",
    "Source",
    "check_object",
    "describe_object",
    "read_manifests",
    "read_single",
    "read_text",
    "source_label",
]


class Source(msgspec.Struct, frozen=True):
    """Where an object was read: the file as messages name it and its 1-based document place
    (``List`` items and stream documents counted alike), out of ``count``."""

    file: str
    document: int = 1
    count: int = 1

    def __str__(self) -> str:
        return self.file if self.count <= 1 else f"{self.file} (document {self.document})"


class Manifest(msgspec.Struct, frozen=True):
    """One object of a file with its GVK (None without string apiVersion and kind)."""

    obj: dict[str, Any]
    gvk: GVK | None
    source: Source

    @classmethod
    def of(cls, obj: dict[str, Any], source: Source) -> Manifest:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        typed = isinstance(api_version, str) and isinstance(kind, str) and bool(kind)
        gvk = GVK.from_api_version(str(api_version), str(kind)) if typed else None
        return cls(obj, gvk, source)

    @property
    def name(self) -> str | None:
        meta = self.obj.get("metadata")
        return str(meta.get("name")) if isinstance(meta, dict) and meta.get("name") else None

    @property
    def label(self) -> str:
        """``Kind/name`` for messages (``?`` for what is missing)."""
        return describe_object(self.obj)

    @property
    def gvk_text(self) -> str:
        """``group/version, Kind=kind`` for messages (``?`` without apiVersion and kind)."""

        return gvk_text(self.gvk) if self.gvk is not None else "?"

    @property
    def controlled(self) -> bool:
        """Whether another object controls it (a part of a workload, not a workload): the
        engine's one owner rule (only ``controller: true`` names a controller)."""
        # the engine loads here, when describe -f picks its workload, not for every reader

        return controller_ref(self.obj) is not None

    def checked(self) -> Manifest:
        """This manifest when its object is usable (see :func:`check_object`); errors name the
        file, and the document when the file holds several."""
        check_object(self.obj, str(self.source))
        return self


def read_text(path: str, stdin: IO[str] | None) -> str:
    """The text of ``path`` (``-`` = stdin, ``*.gz`` decompressed); unreadable ⇒
    :class:`UsageError`."""
    if path == "-":
        if stdin is None:
            raise UsageError("cannot read stdin: there is no standard input")
        try:
            return stdin.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read stdin: {exc}") from exc
    try:
        if path.endswith(".gz"):
            import gzip

            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read()
        with open(paths.join(path), encoding="utf-8") as fh:  # the file Path(path) names
            return fh.read()
    except FileNotFoundError as exc:
        raise UsageError(f"cannot read {path}: no such file") from exc
    except IsADirectoryError as exc:
        raise UsageError(f"cannot read {path}: it is a directory") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read {path}: not UTF-8 text ({exc.reason})") from exc
    except (OSError, EOFError) as exc:  # EOFError: a truncated .gz
        reason = getattr(exc, "strerror", None) or exc
        raise UsageError(f"cannot read {path}: {reason}") from exc


def source_label(path: str) -> str:
    """How messages name a file argument (``-`` is stdin)."""
    return "stdin" if path == "-" else path


def _documents(text: str, path: str) -> list[Any]:
    """The file's documents, parsed as Karta files are (model.load: YAML streams, JSON values
    one after another, ``List`` objects expanded, timestamps kept as text)."""

    label = source_label(path)
    try:
        return parse_documents(text)
    except KartaLoadError as exc:
        if exc.detail is None:
            raise UsageError(f"{label}: {exc.message}") from exc
        where = f" (line {exc.line}, column {exc.column})" if exc.line is not None else ""
        raise UsageError(f"{label}: not valid YAML or JSON{where}: {exc.detail}") from exc


def _expand_lists(docs: list[Any]) -> list[Any]:
    """Top-level YAML sequences flattened too (``List`` objects the parser already expanded;
    one whose ``items`` is null holds nothing)."""
    out: list[Any] = []
    for doc in docs:
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc:
            out.extend(doc.get("items") or [])
        elif isinstance(doc, list):
            out.extend(doc)
        else:
            out.append(doc)
    return out


def read_manifests(path: str, stdin: IO[str] | None) -> list[Manifest]:
    """Every object of a file with its GVK and place: streams and ``List`` kinds flattened;
    a document that is not an object is refused, naming its place."""
    docs = _expand_lists(_documents(read_text(path, stdin), path))
    label = source_label(path)
    out = []
    for index, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise UsageError(
                f"{label}: document {index + 1} is {_what(doc)}, not a Kubernetes object"
            )
        out.append(Manifest.of(doc, Source(label, index + 1, len(docs))))
    return out


def read_single(path: str, stdin: IO[str] | None) -> Manifest:
    """Exactly one object with apiVersion and kind (empty documents are skipped)."""
    docs = _documents(read_text(path, stdin), path)
    label = source_label(path)
    if not docs:
        raise UsageError(f"{label}: no object found (the file is empty)")
    if len(docs) > 1:
        raise UsageError(
            f"{label}: holds {len(docs)} documents ({_summary(docs)}); expected exactly one",
        )
    doc = docs[0]
    if not isinstance(doc, dict):
        raise UsageError(f"{label}: expected a Kubernetes object, got {_what(doc)}")
    return Manifest.of(doc, Source(label)).checked()


def check_object(doc: dict[str, Any], label: str) -> dict[str, Any]:
    """``doc`` when it is a usable object: string apiVersion and kind, mapping sections."""
    missing = [k for k in ("apiVersion", "kind") if not doc.get(k)]
    if missing:
        raise UsageError(f"{label}: the object has no {' and no '.join(missing)}")
    for key in ("apiVersion", "kind"):
        if not isinstance(doc[key], str):
            raise UsageError(f"{label}: {key} must be a string, got {type(doc[key]).__name__}")
    for key in ("metadata", "spec", "status"):
        if key in doc and doc[key] is not None and not isinstance(doc[key], dict):
            raise UsageError(
                f"{label}: {key} must be a mapping, got {type(doc[key]).__name__} "
                f"({str(doc[key])[:40]!r})"
            )
    return doc


def _what(value: Any) -> str:
    """A YAML value's kind in words, with its article ("a number", "a list")."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    for kind, words in ((str, "a string"), (list, "a list"), (dict, "a mapping")):
        if isinstance(value, kind):
            return words
    return f"a {type(value).__name__}"


def describe_object(doc: Any) -> str:
    """``Kind/name`` of a document, for messages (``?`` for what is missing)."""
    if not isinstance(doc, dict):
        return type(doc).__name__
    meta = doc.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name") or meta.get("generateName") or "?"
    return f"{doc.get('kind') or '?'}/{name}"


def _summary(docs: list[Any], limit: int = 4) -> str:
    names = [describe_object(doc) for doc in docs[:limit]]
    more = f", +{len(docs) - limit} more" if len(docs) > limit else ""
    return ", ".join(names) + more
