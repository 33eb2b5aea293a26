"""Which object of a ``describe -f`` file is the workload.

Real manifests ship a workload with its Service, ConfigMap or owned Jobs in one stream or
``List``. The workload is the one object a definition covers (an object controlled by another
one is a part, not the workload); a ``TYPE/NAME`` (or ``TYPE NAME``, or a bare NAME) picks one
when several qualify. The other objects are returned so they can link pods' owner chains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workload_map.cli.exits import NO_DEFINITION, CliError, UsageError
from workload_map.cli.manifests import check_object, describe_object
from workload_map.model import GVK

__all__ = ["Selector", "gvk_of", "gvk_text", "pick_workload"]


@dataclass(frozen=True)
class Selector:
    """What the user named after ``-f FILE``: a type, a name, or a word that is either."""

    type_token: str | None
    name: str | None
    either: bool = False  # a single word without "/": a NAME or a TYPE

    @classmethod
    def from_words(cls, words: list[str]) -> Selector | None:
        from workload_map.cli.targets import parse_target

        type_token, name = parse_target(words, "describe -f FILE")
        if type_token is None:
            return None
        if name is None:
            return cls(type_token, None, either=True)
        return cls(type_token, name)

    def text(self) -> str:
        if self.either or self.name is None:
            return str(self.type_token)
        return f"{self.type_token}/{self.name}"

    def matches(self, doc: dict[str, Any]) -> bool:
        name = _name(doc)
        if self.either:
            return name == self.type_token or _type_matches(str(self.type_token), doc)
        return name == self.name and _type_matches(str(self.type_token), doc)


def _name(doc: dict[str, Any]) -> str | None:
    meta = doc.get("metadata")
    return str(meta.get("name")) if isinstance(meta, dict) and meta.get("name") else None


def gvk_of(doc: dict[str, Any]) -> GVK | None:
    """The GVK of an object, None without string apiVersion and kind."""
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        return None
    return GVK.from_api_version(api_version, kind)


def _type_matches(token: str, doc: dict[str, Any]) -> bool:
    """kubectl-like, offline: kind, plural, short name, ``kind.group`` or
    ``kind.version.group``."""
    gvk = gvk_of(doc)
    if gvk is None:
        return False
    group, version, kind = gvk.group, gvk.version, gvk.kind
    token = token.lower()
    head, _, rest = token.partition(".")
    kind_l = kind.lower()
    if head not in (kind_l, kind_l + "s", kind_l + "es"):
        from workload_map.cluster.shortnames import short_names

        if head not in short_names(group, kind):  # po, deploy, lws... as discovery says
            return False
    return rest in ("", group.lower(), f"{version.lower()}.{group.lower()}".rstrip("."))


def _controlled(doc: dict[str, Any]) -> bool:
    meta = doc.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    return isinstance(refs, list) and any(isinstance(r, dict) and r.get("controller") for r in refs)


def pick_workload(
    docs: list[dict[str, Any]],
    label: str,
    *,
    selector: Selector | None,
    covered: Callable[[dict[str, Any]], bool],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The workload among ``docs`` and the other objects; :class:`CliError` when there is
    none (2, or 4 when no definition covers any) or several (2, naming them)."""
    if not docs:
        raise UsageError(f"{label}: no object found (the file is empty)")
    if selector is not None:
        chosen = _select(docs, label, selector)
    elif len(docs) == 1:
        chosen = docs[0]
    else:
        chosen = _only_covered(docs, label, covered)
    check_object(chosen, label)
    return chosen, [d for d in docs if d is not chosen]


def _select(docs: list[dict[str, Any]], label: str, selector: Selector) -> dict[str, Any]:
    found = [d for d in docs if selector.matches(d)]
    if not found:
        raise UsageError(
            f"{label}: no object matches {selector.text()}",
            hint=f"it holds: {_names(docs)}",
        )
    if len(found) > 1:
        raise UsageError(
            f"{label}: {len(found)} objects match {selector.text()}: {_names(found)}",
            hint="give TYPE/NAME to pick one",
        )
    return found[0]


def _only_covered(
    docs: list[dict[str, Any]], label: str, covered: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    candidates = [d for d in docs if gvk_of(d) is not None and covered(d)]
    top_level = [d for d in candidates if not _controlled(d)]
    if top_level:
        candidates = top_level
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        example = _selection_word(candidates[0])
        raise UsageError(
            f"{label}: holds {len(candidates)} workloads a definition covers "
            f"({_names(candidates)}); describe -f takes one",
            hint=f"pick one: wlmap describe -f {label} {example}",
        )
    typed = [d for d in docs if gvk_of(d) is not None]
    if not typed:
        raise UsageError(f"{label}: none of its {len(docs)} objects has an apiVersion and kind")
    listed = ", ".join(f"{describe_object(d)} ({gvk_text(d)})" for d in typed[:6])
    message = f"no definition covers any object in {label}: {listed}"
    hint = "write a Karta for the workload's type and pass --definition FILE"
    payload = {
        "error": "no_definition_for_type",
        "gvk": gvk_text(typed[0]),
        "gvks": [gvk_text(d) for d in typed],
        "message": message,
        "hint": hint,
    }
    raise CliError(message, NO_DEFINITION, hint=hint, payload=payload)


def gvk_text(doc: dict[str, Any]) -> str:
    from workload_map.cluster.definitions import gvk_text as text

    gvk = gvk_of(doc)
    return text(gvk) if gvk else "?"


def _selection_word(doc: dict[str, Any]) -> str:
    gvk = gvk_of(doc)
    kind = gvk.kind.lower() if gvk else "?"
    return f"{kind}/{_name(doc) or 'NAME'}"


def _names(docs: list[dict[str, Any]], limit: int = 6) -> str:
    names = [describe_object(d) for d in docs[:limit]]
    return ", ".join(names) + (f", +{len(docs) - limit} more" if len(docs) > limit else "")
