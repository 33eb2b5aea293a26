"""Names and label values for the objects and pods the gang room writes.

Kubernetes names must be DNS-1123 subdomains (at most 253 characters) or labels (63, no dots);
label values at most 63 characters of ``[A-Za-z0-9-_.]`` starting and ending alphanumeric. The
engine's group names (``pg-<uid>-<keys>``) are usually valid already; when one is not, it is
lower-cased and cleaned, and a short hash of the original keeps two different inputs apart.
"""

from __future__ import annotations

import hashlib
import re

from workload_map.engine.gangs import is_dns1123_subdomain

__all__ = [
    "MAX_LABEL",
    "MAX_SUBDOMAIN",
    "dns_label",
    "dns_subdomain",
    "label_value",
    "short_hash",
]

MAX_SUBDOMAIN = 253
MAX_LABEL = 63
_HASH = 8

_NOT_SUBDOMAIN = re.compile(r"[^a-z0-9.-]+")
_NOT_LABEL = re.compile(r"[^a-z0-9-]+")
_NOT_VALUE = re.compile(r"[^A-Za-z0-9_.-]+")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?\Z")


def short_hash(text: str) -> str:
    """Eight hex digits of the SHA-256 of ``text`` (stable across processes and releases)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_HASH]


def _with_hash(base: str, original: str, limit: int, sep: str = "-") -> str:
    room = limit - _HASH - len(sep)
    head = base[:room].rstrip("-._")
    return f"{head}{sep}{short_hash(original)}" if head else short_hash(original)


def dns_subdomain(name: str) -> str:
    """``name`` as a valid DNS-1123 subdomain: as is when valid, else cleaned and hashed."""
    if is_dns1123_subdomain(name):
        return name
    lowered = name.lower()
    if is_dns1123_subdomain(lowered):
        return lowered
    cleaned = _NOT_SUBDOMAIN.sub("-", lowered)
    labels = [part.strip("-") for part in cleaned.split(".")]
    cleaned = ".".join(part for part in labels if part) or "x"
    if cleaned == lowered and len(cleaned) <= MAX_SUBDOMAIN:
        return cleaned
    return _with_hash(cleaned, name, MAX_SUBDOMAIN)


def dns_label(name: str) -> str:
    """``name`` as a DNS-1123 label (63 characters, no dots): as is when valid, else hashed."""
    if _LABEL.match(name) and len(name) <= MAX_LABEL:
        return name
    lowered = name.lower()
    if _LABEL.match(lowered) and len(lowered) <= MAX_LABEL:
        return lowered
    cleaned = _NOT_LABEL.sub("-", lowered).strip("-") or "x"
    return _with_hash(cleaned, name, MAX_LABEL)


def label_value(value: str) -> str:
    """``value`` as a label value: as is when valid, else cut to 63 characters with a hash."""
    if len(value) <= MAX_LABEL and _VALUE.match(value):
        return value
    cleaned = _NOT_VALUE.sub("-", value).strip("-_.")
    if len(cleaned) <= MAX_LABEL and cleaned == value:
        return cleaned
    return _with_hash(cleaned, value, MAX_LABEL)
