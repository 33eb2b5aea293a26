"""Reading Kubernetes objects from files or stdin: YAML or JSON, single documents or streams.

Every failure is a :class:`UsageError` (exit 2) naming the file, and for YAML the line, so a user
never sees a parser traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from workload_map.cli.exits import UsageError

__all__ = [
    "check_object",
    "describe_object",
    "read_objects",
    "read_single_object",
    "read_text",
    "source_label",
]


def read_text(path: str, stdin: IO[str]) -> str:
    """The text of ``path`` (``-`` = stdin); unreadable ⇒ :class:`UsageError`."""
    if path == "-":
        try:
            return stdin.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read stdin: {exc}") from exc
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"cannot read {path}: no such file") from exc
    except IsADirectoryError as exc:
        raise UsageError(f"cannot read {path}: it is a directory") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read {path}: not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def source_label(path: str) -> str:
    """How messages name a file argument (``-`` is stdin)."""
    return "stdin" if path == "-" else path


def _documents(text: str, path: str) -> list[Any]:
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        docs = _json_stream(stripped)
        if docs is not None:
            return docs
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UsageError(f"{source_label(path)}: not valid YAML or JSON{where}: {problem}") from exc


def _json_stream(text: str) -> list[Any] | None:
    decoder = json.JSONDecoder()
    docs, pos = [], 0
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except ValueError:
            return None
        docs.append(value)
        pos = end
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
    return docs


def _expand_lists(docs: list[Any]) -> list[Any]:
    out: list[Any] = []
    for doc in docs:
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc:
            out.extend(doc.get("items") or [])
        elif isinstance(doc, list):
            out.extend(doc)
        else:
            out.append(doc)
    return out


def read_objects(path: str, stdin: IO[str]) -> list[dict[str, Any]]:
    """Every object of a file: streams and ``List`` kinds flattened; non-objects rejected."""
    docs = _expand_lists(_documents(read_text(path, stdin), path))
    for index, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise UsageError(
                f"{source_label(path)}: document {index + 1} is {_what(doc)}, "
                "not a Kubernetes object"
            )
    return docs


def read_single_object(path: str, stdin: IO[str]) -> dict[str, Any]:
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
    return check_object(doc, label)


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
