"""What a Karta's status and labels should be, computed from the Karta and what the cluster serves.

Pure (no API calls): the controller feeds it the cached Karta, the CRDs and built-in kinds it
knows, and writes back only what differs. REFERENCE.md §5 fixes the three reference conditions,
their reasons and messages; ``SchemaCompatible`` and ``Catalog`` are ours.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.catalog.stamps import copy_stamp, derived_labels, root_gvk
from workload_map.model import check_against_crd, load_karta_leniently
from workload_map.operator.validation import findings_for

__all__ = [
    "CONDITION_TYPES",
    "PENDING_MESSAGE",
    "ClusterTypes",
    "CrdInfo",
    "Evaluation",
    "evaluate",
    "merge_conditions",
    "trim_crd",
]


VALIDATED = "Validated"
#: the Validated reason of a definition whose paths use variables nothing binds
UNBOUND_VARIABLES = "UnboundVariables"
CRD_EXISTS = "CRDExists"
READY = "Ready"
SCHEMA = "SchemaCompatible"
CATALOG = "Catalog"
ACCESS = "WorkloadAccess"
#: The reference's three first (always present), then ours.
CONDITION_TYPES = (VALIDATED, CRD_EXISTS, READY, SCHEMA)
PENDING_MESSAGE = "Condition has not been evaluated yet"
NOT_READY_MESSAGE = "Validated and CRDExists must both be True"
_MAX_MESSAGE = 32768


@dataclass(frozen=True)
class CrdInfo:
    """The part of a CRD the controller keeps in its cache."""

    name: str
    group: str
    kind: str
    served: tuple[str, ...]
    plural: str = ""


def trim_crd(obj: dict[str, Any]) -> dict[str, Any]:
    """Cache transform: a CRD without its schemas (they are read on demand, by name)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {
            "name": meta.get("name"),
            "resourceVersion": meta.get("resourceVersion"),
            "generation": meta.get("generation"),
            "uid": meta.get("uid"),
        },
        "spec": {
            "group": spec.get("group"),
            "names": {
                "kind": (spec.get("names") or {}).get("kind"),
                "plural": (spec.get("names") or {}).get("plural"),
            },
            "versions": [
                {"name": v.get("name"), "served": bool(v.get("served"))}
                for v in spec.get("versions") or []
                if isinstance(v, dict)
            ],
        },
    }


def crd_info(trimmed: Mapping[str, Any]) -> CrdInfo:
    spec = trimmed.get("spec") or {}
    return CrdInfo(
        name=str((trimmed.get("metadata") or {}).get("name") or ""),
        group=str(spec.get("group") or ""),
        kind=str((spec.get("names") or {}).get("kind") or ""),
        served=tuple(str(v["name"]) for v in spec.get("versions") or [] if v.get("served")),
        plural=str((spec.get("names") or {}).get("plural") or ""),
    )


@dataclass
class ClusterTypes:
    """What the cluster serves, as the controller last saw it."""

    crds: dict[tuple[str, str], CrdInfo] = field(default_factory=dict)  # (group, kind)
    builtins: set[tuple[str, str, str]] = field(default_factory=set)
    #: why CRDs cannot be read (e.g. RBAC); CRDExists is then Unknown, not False
    crd_error: str | None = None
    #: fetches a CRD's full object (schemas) by name; None when it cannot
    full_crd: Callable[[str], dict[str, Any] | None] | None = None
    #: plural resource names of built-in kinds, by (group, version, kind)
    plurals: dict[tuple[str, str, str], str] = field(default_factory=dict)
    #: may the operator list and watch group/resource? (None: could not tell)
    can_watch: Callable[[str, str], tuple[bool | None, str]] | None = None


@dataclass
class Evaluation:
    conditions: list[dict[str, Any]]
    labels: dict[str, str] | None
    #: Warning events to emit when the condition they belong to changes: (type, reason,
    #: action, message)
    warnings: list[tuple[str, str, str, str]]


def _cond(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message[:_MAX_MESSAGE]}


def _finding_lines(findings: Iterable[Any]) -> str:
    return "\n".join(f"- {f}" for f in findings)


def evaluate(
    obj: dict[str, Any],
    types: ClusterTypes,
    *,
    catalog_lookup: Callable[[str, str, str], tuple[str, dict[str, Any]] | None] | None = None,
    catalog_version: str = "",
) -> Evaluation:
    """Desired conditions (without times and generations) and labels of the Karta ``obj``."""
    warnings: list[tuple[str, str, str, str]] = []
    conditions: list[dict[str, Any]] = []
    gvk = root_gvk(obj)

    # Validated: every error finding, one per line, each with its field path
    try:
        findings: tuple[Any, ...] | None = findings_for(obj)
    except Exception as exc:  # a validator bug must not take the controller down
        findings = None
        error_text = f"the validator failed: {type(exc).__name__}: {exc}"
    errors = [f for f in findings or [] if f.is_error]
    if findings is None:
        validated = _cond(VALIDATED, "False", "ValidationFailed", error_text)
    elif any(f.code == "unknown-variable" for f in errors):
        # paths use $name variables nothing binds: written with references this cluster's
        # Karta CRD does not keep (the reference's CRD prunes them), or a typo; evaluating
        # them with nulls would describe every workload wrongly
        text = (
            f"{len(errors)} problem(s); paths use variables no reference binds (is "
            "spec.structureDefinition.references pruned by a Karta CRD without it?):\n"
            f"{_finding_lines(errors)}"
        )
        validated = _cond(VALIDATED, "False", UNBOUND_VARIABLES, text)
    elif errors:
        text = f"{len(errors)} problem(s):\n{_finding_lines(errors)}"
        validated = _cond(VALIDATED, "False", "ValidationFailed", text)
    else:
        warn = [f for f in findings if not f.is_error]
        text = "the definition is valid"
        if warn:
            text += f"; {len(warn)} warning(s):\n{_finding_lines(warn)}"
        validated = _cond(VALIDATED, "True", "ValidationSucceeded", text)
    if validated["status"] == "False":
        warnings.append((VALIDATED, validated["reason"], "Validating", validated["message"]))
    conditions.append(validated)

    # CRDExists: a built-in type, or a CRD of the group/kind serving the version
    crd: CrdInfo | None = None
    if gvk is None:
        exists = _cond(CRD_EXISTS, "False", "CRDNotFound", PENDING_MESSAGE)
    else:
        group, version, kind = gvk
        crd = types.crds.get((group, kind))
        if gvk in types.builtins:
            exists = _cond(
                CRD_EXISTS,
                "True",
                "CRDFound",
                f"{group + '/' if group else ''}{version}, Kind={kind} is a built-in type",
            )
            crd = None
        elif crd is not None and version in crd.served:
            exists = _cond(
                CRD_EXISTS, "True", "CRDFound", f"CRD {crd.name} serves version {version}"
            )
        elif types.crd_error and crd is None:
            exists = _cond(
                CRD_EXISTS,
                "Unknown",
                "CRDsNotReadable",
                f"cannot read CustomResourceDefinitions: {types.crd_error}",
            )
        else:
            exists = _cond(
                CRD_EXISTS,
                "False",
                "CRDNotFound",
                f"CRD for {group}/{kind} not found or does not serve version {version}",
            )
            crd = None
    if exists["status"] == "False" and gvk is not None:
        warnings.append((CRD_EXISTS, "CRDNotFound", "CheckingCRD", exists["message"]))
    conditions.append(exists)

    ready_ok = validated["status"] == "True" and exists["status"] == "True"
    conditions.append(
        _cond(READY, "True", "Ready", "the definition is valid and its type is served")
        if ready_ok
        else _cond(READY, "False", "NotReady", NOT_READY_MESSAGE)
    )

    # SchemaCompatible: every path checked against the served schema of the target CRD
    conditions.append(_schema_condition(obj, gvk, crd, types, findings is None, warnings))

    access = _access_condition(gvk, crd, exists["status"] == "True", types)
    if access is not None:
        conditions.append(access)

    catalog_cond = _catalog_condition(obj, gvk, catalog_lookup, catalog_version, warnings)
    if catalog_cond is not None:
        conditions.append(catalog_cond)
    return Evaluation(conditions, derived_labels(obj), warnings)


def _schema_condition(
    obj: dict[str, Any],
    gvk: tuple[str, str, str] | None,
    crd: CrdInfo | None,
    types: ClusterTypes,
    broken: bool,
    warnings: list[tuple[str, str, str, str]],
) -> dict[str, Any]:
    if gvk is None or crd is None:
        why = (
            "the root component has no kind"
            if gvk is None
            else "no CRD schema to check against (built-in type, or the CRD is not installed)"
        )
        return _cond(SCHEMA, "Unknown", "NoSchema", why)
    full = types.full_crd(crd.name) if types.full_crd is not None else None
    if full is None:
        return _cond(SCHEMA, "Unknown", "NoSchema", f"could not read CRD {crd.name}")
    try:
        loaded = load_karta_leniently(obj)
        karta = loaded.karta
        if karta is None or broken:
            return _cond(SCHEMA, "Unknown", "NotChecked", "the definition could not be read")
        found = check_against_crd(karta, full)
    except Exception as exc:
        return _cond(SCHEMA, "Unknown", "NotChecked", f"the schema check failed: {exc}")
    errors = [f for f in found if f.is_error]
    if errors:
        text = (
            f"{len(errors)} path(s) do not match CRD {crd.name} version {gvk[1]}:\n"
            + _finding_lines(errors)
        )
        warnings.append((SCHEMA, "SchemaMismatch", "CheckingSchema", text))
        return _cond(SCHEMA, "False", "SchemaMismatch", text)
    text = f"every path matches the schema of CRD {crd.name} version {gvk[1]}"
    notes = [f for f in found if not f.is_error]
    if notes:
        text += f"; {len(notes)} note(s):\n{_finding_lines(notes)}"
    return _cond(SCHEMA, "True", "SchemaCompatible", text)


def _access_condition(
    gvk: tuple[str, str, str] | None, crd: CrdInfo | None, served: bool, types: ClusterTypes
) -> dict[str, Any] | None:
    """Whether the operator's identity may list and watch the workload kind (the gang and
    metrics controllers need it); reported, never fatal."""
    if gvk is None or not served or types.can_watch is None:
        return None
    resource = crd.plural if crd is not None else types.plurals.get(gvk, "")
    if not resource:
        return None
    group_resource = f"{resource}.{gvk[0]}" if gvk[0] else resource
    allowed, why = types.can_watch(gvk[0], resource)
    if allowed is None:
        return _cond(ACCESS, "Unknown", "AccessNotChecked", why)
    if allowed:
        return _cond(
            ACCESS, "True", "Permitted", f"the operator may list and watch {group_resource}"
        )
    return _cond(
        ACCESS,
        "False",
        "Forbidden",
        f"the operator may not list and watch {group_resource}"
        + (f" ({why})" if why else "")
        + "; controllers that follow these workloads cannot see them: grant list and watch "
        "(the chart aggregates read access to workload kinds into its ClusterRole)",
    )


def _catalog_condition(
    obj: dict[str, Any],
    gvk: tuple[str, str, str] | None,
    lookup: Callable[[str, str, str], tuple[str, dict[str, Any]] | None] | None,
    catalog_version: str,
    warnings: list[tuple[str, str, str, str]],
) -> dict[str, Any] | None:
    if gvk is None or lookup is None:
        return None
    found = lookup(*gvk)
    if found is None:
        return None
    name, doc = found
    stamp = copy_stamp(obj)
    if stamp is None:
        return _cond(
            CATALOG,
            "True",
            "OverridesBuiltIn",
            f"overrides the built-in catalog definition {name} for this type",
        )
    have = stamp.version or "?"
    if stamp.is_current(doc):
        return _cond(
            CATALOG, "True", "CatalogCurrent", f"installed from the catalog of workload-map {have}"
        )
    text = (
        f"stale copy of the built-in definition {name}: installed from workload-map {have}, "
        f"the built-in definition of workload-map {catalog_version} differs; "
        f"run `wlmap definitions install {name}`"
    )
    warnings.append((CATALOG, "StaleCatalogCopy", "CheckingCatalog", text))
    return _cond(CATALOG, "False", "StaleCatalogCopy", text)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def merge_conditions(
    existing: Iterable[Any],
    desired: Iterable[dict[str, Any]],
    generation: int | None,
    now: str | None = None,
) -> list[dict[str, Any]]:
    """The conditions to store: ``desired`` with ``observedGeneration``, keeping an existing
    condition's ``lastTransitionTime`` while its status is unchanged; conditions of other
    writers (types we do not own) are kept as they are."""
    stamp = now or _now()
    old = {c.get("type"): c for c in existing if isinstance(c, dict)}
    out: list[dict[str, Any]] = []
    ours = set()
    for cond in desired:
        ours.add(cond["type"])
        prev = old.get(cond["type"])
        keep_time = prev is not None and prev.get("status") == cond["status"]
        merged = dict(cond)
        merged["lastTransitionTime"] = (
            prev.get("lastTransitionTime") if keep_time and prev else None
        ) or stamp
        if generation is not None:
            merged["observedGeneration"] = generation
        out.append(merged)
    out.extend(c for t, c in old.items() if t not in ours and t not in (CATALOG, ACCESS))
    return out


def conditions_equal(a: Iterable[Any], b: Iterable[Any]) -> bool:
    """Same conditions, ignoring order (so an unchanged Karta gets no status write)."""

    def norm(items: Iterable[Any]) -> list[str]:
        return sorted(json.dumps(c, sort_keys=True) for c in items if isinstance(c, dict))

    return norm(a) == norm(b)
