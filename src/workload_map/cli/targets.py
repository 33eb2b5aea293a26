"""From what the user typed to what to fetch: ``TYPE[/NAME] [NAME]`` and TYPE resolution.

A TYPE token is matched like kubectl does (plural, singular, short name, kind,
``kind.version.group``, ``resource.group``) against discovery, then tied to a definition
(exact GVK first, then the same group/kind at another version). Tokens discovery does not know
are matched against the definitions' kinds: the type is then covered but not installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.exits import NO_DEFINITION, NOT_FOUND, CliError, UsageError

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition, Definitions
    from workload_map.kube.client import Cluster
    from workload_map.kube.discovery import APIResource

__all__ = [
    "NotInstalled",
    "Target",
    "ambiguous_name_error",
    "covered_targets",
    "definition_kind_match",
    "find_by_name",
    "no_definition_error",
    "parse_target",
    "resolve_type",
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
    from workload_map.catalog.definitions import gvk_text

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
    from workload_map.cli.suggest import did_you_mean  # difflib: only for a miss

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


def resolve_type(
    token: str, cluster: Cluster, definitions: Definitions, *, warn: Any = None
) -> Target:
    """The served resource and definition a TYPE token means; raises :class:`CliError`
    (usage for ambiguity, 3 via :class:`NotInstalled`, 4 when nothing covers it)."""
    from workload_map.catalog.registry import version_priority
    from workload_map.kube.discovery import match_type

    matches = match_type(token, cluster.resources())
    if not matches:
        covered = definition_kind_match(token, definitions)
        if covered:
            raise NotInstalled(covered[0].kind or token)
        raise no_definition_error(
            type_token=token, candidates=type_candidates(cluster, definitions)
        )
    group_kinds = sorted({(r.group, r.kind) for r in matches})
    if len(group_kinds) > 1:
        covered_gks = [gk for gk in group_kinds if definitions.for_group_kind(*gk)]
        if len(covered_gks) == 1:
            group_kinds = covered_gks
        else:
            options = sorted(
                {r.qualified for r in matches if r.preferred} or {r.qualified for r in matches}
            )
            raise UsageError(
                f'the type "{token}" is ambiguous: it names '
                + ", ".join(f"{k}.{g}" if g else k for g, k in group_kinds),
                hint="use one of: " + ", ".join(options),
            )
    group, kind = group_kinds[0]
    served = [r for r in matches if (r.group, r.kind) == (group, kind)]
    served.sort(key=lambda r: (not r.preferred, version_priority(r.version)))
    return _target(group, kind, served, definitions, warn)


def _target(
    group: str, kind: str, served: list[APIResource], definitions: Definitions, warn: Any
) -> Target:
    """The served version (in ``served``'s order) a definition covers exactly, else the first
    one with the fallback definition (and its warning); exit 4 when nothing covers the kind."""
    from workload_map.catalog.resolution import resolve_gvk
    from workload_map.model import GVK

    wanted = GVK(group, served[0].version, kind)
    found = resolve_gvk(wanted, definitions, other_versions=[r.version for r in served[1:]])
    if found is None:
        raise no_definition_error(gvk=wanted)
    if warn is not None and found.note:
        warn(found.note)
    res = next(r for r in served if r.version == found.wanted.version)
    return Target(res, found.definition)


def covered_targets(cluster: Cluster, definitions: Definitions) -> list[Target]:
    """One served resource per covered group/kind (the version with an exact definition)."""
    from workload_map.catalog.registry import version_priority

    out = []
    seen: set[tuple[str, str]] = set()
    for d in definitions.all():
        gvk = d.gvk
        if gvk is None or (gvk.group, gvk.kind) in seen:
            continue
        served = cluster.served_versions(gvk.group, gvk.kind)
        if not served:
            continue
        seen.add((gvk.group, gvk.kind))
        served.sort(key=lambda r: version_priority(r.version))
        out.append(_target(gvk.group, gvk.kind, served, definitions, None))
    return out


def find_by_name(
    name: str, cluster: Cluster, definitions: Definitions
) -> list[tuple[Target, dict[str, Any]]]:
    """Every covered workload called ``name`` in the current namespace (bare-name lookup)."""
    from workload_map.kube.errors import ApiError

    found = []
    for target in covered_targets(cluster, definitions):
        ns = cluster.namespace if target.resource.namespaced else None
        try:
            found.append((target, cluster.get(target.resource, name, ns)))
        except ApiError:
            continue
    return found


def ambiguous_name_error(
    name: str, found: list[tuple[Target, dict[str, Any]]], verb: str
) -> CliError:
    """Exit 5: a bare name that several workloads carry."""
    from workload_map.cli.exits import AMBIGUOUS

    names = ", ".join(f"{t.resource.kind.lower()}/{name}" for t, _ in found)
    first = found[0][0].resource.kind.lower()
    return CliError(
        f'the name "{name}" matches several workloads: {names}',
        AMBIGUOUS,
        hint=f"give the TYPE too, e.g. wlmap {verb} {first}/{name}",
    )
