"""Which object of a ``describe -f`` file is the workload.

Real manifests ship a workload with its Service, ConfigMap or owned Jobs in one stream or
``List``. The workload is the one object a definition covers (an object controlled by another
one is a part, not the workload); a ``TYPE/NAME`` (or ``TYPE NAME``, or a bare NAME) picks one
when several qualify. The other objects are returned so they can link pods' owner chains.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from workload_map.cli.exits import NO_DEFINITION, CliError, UsageError
from workload_map.cli.manifests import Manifest
from workload_map.cli.targets import parse_target
from workload_map.kube.shortnames import short_names

__all__ = ["Selector", "names", "names_with_gvk", "pick_workload"]


class Selector(msgspec.Struct, frozen=True):
    """What the user named after ``-f FILE``: a type, a name, or a word that is either."""

    type_token: str | None
    name: str | None
    either: bool = False  # a single word without "/": a NAME or a TYPE

    @classmethod
    def from_words(cls, words: list[str]) -> Selector | None:

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

    def matches(self, manifest: Manifest) -> bool:
        name = manifest.name
        if self.either:
            return name == self.type_token or _type_matches(str(self.type_token), manifest)
        return name == self.name and _type_matches(str(self.type_token), manifest)


def _type_matches(token: str, manifest: Manifest) -> bool:
    """kubectl-like, offline: kind, plural, short name, ``kind.group`` or
    ``kind.version.group``."""
    gvk = manifest.gvk
    if gvk is None:
        return False
    group, version, kind = gvk.group, gvk.version, gvk.kind
    token = token.lower()
    head, _, rest = token.partition(".")
    kind_l = kind.lower()
    if head not in (kind_l, kind_l + "s", kind_l + "es"):
        if head not in short_names(group, kind):  # po, deploy, lws... as discovery says
            return False
    return rest in ("", group.lower(), f"{version.lower()}.{group.lower()}".rstrip("."))


def pick_workload(
    manifests: list[Manifest],
    label: str,
    *,
    selector: Selector | None,
    covered: Callable[[Manifest], bool],
) -> tuple[Manifest, list[Manifest]]:
    """The workload among ``manifests`` (checked usable) and the other objects;
    :class:`CliError` when there is none (2, or 4 when no definition covers any) or several
    (2, naming them)."""
    if not manifests:
        raise UsageError(f"{label}: no object found (the file is empty)")
    if selector is not None:
        chosen = _select(manifests, label, selector)
    elif len(manifests) == 1:
        chosen = manifests[0]
    else:
        chosen = _only_covered(manifests, label, covered)
    return chosen.checked(), [m for m in manifests if m is not chosen]


def _select(manifests: list[Manifest], label: str, selector: Selector) -> Manifest:
    found = [m for m in manifests if selector.matches(m)]
    if not found:
        raise UsageError(
            f"{label}: no object matches {selector.text()}",
            hint=f"it holds: {names(manifests)}",
        )
    if len(found) > 1:
        raise UsageError(
            f"{label}: {len(found)} objects match {selector.text()}: {names(found)}",
            hint="give TYPE/NAME to pick one",
        )
    return found[0]


def _only_covered(
    manifests: list[Manifest], label: str, covered: Callable[[Manifest], bool]
) -> Manifest:
    candidates = [m for m in manifests if m.gvk is not None and covered(m)]
    top_level = [m for m in candidates if not m.controlled]
    if top_level:
        candidates = top_level
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        first = candidates[0]
        example = f"{first.gvk.kind.lower() if first.gvk else '?'}/{first.name or 'NAME'}"
        raise UsageError(
            f"{label}: holds {len(candidates)} workloads a definition covers "
            f"({names(candidates)}); describe -f takes one",
            hint=f"pick one: wlmap describe -f {label} {example}",
        )
    typed = [m for m in manifests if m.gvk is not None]
    if not typed:
        raise UsageError(
            f"{label}: none of its {len(manifests)} objects has an apiVersion and kind"
        )
    message = f"no definition covers any object in {label}: {names_with_gvk(typed)}"
    hint = "write a Karta for the workload's type and pass --definition FILE"
    payload = {
        "error": "no_definition_for_type",
        "gvk": typed[0].gvk_text,
        "gvks": [m.gvk_text for m in typed],
        "message": message,
        "hint": hint,
    }
    raise CliError(message, NO_DEFINITION, hint=hint, payload=payload)


def names(manifests: list[Manifest], limit: int = 6) -> str:
    """``Kind/name, …`` of the first ``limit`` objects, for messages."""
    shown = [m.label for m in manifests[:limit]]
    more = f", +{len(manifests) - limit} more" if len(manifests) > limit else ""
    return ", ".join(shown) + more


def names_with_gvk(manifests: list[Manifest], limit: int = 6) -> str:
    """``Kind/name (group/version, Kind=kind), …`` of the first ``limit`` objects."""
    return ", ".join(f"{m.label} ({m.gvk_text})" for m in manifests[:limit])
