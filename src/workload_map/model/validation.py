"""Validation that explains: every finding about a Karta, not just the first.

The error rules and their order follow the reference validator (duplicate names stop everything;
the ownership-cycle check runs only on a structurally sound tree; gang members and jq expressions
are always checked). Two checks are deliberately stricter and are errors: the jq safety rules
apply to the whole expression tree, and v2 ``subGroups`` must name existing components.
Suspend and resume actions must be usable as written (a writable path, a JSON value): an error,
since the action would fail every time. Everything else added here is a warning: advice that
does not change the verdict.

A document (dict, text, path) is read leniently: its schema problems are findings too, and the
rules still run on everything that could be read, so one pass lists every problem.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workload_map import jq
from workload_map.model.extensions import check as check_extensions
from workload_map.model.findings import ERROR, WARNING, Finding, FindingCode
from workload_map.model.labels import match_label_findings
from workload_map.model.load import LenientLoad, load_karta_leniently
from workload_map.model.references import check as check_references
from workload_map.model.shape import JqField, iter_jq_fields
from workload_map.model.types import Component, Karta, StatusMappings, StatusMatcher

__all__ = ["component_paths", "is_valid", "validate", "validate_loaded"]

_STRUCT = "spec.structureDefinition"
_ROOT = f"{_STRUCT}.rootComponent"
_GANG = "spec.optimizationInstructions.gangScheduling"
#: Top-level fields of a Pod; selector paths outside them can never match anything.
_POD_FIELDS = (".metadata", ".spec", ".status", ".kind", ".apiVersion")


def component_paths(karta: Karta) -> list[tuple[str, Component]]:
    """``(json path, component)`` for the root then each child."""
    out = [(_ROOT, karta.root)]
    out.extend(
        (f"{_STRUCT}.childComponents[{i}]", c)
        for i, c in enumerate(karta.spec.structure_definition.child_components)
    )
    return out


def is_valid(
    karta: Karta | Mapping[str, Any] | str, *, crd: Mapping[str, Any] | None = None
) -> bool:
    """True when :func:`validate` reports no error (warnings allowed)."""
    return not any(f.is_error for f in validate(karta, crd=crd))


def validate(
    karta: Karta | Mapping[str, Any] | str | None, *, crd: Mapping[str, Any] | None = None
) -> list[Finding]:
    """Every finding about ``karta`` (errors and warnings), in a stable order.

    ``crd``, when given, is the target workload type's CustomResourceDefinition: every path that
    evaluates against the workload is then also checked against its served schema.
    """
    if karta is None:
        return [Finding("", FindingCode.KARTA_NIL, ERROR, "karta is nil")]
    if not isinstance(karta, Karta):
        return validate_loaded(load_karta_leniently(karta), crd=crd)
    return _rule_findings(karta, crd)


def validate_loaded(loaded: LenientLoad, *, crd: Mapping[str, Any] | None = None) -> list[Finding]:
    """Every finding about a leniently loaded document: its schema problems, then the rules.

    A rule finding at or below a field the loader had to drop or stand in for is left out: the
    schema finding already explains it.
    """
    karta = loaded.karta
    load_findings = [
        Finding(p.path, p.code, ERROR, p.message, _component_at(karta, p.path))
        for p in loaded.problems
    ]
    if karta is None:
        return load_findings
    bad = tuple(p.path for p in loaded.problems if p.code != FindingCode.UNKNOWN_FIELD)
    rules = [f for f in _rule_findings(karta, crd) if not _under(f.path, bad)]
    return load_findings + rules + _document_warnings(loaded.document)


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith((f"{p}.", f"{p}[")) for p in prefixes if p)


def _component_at(karta: Karta | None, path: str) -> str | None:
    if karta is None:
        return None
    for cpath, comp in component_paths(karta):
        if path == cpath or path.startswith((f"{cpath}.", f"{cpath}[")):
            return comp.name or None
    return None


def _rule_findings(karta: Karta, crd: Mapping[str, Any] | None) -> list[Finding]:
    comps = component_paths(karta)
    duplicates = _duplicates(comps)
    if duplicates:
        return duplicates
    findings: list[Finding] = []
    findings += _root_rules(karta)
    findings += _child_owner_rules(karta, comps)
    for path, comp in comps:
        findings += _component_rules(path, comp)
    if not any(f.is_error for f in findings):
        findings += _cycles(karta, comps)
    findings += _gang_rules(karta)
    # one walk of the definition's jq fields for both consumers (the walk costs about a fifth
    # of a validation)
    fields = tuple(iter_jq_fields(karta))
    findings += _jq_rules(fields)
    findings += check_references(karta, fields)  # references and the $variables paths use
    findings += _action_rules(comps, {f.path for f in findings if f.code.startswith("jq-")})
    findings += _warnings(karta, comps)
    findings += check_extensions(karta)  # the workload-map.run.ai/ gang annotations
    if crd is not None:
        # start-up boundary: the CRD schema checks (and difflib) load only when a CRD is given
        from workload_map.model.schema_check import check_against_crd

        findings += check_against_crd(karta, crd)
    return findings


def _duplicates(comps: list[tuple[str, Component]]) -> list[Finding]:
    seen: set[str] = set()
    out: list[Finding] = []
    for path, comp in comps:
        if comp.name in seen:
            out.append(
                Finding(
                    f"{path}.name",
                    FindingCode.DUPLICATE_COMPONENT,
                    ERROR,
                    f"component name {comp.name} is not unique",
                    comp.name,
                )
            )
        seen.add(comp.name)
    return out


def _root_rules(karta: Karta) -> list[Finding]:
    root = karta.root
    out: list[Finding] = []
    kind = root.kind
    if kind is None or not kind.version or not kind.kind or (not kind.group and kind.kind != "Pod"):
        out.append(
            Finding(
                f"{_ROOT}.kind",
                FindingCode.ROOT_KIND_INCOMPLETE,
                ERROR,
                "root component must have full kind (group, version, kind)",
                root.name,
            )
        )
    if root.owner_ref is not None:
        out.append(
            Finding(
                f"{_ROOT}.ownerRef",
                FindingCode.ROOT_OWNER_REF,
                ERROR,
                "root component cannot have owner ref",
                root.name,
            )
        )
    if root.status_definition is None:
        out.append(
            Finding(
                f"{_ROOT}.statusDefinition",
                FindingCode.ROOT_NO_STATUS,
                ERROR,
                "root component must have status definition",
                root.name,
            )
        )
    return out


def _child_owner_rules(karta: Karta, comps: list[tuple[str, Component]]) -> list[Finding]:
    names = {c.name for _, c in comps}
    out: list[Finding] = []
    for path, comp in comps[1:]:
        if not comp.owner_ref:
            out.append(
                Finding(
                    f"{path}.ownerRef",
                    FindingCode.MISSING_OWNER_REF,
                    ERROR,
                    f"child component '{comp.name}' has no owner ref",
                    comp.name,
                )
            )
        elif comp.owner_ref not in names:
            out.append(
                Finding(
                    f"{path}.ownerRef",
                    FindingCode.UNKNOWN_OWNER,
                    ERROR,
                    f"child component '{comp.name}' has owner ref to non-existing component "
                    f"'{comp.owner_ref}'",
                    comp.name,
                )
            )
    return out


def _component_rules(path: str, comp: Component) -> list[Finding]:
    out: list[Finding] = []
    name = comp.name
    if not name:
        out.append(
            Finding(
                f"{path}.name", FindingCode.EMPTY_COMPONENT_NAME, ERROR, "component name is empty"
            )
        )
    spec = comp.spec_definition
    if spec is not None:
        shapes = [
            key
            for key, present in (
                ("podTemplateSpecPath", spec.pod_template_spec_path),
                ("podSpecPath", spec.pod_spec_path),
                ("fragmentedPodSpecDefinition", spec.fragmented_pod_spec_definition),
            )
            if present
        ]
        if len(shapes) > 1:
            out.append(
                Finding(
                    f"{path}.specDefinition",
                    FindingCode.MULTIPLE_SPEC_DEFINITIONS,
                    ERROR,
                    f"component '{name}' has multiple pod spec definitions ({', '.join(shapes)})",
                    name,
                )
            )
    selector = comp.pod_selector
    instance_selector = selector.component_instance_selector if selector else None
    if comp.instance_id_path and instance_selector is None:
        out.append(
            Finding(
                f"{path}.instanceIdPath",
                FindingCode.INSTANCE_ID_WITHOUT_SELECTOR,
                ERROR,
                f"component '{name}' has instance id path but no pod component instance selector",
                name,
            )
        )
    if instance_selector is not None and not comp.instance_id_path:
        out.append(
            Finding(
                f"{path}.podSelector.componentInstanceSelector",
                FindingCode.SELECTOR_WITHOUT_INSTANCE_ID,
                ERROR,
                f"component '{name}' has pod component instance selector but no instance id path",
                name,
            )
        )
    type_selector = selector.component_type_selector if selector else None
    if type_selector is not None:
        spath = f"{path}.podSelector.componentTypeSelector"
        labels = type_selector.match_labels
        if not type_selector.key_path and labels is None:
            out.append(
                Finding(
                    spath,
                    FindingCode.TYPE_SELECTOR_EMPTY,
                    ERROR,
                    f"component '{name}' has a componentTypeSelector with neither keyPath nor "
                    "matchLabels",
                    name,
                )
            )
        if labels is not None and not labels:
            out.append(
                Finding(
                    f"{spath}.matchLabels",
                    FindingCode.EMPTY_MATCH_LABELS,
                    ERROR,
                    f"component '{name}' has a componentTypeSelector with empty matchLabels",
                    name,
                )
            )
        if type_selector.value is not None and not type_selector.key_path:
            out.append(
                Finding(
                    f"{spath}.value",
                    FindingCode.VALUE_WITHOUT_KEY_PATH,
                    ERROR,
                    f"component '{name}' has a componentTypeSelector with value without keyPath",
                    name,
                )
            )
        for key in sorted(labels or {}):
            kpath = f"{spath}.matchLabels[{json.dumps(key)}]"
            out.extend(match_label_findings(kpath, key, (labels or {})[key], name))
    return out


def _cycles(karta: Karta, comps: list[tuple[str, Component]]) -> list[Finding]:
    parent = {c.name: c.owner_ref for _, c in comps[1:] if c.owner_ref}
    paths = {c.name: p for p, c in comps}
    reported: set[str] = set()
    out: list[Finding] = []
    for _, comp in comps[1:]:
        chain: list[str] = []
        node: str | None = comp.name
        while node is not None and node not in chain:
            chain.append(node)
            node = parent.get(node)
        if node is None:
            continue
        cycle = chain[chain.index(node) :]
        if reported.intersection(cycle):
            continue
        reported.update(cycle)
        out.append(
            Finding(
                f"{paths[comp.name]}.ownerRef",
                FindingCode.OWNERSHIP_CYCLE,
                ERROR,
                f"ownership cycle detected involving component {comp.name} "
                f"({' -> '.join([*cycle, cycle[0]])})",
                comp.name,
            )
        )
    return out


def _gang_rules(karta: Karta) -> list[Finding]:
    gang = karta.gang_scheduling
    if gang is None:
        return []
    names = {c.name for c in karta.components()}
    out: list[Finding] = []
    for gi, group in enumerate(gang.pod_groups):
        for mi, member in enumerate(group.members):
            if member.component_name not in names:
                out.append(
                    Finding(
                        f"{_GANG}.podGroups[{gi}].members[{mi}].componentName",
                        FindingCode.UNKNOWN_POD_GROUP_MEMBER,
                        ERROR,
                        f"pod-group member component '{member.component_name}' is not defined "
                        "(should be a root or child component)",
                        member.component_name,
                    )
                )
    if gang.pod_group is not None:
        for si, sub in enumerate(gang.pod_group.sub_groups):
            if sub.component_name not in names:
                out.append(
                    Finding(
                        f"{_GANG}.podGroup.subGroups[{si}].componentName",
                        FindingCode.UNKNOWN_SUBGROUP_COMPONENT,
                        ERROR,
                        f"pod-group subgroup component '{sub.component_name}' is not defined "
                        "(should be a root or child component)",
                        sub.component_name,
                    )
                )
    return out


@functools.lru_cache(maxsize=4096)
def _verdict(expr: str) -> tuple[str, str, int | None, tuple[Any, ...]]:
    """What the jq rules say about one expression: ("ok", "", None, violations), ("parse",
    message, offset, ()) or ("deep", "", None, ()). Memoised by text: the same expressions
    recur across definitions, and parsing is most of validate's time."""
    try:
        return "ok", "", None, tuple(jq.karta_violations(expr))
    except jq.JqError as exc:
        return "parse", exc.message, exc.offset, ()
    except RecursionError:
        return "deep", "", None, ()


def _jq_rules(fields: Sequence[JqField]) -> list[Finding]:
    out: list[Finding] = []
    for field in fields:
        expr = field.expression
        verdict, message, offset, violations = _verdict(expr)
        if verdict == "parse":
            text = f"failed to parse JQ expression '{expr}': {message}"
        elif verdict == "deep":
            text = f"failed to parse JQ expression '{expr[:40]}…': it nests too deeply"
        else:
            out.extend(
                Finding(
                    field.path,
                    FindingCode.JQ_FORBIDDEN,
                    ERROR,
                    f"JQ expression '{expr}' failed validation: {violation.message}",
                    field.component,
                    violation.offset,
                )
                for violation in violations
            )
            continue
        out.append(
            Finding(field.path, FindingCode.JQ_PARSE_ERROR, ERROR, text, field.component, offset)
        )
    return out


def _action_rules(comps: list[tuple[str, Component]], jq_faults: set[str]) -> list[Finding]:
    """Suspend/resume actions must write a location and carry JSON text (else they always fail)."""
    out: list[Finding] = []
    for path, comp in comps:
        if comp.suspend_definition is None:
            continue
        for key, actions in (
            ("suspendActions", comp.suspend_definition.suspend_actions),
            ("resumeActions", comp.suspend_definition.resume_actions),
        ):
            for i, action in enumerate(actions):
                apath = f"{path}.suspendDefinition.{key}[{i}]"
                if action.path and f"{apath}.path" not in jq_faults:
                    try:
                        bad = jq.unwritable(action.path)
                    except (jq.JqError, RecursionError):
                        bad = None  # a parse error is reported by the jq rules
                    if bad is not None:
                        out.append(
                            Finding(
                                f"{apath}.path",
                                FindingCode.ACTION_PATH_NOT_WRITABLE,
                                ERROR,
                                f"{key}[{i}]: path '{action.path}' does not address a writable "
                                f"location: {bad.message}",
                                comp.name,
                                bad.offset,
                            )
                        )
                try:
                    json.loads(action.value)
                except ValueError as exc:
                    out.append(
                        Finding(
                            f"{apath}.value",
                            FindingCode.ACTION_VALUE_NOT_JSON,
                            ERROR,
                            f"{key}[{i}]: value {action.value!r} is not JSON text ({exc}); "
                            "write strings quoted, e.g. '\"Suspended\"'",
                            comp.name,
                        )
                    )
    return out


def _document_warnings(doc: Mapping[str, Any]) -> list[Finding]:
    """Advice only the document shows: a status mapping key written with no matcher."""
    spec = doc.get("spec")
    structure = spec.get("structureDefinition") if isinstance(spec, dict) else None
    if not isinstance(structure, dict):
        return []
    comps: list[tuple[str, Any]] = [(_ROOT, structure.get("rootComponent"))]
    children = structure.get("childComponents")
    if isinstance(children, list):
        comps += [(f"{_STRUCT}.childComponents[{i}]", c) for i, c in enumerate(children)]
    out: list[Finding] = []
    for path, comp in comps:
        if not isinstance(comp, dict):
            continue
        status = comp.get("statusDefinition")
        mappings = status.get("statusMappings") if isinstance(status, dict) else None
        if not isinstance(mappings, dict):
            continue
        name = comp.get("name") if isinstance(comp.get("name"), str) else None
        for key in StatusMappings.KEYS:
            if key in mappings and mappings[key] in (None, []):
                out.append(
                    Finding(
                        f"{path}.statusDefinition.statusMappings.{key}",
                        FindingCode.EMPTY_STATUS_MAPPING,
                        WARNING,
                        f"'{key}' is present but has no matcher: the workload is never "
                        f"{key.capitalize()}; add a matcher or remove the key",
                        name or None,
                    )
                )
    return out


def _matcher_warnings(karta: Karta, path: str, comp: Component) -> Iterable[Finding]:
    status = comp.status_definition
    if status is None:
        return
    spath = f"{path}.statusDefinition"
    if comp is not karta.root:
        yield Finding(
            spath,
            FindingCode.STATUS_ON_CHILD,
            WARNING,
            "a statusDefinition is only evaluated on the root component; this one is ignored",
            comp.name,
        )
    entries: list[tuple[str, tuple[StatusMatcher, ...]]] = [
        (name.lower(), matchers) for name, matchers in status.status_mappings.entries()
    ]
    conditions = status.conditions_definition
    reads_conditions = conditions is not None and bool(conditions.path)
    reads_phase = status.phase_definition is not None and bool(status.phase_definition.path)
    if conditions is not None and not conditions.path:
        yield Finding(
            f"{spath}.conditionsDefinition.path",
            FindingCode.CONDITIONS_WITHOUT_PATH,
            WARNING,
            "conditionsDefinition has an empty path: no condition is ever read, so its "
            "typeFieldName, statusFieldName, messageFieldName and reasonFieldName have no effect",
            comp.name,
        )
    if not any(matchers for _, matchers in entries):
        yield Finding(
            f"{spath}.statusMappings",
            FindingCode.NO_STATUS_MAPPINGS,
            WARNING,
            "no status mapping is defined: the workload's status will always be Undefined",
            comp.name,
        )
    for key, matchers in sorted(entries):
        for i, matcher in enumerate(matchers):
            mpath = f"{spath}.statusMappings.{key}[{i}]"
            if matcher.by_phase is None and not matcher.by_conditions and not matcher.by_expression:
                yield Finding(
                    mpath,
                    FindingCode.EMPTY_STATUS_MATCHER,
                    WARNING,
                    f"a matcher with nothing set matches every workload: it is always {key}",
                    comp.name,
                )
            if matcher.by_phase is not None and not reads_phase:
                yield Finding(
                    f"{mpath}.byPhase",
                    FindingCode.PHASE_WITHOUT_PHASE_DEFINITION,
                    WARNING,
                    "byPhase can never match: there is no phaseDefinition path",
                    comp.name,
                )
            if matcher.by_conditions and not reads_conditions:
                yield Finding(
                    f"{mpath}.byConditions",
                    FindingCode.CONDITIONS_WITHOUT_CONDITIONS_DEFINITION,
                    WARNING,
                    "byConditions can never match: there is no conditionsDefinition path",
                    comp.name,
                )


def _warnings(karta: Karta, comps: list[tuple[str, Component]]) -> list[Finding]:
    out: list[Finding] = []
    pod_bearing = [c for _, c in comps if c.has_pod_definition]
    for path, comp in comps:
        out.extend(_matcher_warnings(karta, path, comp))
        selector = comp.pod_selector
        type_selector = selector.component_type_selector if selector else None
        if comp.has_pod_definition and type_selector is None and len(pod_bearing) > 1:
            out.append(
                Finding(
                    f"{path}.podSelector",
                    FindingCode.UNATTRIBUTABLE_COMPONENT,
                    WARNING,
                    f"component '{comp.name}' has a pod spec but no componentTypeSelector while "
                    f"{len(pod_bearing)} components have pod specs: no pod can be attributed to it",
                    comp.name,
                )
            )
        spec = comp.spec_definition
        if spec is not None and spec.metadata_path and not spec.pod_spec_path:
            out.append(
                Finding(
                    f"{path}.specDefinition.metadataPath",
                    FindingCode.METADATA_WITHOUT_POD_SPEC,
                    WARNING,
                    "metadataPath is only used together with podSpecPath",
                    comp.name,
                )
            )
        if (
            comp.scale_definition is not None
            and not comp.has_pod_definition
            and not karta.children_of(comp.name)
        ):
            out.append(
                Finding(
                    f"{path}.scaleDefinition",
                    FindingCode.SCALE_WITHOUT_PODS,
                    WARNING,
                    f"component '{comp.name}' has a scale but neither a pod spec nor children: "
                    "its replicas multiply nothing",
                    comp.name,
                )
            )
        if (
            comp is not karta.root
            and comp.kind is not None
            and not (comp.kind.version and comp.kind.kind)
        ):
            out.append(
                Finding(
                    f"{path}.kind",
                    FindingCode.INCOMPLETE_KIND,
                    WARNING,
                    f"component '{comp.name}' names a kind without version or kind",
                    comp.name,
                )
            )
        if selector is not None:
            for sub, expr in (
                (
                    "componentTypeSelector.keyPath",
                    type_selector.key_path if type_selector else None,
                ),
                (
                    "componentInstanceSelector.idPath",
                    selector.component_instance_selector.id_path
                    if selector.component_instance_selector
                    else None,
                ),
                (
                    "replicaSelector.keyPath",
                    selector.replica_selector.key_path if selector.replica_selector else None,
                ),
            ):
                if expr and not _starts_with_pod_field(expr):
                    out.append(
                        Finding(
                            f"{path}.podSelector.{sub}",
                            FindingCode.SELECTOR_NOT_POD_FIELD,
                            WARNING,
                            f"'{expr}' runs against a Pod but does not start at one of its "
                            f"fields ({', '.join(_POD_FIELDS)})",
                            comp.name,
                        )
                    )
    out += _list_key_warnings(karta)
    out += _gang_warnings(karta)
    return out


def _starts_with_pod_field(expr: str) -> bool:
    text = expr.lstrip(" (")
    return any(
        text == f or text.startswith((f + ".", f + "[", f + " ", f + "|", f + "?"))
        for f in _POD_FIELDS
    )


def _dupes(keys: Iterable[str]) -> list[tuple[int, str]]:
    seen: set[str] = set()
    out = []
    for i, key in enumerate(keys):
        if key in seen:
            out.append((i, key))
        seen.add(key)
    return out


def _list_key_warnings(karta: Karta) -> list[Finding]:
    out: list[Finding] = []
    kinds = karta.spec.structure_definition.additional_child_kinds
    for i, kind in _dupes(k.kind for k in kinds):
        out.append(
            Finding(
                f"{_STRUCT}.additionalChildKinds[{i}].kind",
                FindingCode.DUPLICATE_LIST_KEY,
                WARNING,
                f"kind {kind!r} is listed twice; an API server rejects duplicate keys of this list",
            )
        )
    gang = karta.gang_scheduling
    if gang is not None:
        for i, name in _dupes(g.name for g in gang.pod_groups):
            out.append(
                Finding(
                    f"{_GANG}.podGroups[{i}].name",
                    FindingCode.DUPLICATE_LIST_KEY,
                    WARNING,
                    f"pod group {name!r} is listed twice; an API server rejects duplicate keys",
                )
            )
        for gi, group in enumerate(gang.pod_groups):
            for i, name in _dupes(m.component_name for m in group.members):
                out.append(
                    Finding(
                        f"{_GANG}.podGroups[{gi}].members[{i}].componentName",
                        FindingCode.DUPLICATE_LIST_KEY,
                        WARNING,
                        f"member {name!r} is listed twice; an API server rejects duplicate keys",
                        name,
                    )
                )
        if gang.pod_group is not None:
            for i, name in _dupes(s.component_name for s in gang.pod_group.sub_groups):
                out.append(
                    Finding(
                        f"{_GANG}.podGroup.subGroups[{i}].componentName",
                        FindingCode.DUPLICATE_LIST_KEY,
                        WARNING,
                        f"subgroup {name!r} is listed twice; an API server rejects duplicate keys",
                        name,
                    )
                )
    return out


def _gang_warnings(karta: Karta) -> list[Finding]:
    gang = karta.gang_scheduling
    if gang is None:
        return []
    out: list[Finding] = []
    if gang.pod_group is not None and gang.pod_groups:
        out.append(
            Finding(
                _GANG,
                FindingCode.BOTH_POD_GROUP_FORMS,
                WARNING,
                "both podGroup and the deprecated podGroups are set; consumers use podGroup",
            )
        )
    if gang.pod_group is not None:
        topologies = [(f"{_GANG}.podGroup.topology", gang.pod_group.topology)]
        topologies += [
            (f"{_GANG}.podGroup.subGroups[{i}].topology", s.topology)
            for i, s in enumerate(gang.pod_group.sub_groups)
        ]
        for path, topo in topologies:
            if topo is None:
                continue
            if not topo.topology_name:
                out.append(
                    Finding(
                        f"{path}.topologyName",
                        FindingCode.TOPOLOGY_WITHOUT_NAME,
                        WARNING,
                        "a topology constraint without topologyName is ignored by schedulers",
                    )
                )
            if not topo.preferred_topology_level and not topo.required_topology_level:
                out.append(
                    Finding(
                        path,
                        FindingCode.TOPOLOGY_WITHOUT_LEVEL,
                        WARNING,
                        "a topology constraint with neither preferredTopologyLevel nor "
                        "requiredTopologyLevel constrains nothing",
                    )
                )
        if gang.pod_group.sub_groups:
            by_name = {c.name: c for c in karta.components()}
            for i, sub in enumerate(gang.pod_group.sub_groups):
                comp = by_name.get(sub.component_name)
                if comp is not None and not _has_scale(karta, comp):
                    out.append(
                        Finding(
                            f"{_GANG}.podGroup.subGroups[{i}].componentName",
                            FindingCode.SUBGROUP_WITHOUT_SCALE,
                            WARNING,
                            f"component '{comp.name}' and its descendants have no "
                            "scaleDefinition: a scheduler cannot size this subgroup",
                            comp.name,
                        )
                    )
    return out


def _has_scale(karta: Karta, comp: Component) -> bool:
    if comp.scale_definition is not None:
        return True
    return any(c.scale_definition is not None for c in karta.iter_descendants(comp.name))
