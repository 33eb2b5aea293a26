"""Karta validation for the operator, memoised by content.

The controller revalidates a Karta on every CRD event and every relist, and the webhook sees
the same definition again on each metadata update; the findings only depend on the document,
so they are kept per content digest (bounded, least recently used first out).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from workload_map.model import Finding, validate

__all__ = ["findings_for"]

_MAX = 4096
_lock = threading.Lock()
_memo: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()


def _digest(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    key = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        # labels are left out: the operator's own label stamping must not revalidate
        "metadata": {k: meta.get(k) for k in ("name", "annotations")},
        "spec": obj.get("spec"),
    }
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def findings_for(obj: Mapping[str, Any]) -> tuple[Finding, ...]:
    """``workload_map.model.validate(obj)``, computed once per distinct document."""
    key = _digest(obj)
    with _lock:
        hit = _memo.get(key)
        if hit is not None:
            _memo.move_to_end(key)
            return hit
    found = tuple(validate(dict(obj)))
    with _lock:
        _memo[key] = found
        while len(_memo) > _MAX:
            _memo.popitem(last=False)
    return found
