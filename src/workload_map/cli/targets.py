"""From what the user typed to what to fetch: ``TYPE[/NAME] [NAME]``, and what a TYPE may be
(the resolution against a cluster's discovery is :mod:`~workload_map.cli.live_targets`, so that
offline commands load no cluster code).

A TYPE token is matched like kubectl does (plural, singular, short name, kind,
``kind.version.group``, ``resource.group``) against discovery, then tied to a definition
(exact GVK first, then the same group/kind at another version). Tokens discovery does not know
are matched against the definitions' kinds: the type is then covered but not installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.catalog.definitions import gvk_text
from workload_map.cli.exits import NO_DEFINITION, NOT_FOUND, CliError, UsageError
from workload_map.cli.suggest import did_you_mean

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition, Definitions
    from workload_map.kube.client import Cluster
    from workload_map.kube.discovery import APIResource

__all__ = [
    "NotInstalled",
    "Target",
    "definition_kind_match",
    "no_definition_error",
    "parse_target",
    "type_candidates",
]


def parse_target(words: list[str], command: str) -> tuple[str | None, str | None]:
    """``TYPE``, ``TYPE/NAME`` or ``TYPE NAME`` → (type, name)."""
    if not words:
        return None, None
    if len(words) > 2:
        raise UsageError(
            f"{command} takes TYPE[/NAME] [NAME]; got {len(words)} arguments: {' '.join(words)}"
        )
    first = words[0]
    type_token, slash, name = first.partition("/")
    if not type_token:
        raise UsageError(f'"{first}": the TYPE before "/" is missing')
    if slash and not name:
        raise UsageError(f'"{first}": the NAME after "/" is missing')
    if len(words) == 2:
        if slash:
            raise UsageError(
                f'give the name once: either "{first}" or "{type_token} {words[1]}", not both'
            )
        name = words[1]
    return type_token, name or None


class Target(msgspec.Struct, frozen=True):
    """A resolved type: where it is served and the definition that covers it."""

    resource: APIResource
    definition: Definition


class NotInstalled(CliError):
    """The type is covered by a definition but the cluster does not serve it."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"{kind} is not installed in this cluster", NOT_FOUND)
        self.kind = kind


def no_definition_error(
    *, type_token: str | None = None, gvk: Any = None, candidates: list[str] | None = None
) -> CliError:
    """Exit 4 with the machine payload ``{"error": "no_definition_for_type", …}``."""

    if gvk is not None:
        message = f"no definition covers {gvk_text(gvk)}"
    else:
        message = (
            f'unknown type "{type_token}": the cluster serves no such resource and no '
            "definition covers it"
        )
    hint = (
        "write a Karta for it (wlmap definitions -o yaml shows examples) and apply it to the "
        "cluster, or pass --definition FILE"
    )

    suggestion = did_you_mean(type_token, candidates) if type_token and candidates else None
    payload: dict[str, Any] = {"error": "no_definition_for_type"}
    if gvk is not None:
        payload["gvk"] = gvk_text(gvk)
    else:
        payload["type"] = type_token
    payload["message"] = message
    payload["hint"] = hint
    return CliError(message, NO_DEFINITION, hint=suggestion or hint, payload=payload)


def type_candidates(cluster: Cluster | None, definitions: Definitions) -> list[str]:
    """Lower-case kinds and plurals a user could have meant (for suggestions)."""
    out = {k.lower() for k in definitions.kinds()}
    if cluster is not None:
        covered = {(d.gvk.group, d.gvk.kind) for d in definitions.all() if d.gvk}
        for res in cluster.resources():
            if (res.group, res.kind) in covered:
                out.add(res.plural)
    return sorted(out)


def definition_kind_match(token: str, definitions: Definitions) -> list[Definition]:
    token = token.lower()
    name, _, rest = token.partition(".")
    if rest:
        version, _, group = rest.partition(".")
        exact = definitions.by_root_kind(name, group=group, version=version)
        if exact:
            return exact
        by_group = definitions.by_root_kind(name, group=rest)
        if by_group:
            return by_group
    found = definitions.by_root_kind(token)
    if not found:
        for suffix in ("es", "s"):
            if token.endswith(suffix):
                found = definitions.by_root_kind(token[: -len(suffix)])
                if found:
                    break
    return found
