"""The built-in definitions as one generated JSON bundle, read instead of parsing their YAML.

The YAML files under ``catalog/data`` stay the source of truth; ``make catalog-bundle``
(:func:`main`) writes ``catalog/data/bundle.jsonl`` from them and
``tests/catalog/test_bundle.py`` fails when the two drift. Why: libyaml parses one definition in
about 1.5 ms, ``json`` in 0.05 ms, and listing every definition (``get --all-types``,
``definitions``) parses all 46. Each entry also records the length and CRC-32 of the YAML text
it was made from; the registry uses an entry only when the file on disk still has both, so an
edited definition is read from its YAML even before the bundle is regenerated.

Format: the first line is a JSON object ``{"format": 1, "index": {stem: [offset, length,
size, crc32]}}``; ``offset``/``length`` locate the definition's JSON (bytes, counted from the
start of the file), ``size``/``crc32`` describe its YAML source.
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workload_map.yaml_import import import_yaml

if TYPE_CHECKING:
    import os
    from pathlib import Path

__all__ = ["BUNDLE_NAME", "Bundle", "render_bundle"]

BUNDLE_NAME = "bundle.jsonl"
FORMAT = 1
_SUFFIX = ".yaml"


def _fingerprint(source: bytes) -> tuple[int, int]:
    return len(source), zlib.crc32(source)


class Bundle:
    """A read bundle: the JSON of each definition whose YAML is still the one it was made from."""

    __slots__ = ("_data", "_index")

    def __init__(self, data: bytes) -> None:
        head, _, _ = data.partition(b"\n")
        meta = json.loads(head)
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueError(f"catalog {BUNDLE_NAME}: unknown format")
        self._data = data
        self._index: dict[str, list[int]] = meta["index"]

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Bundle | None:
        """The bundle at ``path``, or None when there is none (or it is unreadable)."""
        try:
            with open(path, "rb") as file:
                return cls(file.read())
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def document(self, stem: str, source: bytes) -> Any:
        """The parsed definition ``stem``, or None when the bundle has none for this YAML text."""
        found = self._index.get(stem)
        if found is None or (found[2], found[3]) != _fingerprint(source):
            return None
        offset, length = found[0], found[1]
        return json.loads(self._data[offset : offset + length])


def render_bundle(documents: Mapping[str, tuple[bytes, Any]]) -> bytes:
    """The bundle of ``documents`` (stem -> (YAML source bytes, parsed document))."""
    bodies = {
        stem: json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        for stem, (_, doc) in sorted(documents.items())
    }

    def head(offsets: Mapping[str, int]) -> bytes:
        index = {
            stem: [offsets[stem], len(body), *_fingerprint(documents[stem][0])]
            for stem, body in bodies.items()
        }
        return json.dumps({"format": FORMAT, "index": index}, sort_keys=True).encode() + b"\n"

    # offsets depend on the head's length, which depends on the offsets' digits: iterate
    offsets = dict.fromkeys(bodies, 0)
    while True:
        position = len(head(offsets))
        moved = {}
        for stem, body in bodies.items():
            moved[stem] = position
            position += len(body) + 1
        if moved == offsets:
            break
        offsets = moved
    return head(offsets) + b"".join(body + b"\n" for body in bodies.values())


def parse_sources(directory: Path) -> dict[str, tuple[bytes, Any]]:
    """Every ``<stem>.yaml`` of ``directory``: its bytes and its document, parsed as the
    catalog parses it."""
    yaml = import_yaml()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: dict[str, tuple[bytes, Any]] = {}
    for path in sorted(directory.glob(f"*{_SUFFIX}")):
        source = path.read_bytes()
        out[path.name[: -len(_SUFFIX)]] = (source, yaml.load(source.decode("utf-8"), Loader=loader))
    return out


def data_directory() -> Path:
    from pathlib import Path  # make catalog-bundle and the tests: no command's import

    return Path(__file__).with_name("data")


def main() -> int:
    directory = data_directory()
    target = directory / BUNDLE_NAME
    target.write_bytes(render_bundle(parse_sources(directory)))
    sys.stdout.write(f"wrote {target}\n")
    return 0
