"""Turning whatever a user has into typed Karta objects, and back.

Accepted inputs: YAML or JSON text, a path, a dict, a multi-document stream, a ``List``, a list of
dicts, and the predecessor ``optimization.nvidia.com/v1alpha1`` ``ResourceInterface`` (converted
with a :class:`DeprecationWarning`). Every problem (unknown field, wrong type, missing required
field) is collected and raised together as one :class:`KartaLoadError` naming the file and the
JSON path of each field, so an author fixes them all in one pass.

:func:`load_karta_leniently` is the validator's entry: it never stops at a schema problem. An
unknown field is reported and skipped, a wrong-typed optional field is reported and treated as
absent, and a missing or unusable required field gets a neutral placeholder (``""``, ``()``, an
empty object) so that list indexes, and therefore finding paths, stay those of the document.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, field
from dataclasses import fields as dataclass_fields
from typing import TYPE_CHECKING, Any

from workload_map.errors import WlmapError
from workload_map.model.shape import (
    BOOL,
    FREE,
    INT,
    LENIENT_REQUIRED,
    SHAPES,
    STR,
    STRMAP,
    ListOf,
)
from workload_map.model.types import API_VERSION, GROUP, KIND, Karta, KartaSpec, KartaStatus
from workload_map.model.views import View, json_type
from workload_map.yaml_import import import_yaml

if TYPE_CHECKING:
    from pathlib import Path

    from workload_map.model.findings import FindingCode

__all__ = [
    "LEGACY_API_VERSION",
    "LEGACY_KIND",
    "KartaLoadError",
    "LenientLoad",
    "LoadProblem",
    "dump_karta",
    "karta_from_document",
    "load_karta",
    "load_karta_leniently",
    "load_kartas",
    "parse_documents",
    "read_karta_document",
]

LEGACY_API_VERSION = "optimization.nvidia.com/v1alpha1"
LEGACY_KIND = "ResourceInterface"


class LoadProblem(View):
    """One reason a document is not a Karta: a JSON-style field path, a message and a code.

    Codes: ``unknown-field``, ``wrong-type``, ``missing-field``, ``unsupported-version``,
    ``not-a-karta``.
    """

    path: str
    message: str
    code: FindingCode = field(default_factory=lambda: _codes().SCHEMA)  # no enum at import

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def _codes() -> type[FindingCode]:
    """The finding codes, for a problem being reported: a definition that loads cleanly (every
    command's) does not build their enum class (62 members, ~6M instructions, docs/cli.md)."""
    from workload_map.model.findings import FindingCode

    return FindingCode


class KartaLoadError(WlmapError):
    """The input cannot be read or decoded as a Karta (every problem is in ``problems``)."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        problems: Iterable[LoadProblem] = (),
        line: int | None = None,
        column: int | None = None,
        detail: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.problems = tuple(problems)
        #: for text that does not parse: where (1-based) and what the parser said
        self.line, self.column, self.detail = line, column, detail
        super().__init__(str(self))

    def __str__(self) -> str:
        head = f"{self.source}: {self.message}" if self.source else self.message
        if not self.problems:
            return head
        if len(self.problems) == 1:
            return f"{head}: {self.problems[0]}"
        return head + ":\n" + "\n".join(f"  {p}" for p in self.problems)


_LOADER: Any = None


def _text_timestamp_loader() -> Any:
    """SafeLoader (libyaml's when built in) that keeps timestamps as text: Karta and metav1
    fields are strings, as in the JSON an API server sends. Built on the first YAML document,
    so JSON input and commands that read none do not import PyYAML."""
    global _LOADER
    if _LOADER is None:
        yaml = import_yaml()
        base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        loader: Any = type("TextTimestampLoader", (base,), {"__module__": __name__})
        loader.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        _LOADER = loader
    return _LOADER


def __getattr__(name: str) -> Any:
    if name == "TextTimestampLoader":  # the loader class by its old name, built on first use
        return _text_timestamp_loader()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _looks_like_path(text: str) -> bool:
    if "\n" in text or not text.strip():
        return False
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        return False
    if stripped.endswith((".yaml", ".yml", ".json")):
        return True
    try:
        return _path_class()(stripped).is_file()
    except (OSError, ValueError):  # too long for a file name, or NUL inside
        return False


def _path_class() -> type[Path]:
    """``pathlib.Path``, imported on first use: a command loads definitions from data, and
    pathlib (with what it imports) is millions of instructions of its start-up."""
    from pathlib import Path

    return Path


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KartaLoadError("no such file", source=str(path)) from None
    except IsADirectoryError:
        raise KartaLoadError("is a directory, not a file", source=str(path)) from None
    except UnicodeDecodeError as exc:
        raise KartaLoadError(f"not UTF-8 text ({exc.reason})", source=str(path)) from None
    except OSError as exc:
        raise KartaLoadError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None


#: compiled (and kept) by ``re`` when YAML text is parsed, not at import: a live command reads
#: JSON only
_SURROGATE_ESCAPE = r"\\u[dD][89abAB]"


def _join_surrogates(value: Any) -> Any:
    """YAML decodes ``\\ud83d\\ude00`` as two lone surrogates; JSON joins them. Join them."""
    if isinstance(value, str):
        try:
            return value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            return value
    if isinstance(value, list):
        return [_join_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_join_surrogates(k): _join_surrogates(v) for k, v in value.items()}
    return value


def parse_documents(text: str, *, source: str | None = None) -> list[Any]:
    """Every non-empty YAML/JSON document of ``text`` (a YAML stream, or JSON values one after
    another as ``jq -c`` prints them), ``List`` objects expanded."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            value = json.loads(text)
        except RecursionError:
            raise KartaLoadError(
                "not usable: the document nests too deeply", source=source
            ) from None
        except ValueError:
            stream = _json_stream(stripped, source)  # else flow-style YAML: YAML decides
            if stream is not None:
                return _expand_lists(stream)
        else:
            return _expand_lists(value if isinstance(value, list) else [value])
    yaml = import_yaml()
    try:
        docs = [d for d in yaml.load_all(text, Loader=_text_timestamp_loader()) if d is not None]
        if re.search(_SURROGATE_ESCAPE, text):
            docs = [_join_surrogates(d) for d in docs]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = exc.problem or str(exc)
        if exc.context:
            what = f"{what} ({exc.context})"
        raise KartaLoadError(
            f"not valid YAML or JSON: {where}{what}",
            source=source,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
            detail=exc.problem or str(exc),
        ) from None
    except yaml.YAMLError as exc:
        raise KartaLoadError(f"not valid YAML or JSON: {exc}", source=source) from None
    except RecursionError:
        raise KartaLoadError("not usable: the document nests too deeply", source=source) from None
    return _expand_lists(docs)


def _json_stream(text: str, source: str | None) -> list[Any] | None:
    """JSON values one after another (whitespace between them), or None when ``text`` is not
    that (it may then still be YAML)."""
    decoder = json.JSONDecoder()
    docs, pos = [], 0
    try:
        while pos < len(text):
            value, pos = decoder.raw_decode(text, pos)
            docs.append(value)
            while pos < len(text) and text[pos] in " \t\r\n":
                pos += 1
    except RecursionError:
        raise KartaLoadError("not usable: the document nests too deeply", source=source) from None
    except ValueError:
        return None
    return docs


def _expand_lists(docs: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for doc in docs:
        kind = doc.get("kind") if isinstance(doc, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            out.extend(item for item in doc["items"] if item is not None)
        else:
            out.append(doc)
    return out


def _documents(src: Any) -> tuple[list[Any], str | None]:
    # a Path is an os.PathLike: only then is pathlib needed (and imported already)
    if isinstance(src, os.PathLike) and isinstance(src, _path_class()):
        return parse_documents(_read_text(src), source=str(src)), str(src)
    if isinstance(src, bytes):
        try:
            src = src.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise KartaLoadError(f"not UTF-8 text ({exc.reason})") from None
    if isinstance(src, str):
        if _looks_like_path(src):
            path = _path_class()(src.strip())
            return parse_documents(_read_text(path), source=str(path)), str(path)
        return parse_documents(src), None
    if isinstance(src, Mapping):
        return _expand_lists([dict(src)]), None
    if isinstance(src, list | tuple):
        return _expand_lists(src), None
    raise KartaLoadError(
        f"cannot load a Karta from a {type(src).__name__}; "
        "give YAML/JSON text, a path, a dict or a list of dicts"
    )


def load_kartas(src: Any, *, source: str | None = None) -> list[Karta]:
    """Every Karta in ``src`` (text, path, dict, list or ``List``), in order."""
    if isinstance(src, Karta):
        return [src]
    docs, origin = _documents(src)
    where = source or origin
    kartas: list[Karta] = []
    for index, doc in enumerate(docs):
        doc_where = where
        if len(docs) > 1:
            doc_where = f"{where or 'input'} (document {index + 1})"
        kartas.append(_to_karta(doc, doc_where))
    return kartas


def load_karta(src: Any, *, source: str | None = None) -> Karta:
    """Exactly one Karta from ``src``; zero or several documents is an error."""
    if isinstance(src, Karta):
        return src
    doc, where = _single_document(src, source, " (use load_kartas)")
    return _to_karta(doc, where)


def _single_document(src: Any, source: str | None, hint: str = "") -> tuple[Any, str | None]:
    """The one document of ``src`` and where it came from; zero or several is an error."""
    docs, origin = _documents(src)
    where = source or origin
    if not docs:
        raise KartaLoadError("contains no document", source=where)
    if len(docs) > 1:
        raise KartaLoadError(
            f"contains {len(docs)} documents; expected exactly one Karta{hint}", source=where
        )
    return docs[0], where


def karta_from_document(doc: Any, *, source: str | None = None) -> Karta:
    """One already-parsed document (a dict) as a Karta; anything else is a KartaLoadError."""
    return _to_karta(doc, source)


def _preview(value: Any) -> str:
    text = repr(value) if not isinstance(value, bool) else str(value).lower()
    return text if len(text) <= 40 else text[:37] + "..."


class LenientLoad(View):
    """What :func:`load_karta_leniently` could read: the Karta, every problem, the document.

    ``karta`` is None only when the document is not a Karta at all (another kind, no
    ``spec.structureDefinition``); ``problems`` then holds the reason.
    """

    karta: Karta | None
    problems: tuple[LoadProblem, ...]
    document: dict[str, Any]
    source: str | None = None


def load_karta_leniently(src: Any, *, source: str | None = None) -> LenientLoad:
    """One Karta from ``src`` with every schema problem collected instead of raised.

    Raises :class:`KartaLoadError` only when there is nothing to check: unreadable or
    unparseable input, not exactly one document, or a document that is not an object.
    """
    if isinstance(src, Karta):
        return LenientLoad(src, (), dump_karta(src), source)
    doc, where = _single_document(src, source)
    return _read_karta(doc, where)


def read_karta_document(doc: Any, *, source: str | None = None) -> LenientLoad:
    """One already-parsed document, read leniently (see :func:`load_karta_leniently`)."""
    return _read_karta(doc, source)


def _read_karta(doc: Any, source: str | None) -> LenientLoad:
    if not isinstance(doc, dict):
        raise KartaLoadError(
            f"expected a Karta object, got {json_type(doc)} {_preview(doc)}", source=source
        )
    problems: list[LoadProblem] = []
    api_version = doc.get("apiVersion", API_VERSION)
    kind = doc.get("kind", KIND)
    if api_version == LEGACY_API_VERSION and kind == LEGACY_KIND:
        warnings.warn(
            f"{source or 'definition'}: {LEGACY_KIND} ({LEGACY_API_VERSION}) is deprecated; "
            f"converted to {KIND} ({API_VERSION})",
            DeprecationWarning,
            stacklevel=4,
        )
    elif kind == KIND and api_version == API_VERSION:
        pass
    elif kind == KIND and isinstance(api_version, str) and api_version.startswith(f"{GROUP}/"):
        problems.append(
            LoadProblem(
                "apiVersion",
                f"unsupported version {api_version!r} of {KIND}; expected {API_VERSION}",
                _codes().UNSUPPORTED_VERSION,
            )
        )
    else:
        problems.append(
            LoadProblem(
                "apiVersion" if kind == KIND else "kind",
                f"not a Karta definition: apiVersion {api_version!r}, kind {kind!r} "
                f"(expected {API_VERSION} {KIND}, or {LEGACY_API_VERSION} {LEGACY_KIND})",
                _codes().NOT_A_KARTA,
            )
        )
        spec = doc.get("spec")
        if not (isinstance(spec, dict) and "structureDefinition" in spec):
            return LenientLoad(None, tuple(problems), doc, source)
    allowed = {"apiVersion", "kind", "metadata", "spec", "status"}
    for key in doc:
        if key not in allowed:
            problems.append(_unknown(str(key), key, allowed))
    metadata = doc.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        problems.append(_wrong_type("metadata", "object", metadata))
        metadata = {}
    if doc.get("spec") is None:
        problems.append(LoadProblem("spec", "required field is missing", _codes().MISSING_FIELD))
        spec = _placeholder(KartaSpec)
    else:
        spec = _convert_object(KartaSpec, doc["spec"], "spec", problems)
        if spec is None:
            spec = _placeholder(KartaSpec)
    status = None
    if doc.get("status") is not None:
        status = _convert_object(KartaStatus, doc["status"], "status", problems)
    karta = Karta(
        api_version=API_VERSION, kind=KIND, metadata=dict(metadata), spec=spec, status=status
    )
    return LenientLoad(karta, tuple(problems), doc, source)


def _to_karta(doc: Any, source: str | None) -> Karta:
    loaded = _read_karta(doc, source)
    problems = loaded.problems
    if problems and problems[0].code in (_codes().UNSUPPORTED_VERSION, _codes().NOT_A_KARTA):
        raise KartaLoadError(problems[0].message, source=source)
    if problems or loaded.karta is None:
        noun = "problem" if len(problems) == 1 else "problems"
        raise KartaLoadError(
            f"not a valid Karta ({len(problems)} {noun})", source=source, problems=problems
        )
    return loaded.karta


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _unknown(path: str, key: Any, allowed: Iterable[str]) -> LoadProblem:
    hint = ""
    if isinstance(key, str):
        import difflib  # only for an unknown key: every command loads definitions

        close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
    return LoadProblem(path, f"unknown field{hint}", _codes().UNKNOWN_FIELD)


def _wrong_type(path: str, expected: str, value: Any) -> LoadProblem:
    hint = " (quote it to make it a string)" if expected == "string" and value is not None else ""
    return LoadProblem(
        path,
        f"expected {expected}, got {json_type(value)} {_preview(value)}{hint}",
        _codes().WRONG_TYPE,
    )


def _map_key(path: str, key: Any) -> str:
    return f"{path}[{json.dumps(key) if isinstance(key, str | int) else repr(key)}]"


def _convert(typ: Any, value: Any, path: str, problems: list[LoadProblem]) -> Any:
    """``value`` as ``typ``; None (after recording the problem) when it has the wrong type."""
    if typ == STR:
        if isinstance(value, str):
            return value
        problems.append(_wrong_type(path, "string", value))
        return None
    if typ == INT:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        problems.append(_wrong_type(path, "integer", value))
        return None
    if typ == BOOL:
        if isinstance(value, bool):
            return value
        problems.append(_wrong_type(path, "boolean", value))
        return None
    if typ == FREE:
        if isinstance(value, dict):
            return dict(value)
        problems.append(_wrong_type(path, "object", value))
        return None
    if typ == STRMAP:
        if not isinstance(value, dict):
            problems.append(_wrong_type(path, "object", value))
            return None
        out: dict[str, str] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                problems.append(
                    LoadProblem(_map_key(path, k), "keys must be strings", _codes().WRONG_TYPE)
                )
            elif not isinstance(v, str):
                problems.append(_wrong_type(_map_key(path, k), "string", v))
            else:
                out[k] = v
        return out
    if isinstance(typ, ListOf):
        if not isinstance(value, list):
            problems.append(_wrong_type(path, "array", value))
            return None
        items = []
        for i, item in enumerate(value):
            converted = _convert(typ.item, item, f"{path}[{i}]", problems)
            # a placeholder keeps the indexes (and so every later finding's path) as written
            items.append(_placeholder(typ.item) if converted is None else converted)
        return tuple(items)
    return _convert_object(typ, value, path, problems)


def _placeholder(typ: Any) -> Any:
    """A neutral stand-in for a missing or unusable required value (its problem is recorded)."""
    if typ == STR:
        return ""
    if typ == INT:
        return 0
    if typ == BOOL:
        return False
    if typ in (FREE, STRMAP):
        return {}
    if isinstance(typ, ListOf):
        return ()
    return _convert_object(typ, {}, "", [])


#: per model type: its wire keys (in order and as a set) and the attributes with a default;
#: fixed by the type, and asked for every object of every definition loaded
_FACTS: dict[type, tuple[tuple[str, ...], frozenset[str], frozenset[str]]] = {}


def _field_facts(cls: type) -> tuple[tuple[str, ...], frozenset[str], frozenset[str]]:
    found = _FACTS.get(cls)
    if found is None:
        keys = tuple(f.key for f in SHAPES[cls].fields)
        has_default = frozenset(
            f.name
            for f in dataclass_fields(cls)
            if f.default is not MISSING or f.default_factory is not MISSING
        )
        found = _FACTS[cls] = (keys, frozenset(keys), has_default)
    return found


def _convert_object(cls: type, value: Any, path: str, problems: list[LoadProblem]) -> Any:
    shape = SHAPES[cls]
    if not isinstance(value, dict):
        problems.append(_wrong_type(path, "object", value))
        return None
    keys, key_set, has_default = _field_facts(cls)
    for key in value:
        if key not in key_set:
            problems.append(_unknown(_join(path, str(key)), key, list(keys)))
    kwargs: dict[str, Any] = {}
    for f in shape.fields:
        fpath = _join(path, f.key)
        raw = value.get(f.key)
        converted = None if raw is None else _convert(f.type, raw, fpath, problems)
        if converted is not None:
            kwargs[f.attr] = converted
        elif f.default is not None:
            kwargs[f.attr] = f.default
        elif f.load_default is not None:
            kwargs[f.attr] = f.load_default
        elif f.required and (cls, f.key) not in LENIENT_REQUIRED:
            if raw is None:
                problems.append(
                    LoadProblem(fpath, "required field is missing", _codes().MISSING_FIELD)
                )
            if f.attr not in has_default:
                kwargs[f.attr] = _placeholder(f.type)
        elif isinstance(f.type, ListOf):
            kwargs[f.attr] = ()
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a field the shape forgot; a programming error, reported plainly
        problems.append(LoadProblem(path, f"cannot build {cls.__name__}: {exc}"))
        return None


def _dump_value(typ: Any, value: Any) -> Any:
    if typ in (STR, INT, BOOL):
        return value
    if typ in (FREE, STRMAP):
        return dict(value)
    if isinstance(typ, ListOf):
        return [_dump_value(typ.item, item) for item in value]
    return _dump_object(value)


def _dump_object(obj: Any) -> dict[str, Any]:
    shape = SHAPES[type(obj)]
    out: dict[str, Any] = {}
    for f in shape.fields:
        value = getattr(obj, f.attr)
        if value is None:
            continue
        if isinstance(f.type, ListOf) and not value and not f.required:
            continue
        out[f.key] = _dump_value(f.type, value)
    return out


def dump_karta(karta: Karta) -> dict[str, Any]:
    """The JSON-ready dict of ``karta`` (``dump_karta(load_karta(x)) == x`` for canonical x)."""
    out: dict[str, Any] = {"apiVersion": karta.api_version, "kind": karta.kind}
    if karta.metadata:
        out["metadata"] = dict(karta.metadata)
    out["spec"] = _dump_object(karta.spec)
    if karta.status is not None:
        out["status"] = _dump_object(karta.status)
    return out
