"""A kubeconfig's parse remembered between commands, holding none of its values.

Reading a kubeconfig costs a command PyYAML: importing it (with the regular expressions its
resolver compiles) is about 29M instructions of a live ``wlmap get``'s 500M (callgrind,
docs/cli.md), more than the whole parse. kubectl users run many commands against a file that
rarely changes, so the shape of the parsed document is kept on disk and the next command
rebuilds the document from the file's own text without PyYAML.

What is kept is a skeleton, never a value of the file: every string of the document is a span
``[start, end]`` of the file's text, and only ``true``/``false``/``null``, integers and floats are
kept as themselves. Credentials (tokens, client keys, passwords) stay in the kubeconfig alone.
The skeleton is made only when each string of the parsed document is exactly its span of the
text (plain scalars, and quoted ones without escapes); a document with a string that is not (an
escape, a folded or block scalar), a duplicate key, or a value JSON cannot hold (a
timestamp) is not cached, and is parsed with PyYAML every time, as before.

The file is the key: its path names the cache file (under the cache folder, in
``kubeconfig/``), and its size, modification time and CRC-32 of its bytes must match for the
skeleton to be used. Any other case (no cache folder, a corrupt or foreign file, another
format) parses the kubeconfig with PyYAML. Writes go to a temporary file renamed over the old
one, as the discovery cache's do.
"""

from __future__ import annotations

import os
from binascii import crc32
from typing import Any

import msgspec

from workload_map.kube.paths import PathText, join, replace_file

__all__ = ["MISS", "load", "skeleton", "store"]

_FORMAT = 1
#: what :func:`load` answers when the cache cannot (a document itself may be ``None``)
MISS: Any = object()
_DECODER = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()


def _file(root: PathText, path: PathText) -> str:
    where = os.path.abspath(path)
    return join(root, "kubeconfig", f"{crc32(where.encode()):08x}.json")


def _key(path: PathText, data: bytes) -> list[Any]:
    st = os.stat(path)
    return [os.path.abspath(path), len(data), st.st_mtime_ns, crc32(data)]


def load(root: PathText, path: PathText, data: bytes, text: str) -> Any:
    """The document of ``text`` (the file's ``data`` decoded) from its cached skeleton, or
    :data:`MISS`."""
    try:
        with open(_file(root, path), "rb") as fh:
            cached = _DECODER.decode(fh.read())
        if (
            not isinstance(cached, dict)
            or cached.get("format") != _FORMAT
            or cached.get("key") != _key(path, data)
        ):
            return MISS
        return _build(cached["skeleton"], text)
    except (OSError, msgspec.DecodeError, KeyError, TypeError, ValueError, IndexError):
        return MISS


def store(root: PathText, path: PathText, data: bytes, skeleton_of: Any) -> None:
    """Keep ``skeleton_of`` (from :func:`skeleton`) for the file's ``data``; failures are
    ignored (the next command parses the file again)."""
    target = _file(root, path)
    try:
        doc = {"format": _FORMAT, "key": _key(path, data), "skeleton": skeleton_of}
        replace_file(target, _ENCODER.encode(doc), 0o600)
    except OSError:
        pass


class _NotSpanned(Exception):
    """A value the skeleton cannot hold without keeping it."""


def skeleton(node: Any, value: Any, text: str) -> Any:
    """The skeleton of ``value``, the document PyYAML constructed from ``node`` (its composed
    node, whose marks index ``text``), or None when the document cannot be kept without its
    values (see the module's docstring)."""
    try:
        return _skeleton(node, value, text)
    except _NotSpanned:
        return None


def _skeleton(node: Any, value: Any, text: str) -> Any:
    kind = type(node).__name__
    if kind == "MappingNode":
        if not isinstance(value, dict) or len(node.value) != len(value):
            # a duplicate key: the document is not the nodes (merge keys are: constructing the
            # document merged them into the nodes)
            raise _NotSpanned
        out: list[Any] = ["d"]
        for (key_node, value_node), (key, item) in zip(node.value, value.items(), strict=True):
            out.append(_skeleton(key_node, key, text))
            out.append(_skeleton(value_node, item, text))
        return out
    if kind == "SequenceNode":
        if not isinstance(value, list) or len(node.value) != len(value):
            raise _NotSpanned
        return ["l", *(_skeleton(n, v, text) for n, v in zip(node.value, value, strict=True))]
    if kind != "ScalarNode":
        raise _NotSpanned
    if isinstance(value, str):
        start, end = node.start_mark.index, node.end_mark.index
        if text[start:end] == value:
            return [start, end]
        if end - start >= 2 and text[start + 1 : end - 1] == value:  # quoted, no escapes
            return [start + 1, end - 1]
        raise _NotSpanned
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float) and value == value and value not in (float("inf"), -float("inf")):
        return value
    raise _NotSpanned


def _build(skeleton_of: Any, text: str) -> Any:
    if isinstance(skeleton_of, list):
        tag = skeleton_of[0]
        if tag == "d":
            items = skeleton_of
            return {
                _build(items[i], text): _build(items[i + 1], text) for i in range(1, len(items), 2)
            }
        if tag == "l":
            return [_build(item, text) for item in skeleton_of[1:]]
        start, end = skeleton_of
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end):
            raise ValueError("not a span")
        return text[start:end]
    if skeleton_of is None or isinstance(skeleton_of, bool | int | float):
        return skeleton_of
    raise ValueError("not a skeleton")
