"""What a Karta object carries in a cluster beside its definition, derived from the definition.

The ``run.ai/karta-{group,version,kind}`` labels name the root GVK: KAI Scheduler's Karta
fallback and the operator find the definition of a kind by them. An installed copy of a
built-in definition also carries the workload-map release it came from and a digest of its
``spec``, so a stale copy is recognised alike by ``wlmap definitions install``, by the
library's definition lookup (:mod:`workload_map.cluster.definitions`) and by the operator's
``Catalog`` condition. Pure: plain mappings in, strings out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "CATALOG_DIGEST_ANNOTATION",
    "CATALOG_VERSION_ANNOTATION",
    "GROUP_LABEL",
    "KIND_LABEL",
    "VERSION_LABEL",
    "CopyStamp",
    "catalog_digest",
    "copy_stamp",
    "derived_labels",
    "root_gvk",
]

GROUP_LABEL = "run.ai/karta-group"
VERSION_LABEL = "run.ai/karta-version"
KIND_LABEL = "run.ai/karta-kind"
CATALOG_VERSION_ANNOTATION = "workload-map.run.ai/catalog-version"
CATALOG_DIGEST_ANNOTATION = "workload-map.run.ai/catalog-digest"


def root_gvk(obj: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(group, version, kind) of ``spec.structureDefinition.rootComponent.kind``; None when
    the root has no kind (a version or kind that is not a string counts as absent)."""
    spec = obj.get("spec")
    node: Any = spec.get("structureDefinition") if isinstance(spec, dict) else None
    node = node.get("rootComponent") if isinstance(node, dict) else None
    node = node.get("kind") if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None
    group, version, kind = node.get("group", ""), node.get("version"), node.get("kind")
    if not isinstance(group, str) or not isinstance(version, str) or not isinstance(kind, str):
        return None
    if not kind:
        return None
    return group, version, kind


def derived_labels(obj: Mapping[str, Any]) -> dict[str, str] | None:
    """The ``run.ai/karta-{group,version,kind}`` labels the root GVK implies (None: no kind)."""
    gvk = root_gvk(obj)
    if gvk is None:
        return None
    return {GROUP_LABEL: gvk[0], VERSION_LABEL: gvk[1], KIND_LABEL: gvk[2]}


def catalog_digest(doc: Mapping[str, Any]) -> str:
    """A short digest of a definition's ``spec``: what says whether a copy is current."""
    import hashlib  # here: every command imports this module, few compute a digest

    body = json.dumps(doc.get("spec"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()[:16]


# digest: catalog_digest of the spec it was installed with; version: the workload-map release
# it came from (None: not recorded). Fields given as types: string annotations would each be
# a ForwardRef, built by the compile builtin (docs/cli.md#start-up).
class CopyStamp(NamedTuple("CopyStamp", [("digest", str), ("version", str | None)])):
    """The catalog annotations of an installed copy of a built-in definition."""

    __slots__ = ()

    def is_current(self, built_in: Mapping[str, Any]) -> bool:
        """Whether the copy's spec is ``built_in``'s (this release's definition of the name)."""
        return self.digest == catalog_digest(built_in)


def copy_stamp(obj: Mapping[str, Any]) -> CopyStamp | None:
    """The stamp of a Karta object installed from the catalog; None for a user's own definition
    (no digest annotation). Cheap: the caller fetches the built-in only for a copy."""
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(annotations, dict):
        return None
    digest = annotations.get(CATALOG_DIGEST_ANNOTATION)
    if not isinstance(digest, str):
        return None
    version = annotations.get(CATALOG_VERSION_ANNOTATION)
    return CopyStamp(digest, version if isinstance(version, str) else None)
