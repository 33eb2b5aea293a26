"""``wlmap verify``: prove a Karta definition against real workload files, for CI.

In the spirit of the reference's ``karta-verify``: the definition is loaded and validated, each
workload object of the given files is read through it (offline, no cluster), and what it
implies — phases, desired pods, GPUs, per component replicas and instance ids, gang minimums —
is compared with an expected prediction (``--predict FILE``; the format is in docs/verify.md and
``--dump`` prints the current answer in it). Advice that does not break the definition (a status
that resolves to nothing, a spec path that extracts nothing, a pod spec without containers, a
component with no instances) is printed as warnings, and fails the run under ``--strict``.

Exit codes: 0 ok, 1 load or validation error, 2 usage, 6 prediction mismatch, 7 warnings under
``--strict`` (the worst one wins in that order: 1, 6, 7).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workload_map.catalog.definitions import Definition
from workload_map.cli.exits import ERROR, OK, CliError
from workload_map.cli.file_workload import names
from workload_map.cli.manifests import read_manifests, read_single, read_text
from workload_map.cli.outputs import PredictedComponent, PredictedGang, Prediction
from workload_map.cli.render import dump_document
from workload_map.cli.workload_view import DescribeFailed, engine_errors, read_workload
from workload_map.errors import WlmapError
from workload_map.model import Karta, load_karta, validate
from workload_map.model.views import to_json
from workload_map.yaml_import import import_yaml

if TYPE_CHECKING:
    from workload_map.cli.context import Context
    from workload_map.cli.manifests import Manifest
    from workload_map.engine import Workload
    from workload_map.model import Karta

__all__ = ["MISMATCH", "STRICT_WARNINGS", "expected_of", "run"]

MISMATCH = 6
STRICT_WARNINGS = 7

_TOP_FIELDS = {"phases", "pods", "gpus", "components", "gangs"}
_COMPONENT_FIELDS = {"replicas", "instances", "gpus"}
_GANG_FIELDS = {"minMember", "definition", "name"}


class _LoadError(CliError):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message, ERROR, hint=hint)


@dataclass
class _Checked:
    """One workload's outcome."""

    label: str
    mismatches: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    checks: int = 0


def run(args: argparse.Namespace, ctx: Context) -> int:

    karta, def_name = _load_definition(args.definition, ctx)
    root = karta.root_gvk
    workloads: list[tuple[str, Manifest]] = []
    # the objects a definition's references read: every document of the workload files (a
    # TrainJob and its runtime in one file) and of the --ref files
    pool: list[dict[str, Any]] = []
    for path in getattr(args, "ref", None) or ():
        try:
            pool += [m.obj for m in read_manifests(path, ctx.stdin)]
        except CliError as exc:
            raise _LoadError(f"--ref {exc.message}") from exc
    for path in args.workloads:
        try:
            manifests = read_manifests(path, ctx.stdin)
        except CliError as exc:
            raise _LoadError(exc.message) from exc
        pool += [m.obj for m in manifests]
        matching = [
            m
            for m in manifests
            if root is not None and m.gvk is not None and m.gvk.group_kind == root.group_kind
        ]
        if not matching:
            held = names(manifests, limit=5) or "no objects"
            raise _LoadError(
                f"{path}: no {root.kind if root else '?'} object for definition {def_name} "
                f"(the file holds: {held})"
            )
        workloads.extend((path, m) for m in matching)
    expected = _load_expected(args.predict, ctx) if args.predict else None
    results = []
    for path, manifest in workloads:
        obj, label = manifest.obj, manifest.label
        view, wl = _describe(karta, obj, def_name, path, [o for o in pool if o is not obj])
        checked = _Checked(f"{label} ({path})")
        checked.warnings = _warnings(karta, wl, view)
        actual = expected_of(view, wl)
        if args.dump:
            if len(workloads) > 1:
                ctx.stdout.write(f"# {checked.label}\n")
            ctx.stdout.write(dump_document(actual, "yaml"))
            if len(workloads) > 1:
                ctx.stdout.write("---\n")
        prediction = _prediction_for(expected, label, path, obj, len(workloads))
        if prediction is not None:
            checked.checks, checked.mismatches = _compare(prediction, actual, view)
        results.append(checked)
    if expected is not None and "workloads" in expected:
        known = {r.label for r in results}
        for key in expected["workloads"]:
            if not any(_key_matches(key, label) for label in known):
                results.append(
                    _Checked(f"{key} (--predict)", [f"no workload file holds {key}"], [], 0)
                )
    return _report(results, args, ctx)


def _load_definition(path: str, ctx: Context) -> tuple[Karta, str]:

    try:
        doc = read_single(path, ctx.stdin).obj
    except CliError as exc:
        raise _LoadError(f"--definition {exc.message}") from exc
    try:
        karta = load_karta(doc)
    except WlmapError as exc:  # anything else is a bug: main() says so
        raise _LoadError(f"--definition {path}: not a usable Karta: {exc}") from exc
    if not isinstance(karta, Karta):
        raise _LoadError(f"--definition {path}: expected one Karta definition")
    findings = validate(karta)
    errors = [f for f in findings if f.is_error]
    for finding in findings:
        if not finding.is_error:
            ctx.warn(f"{path}: {finding}")
    if errors:
        ctx.stdout.write(f"INVALID: {path}\n" + "".join(f"  {f}\n" for f in errors))
        raise _LoadError(f"{len(errors)} finding(s) in {path}", hint=f"see wlmap validate {path}")
    return karta, str(karta.name or path)


def _describe(
    karta: Karta, obj: dict[str, Any], name: str, path: str, refs: list[dict[str, Any]]
) -> tuple[dict[str, Any], Workload]:

    try:
        wl, view = read_workload(
            obj, None, Definition(karta, name, "file"), file_mode=True, references=refs
        )
    except DescribeFailed as exc:
        raise _LoadError(f"{path}: {exc.message}") from exc
    return view, wl


def _warnings(karta: Karta, wl: Workload, view: dict[str, Any]) -> list[str]:
    """The reference's strict warnings: what a definition author most likely got wrong."""
    out: list[str] = []
    status_def = karta.root.status_definition
    if status_def is None:
        out.append("status unresolved: the root component has no statusDefinition")
    elif list(view.get("phases") or []) == ["Undefined"]:
        out.append("status unresolved: no status mapping matches the object (phase Undefined)")
    for message in view.get("errors") or []:
        out.append(str(message))

    for comp in karta.components():
        try:
            ids = wl.instance_ids(comp.name)
        except engine_errors() as exc:  # an id path that fails is reported, not raised
            out.append(f"component {comp.name}: instance ids cannot be read: {exc}")
            continue
        if comp.instance_id_path and not ids:
            out.append(
                f"component {comp.name}: no instances (instanceIdPath {comp.instance_id_path} "
                "gives no ids)"
            )
            continue
        if not comp.has_pod_definition:
            continue
        spec = comp.spec_definition
        assert spec is not None
        path = spec.pod_template_spec_path or spec.pod_spec_path or "fragmentedPodSpecDefinition"
        try:
            instances = wl.instances(comp.name)
        except engine_errors() as exc:
            out.append(f"component {comp.name}: pod spec cannot be read: {exc}")
            continue
        for inst_id, inst in instances.items():
            where = f"component {comp.name}" + (f"[{inst_id}]" if inst_id else "")
            if not inst.describes_pods:
                out.append(f"{where}: spec path {path} extracts nothing")
                continue
            pod_spec = inst.pod_spec_view()
            containers = pod_spec.get("containers") if isinstance(pod_spec, dict) else None
            if not containers:
                out.append(f"{where}: the pod spec from {path} has no containers")
    return out


def _nodes(components: list[Any], prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every component node with its ``owner/child`` path, depth first."""
    out = []
    for node in components:
        if not isinstance(node, dict):
            continue
        path = f"{prefix}/{_node_key(node)}" if prefix else _node_key(node)
        out.append((path, node))
        out.extend(_nodes(list(node.get("children") or []), path))
    return out


def _node_key(node: dict[str, Any]) -> str:
    comp, inst = node.get("component"), node.get("instance")
    if inst not in (None, "") and node.get("name") == inst:
        return f"{comp}[{inst}]"
    return str(node.get("name"))


def _num(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def expected_of(view: dict[str, Any], wl: Any) -> dict[str, Any]:
    """What the definition implies for the object, in the ``--predict`` file's format
    (:class:`~workload_map.cli.outputs.Prediction`, schemas/verify-dump.schema.json)."""

    nodes = _nodes(list(view.get("components") or []))
    components: dict[str, PredictedComponent] = {}
    by_component: dict[str, list[dict[str, Any]]] = {}
    for _, node in nodes:
        by_component.setdefault(str(node.get("component")), []).append(node)
    for comp, members in by_component.items():
        try:
            ids = [str(i) for i in wl.instance_ids(comp) if i]
        except engine_errors():
            ids = sorted({str(n.get("instance")) for n in members if n.get("instance")})
        components[comp] = PredictedComponent(
            instances=tuple(ids),
            replicas=sum(_num((n.get("replicas") or {}).get("desired")) for n in members),
            gpus=sum(_num((n.get("resources") or {}).get("gpus")) for n in members),
        )
    for path, node in nodes:
        if path in components:
            continue
        components[path] = PredictedComponent(
            replicas=_num((node.get("replicas") or {}).get("desired")),
            gpus=_num((node.get("resources") or {}).get("gpus")),
        )
    gangs = tuple(
        PredictedGang(group.get("minMember"), group.get("definition") or None)
        for group in view.get("podGroups") or []
        if isinstance(group, dict)
    )
    prediction = Prediction(
        phases=tuple(view.get("phases") or []),
        pods=_num((view.get("pods") or {}).get("desired")),
        gpus=_num((view.get("resources") or {}).get("gpus")),
        components=components,
        gangs=gangs,
    )
    result: dict[str, Any] = to_json(prediction)
    return result


def _load_expected(path: str, ctx: Context) -> dict[str, Any]:

    yaml = import_yaml()

    try:
        text = read_text(path, ctx.stdin)
    except CliError as exc:
        raise _LoadError(f"--predict {exc.message}") from exc
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _LoadError(f"--predict {path}: not valid YAML or JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise _LoadError(f"--predict {path}: expected a mapping (see docs/verify.md)")
    if "workloads" in doc:
        extra = sorted(set(doc) - {"workloads"})
        if extra or not isinstance(doc["workloads"], dict):
            raise _LoadError(
                f"--predict {path}: with workloads:, that is the only key and it maps "
                "Kind/name (or name, or file) to a prediction"
            )
        for key, pred in doc["workloads"].items():
            _check_prediction(pred, f"{path}: workloads.{key}")
    else:
        _check_prediction(doc, path)
    return doc


def _check_prediction(pred: Any, where: str) -> None:
    if not isinstance(pred, dict):
        raise _LoadError(f"--predict {where}: expected a mapping")
    unknown = sorted(set(pred) - _TOP_FIELDS)
    if unknown:
        raise _LoadError(
            f"--predict {where}: unknown field {', '.join(unknown)} "
            f"(known: {', '.join(sorted(_TOP_FIELDS))})"
        )
    comps = pred.get("components")
    if comps is not None:
        if not isinstance(comps, dict):
            raise _LoadError(f"--predict {where}: components must map a component key to fields")
        for key, fields in comps.items():
            if not isinstance(fields, dict) or set(fields) - _COMPONENT_FIELDS:
                raise _LoadError(
                    f"--predict {where}: components.{key}: expected a mapping of "
                    f"{', '.join(sorted(_COMPONENT_FIELDS))}"
                )
    gangs = pred.get("gangs")
    if gangs is not None:
        if not isinstance(gangs, list):
            raise _LoadError(f"--predict {where}: gangs must be a list")
        for i, gang in enumerate(gangs):
            ok = isinstance(gang, int) or (
                isinstance(gang, dict) and "minMember" in gang and not set(gang) - _GANG_FIELDS
            )
            if not ok:
                raise _LoadError(
                    f"--predict {where}: gangs[{i}]: expected a number (the minimum) or "
                    "{minMember: N, definition: COMPONENT}"
                )


def _key_matches(key: str, label: str) -> bool:
    """``Kind/name``, ``name`` or the file path name a workload (label: ``Kind/name (file)``)."""
    ident, _, rest = label.partition(" (")
    path = rest.rstrip(")")
    return key in (ident, ident.partition("/")[2], path) or path.endswith("/" + key)


def _prediction_for(
    expected: dict[str, Any] | None, label: str, path: str, obj: dict[str, Any], count: int
) -> dict[str, Any] | None:
    if expected is None:
        return None
    if "workloads" not in expected:
        if count > 1:
            raise _LoadError(
                "--predict: several workloads to verify; key the prediction by workload "
                "(workloads: {Kind/name: …}, see docs/verify.md)"
            )
        return expected
    for key, pred in expected["workloads"].items():
        if _key_matches(str(key), f"{label} ({path})"):
            return dict(pred)
    return None


def _compare(
    pred: dict[str, Any], actual: dict[str, Any], view: dict[str, Any]
) -> tuple[int, list[str]]:
    checks = 0
    out: list[str] = []

    def check(where: str, want: Any, got: Any) -> None:
        nonlocal checks
        checks += 1
        if want != got:
            out.append(f"{where}: expected {_show(want)}, got {_show(got)}")

    if "phases" in pred:
        want = pred["phases"] if isinstance(pred["phases"], list) else [pred["phases"]]
        check("phases", sorted(map(str, want)), sorted(actual["phases"]))
    for key in ("pods", "gpus"):
        if key in pred:
            check(key, pred[key], actual[key])
    comps = actual["components"]
    for key, fields in (pred.get("components") or {}).items():
        node = comps.get(str(key))
        if node is None:
            checks += 1
            known = ", ".join(sorted(comps)) or "none"
            out.append(f"components.{key}: no such component or instance (known: {known})")
            continue
        for name, want in fields.items():
            if name == "instances":
                want_ids = sorted(map(str, want)) if isinstance(want, list) else want
                check(f"components.{key}.instances", want_ids, sorted(node.get("instances", [])))
            else:
                check(f"components.{key}.{name}", want, node.get(name))
    if "gangs" in pred:
        want_gangs = [g if isinstance(g, dict) else {"minMember": g} for g in pred["gangs"]]
        have = list(actual["gangs"])
        checks += 1
        if len(want_gangs) != len(have):
            out.append(f"gangs: expected {len(want_gangs)} gang(s), got {len(have)}: {_show(have)}")
        else:
            left = list(have)
            for want_gang in sorted(want_gangs, key=lambda g: "definition" not in g):
                match = next(
                    (
                        g
                        for g in left
                        if g.get("minMember") == want_gang["minMember"]
                        and want_gang.get("definition", g.get("definition")) == g.get("definition")
                    ),
                    None,
                )
                if match is None:
                    out.append(f"gangs: expected {_show(want_gang)}, got {_show(have)}")
                    break
                left.remove(match)
    return checks, out


def _show(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


def _report(results: list[_Checked], args: argparse.Namespace, ctx: Context) -> int:
    out = ctx.stderr if args.dump else ctx.stdout
    mismatched = warned = 0
    for r in results:
        for message in r.warnings:
            ctx.warn(f"{r.label}: {message}")
        if r.mismatches:
            mismatched += 1
            out.write(f"MISMATCH: {r.label}\n" + "".join(f"  {m}\n" for m in r.mismatches))
        elif r.checks:
            out.write(f"OK: {r.label}: {r.checks} prediction check(s) passed\n")
        else:
            out.write(f"OK: {r.label}: read through the definition (no prediction given)\n")
        warned += bool(r.warnings)
    if mismatched:
        ctx.flush_warnings()
        raise CliError(f"{mismatched} workload(s) differ from the prediction", MISMATCH)
    if warned and args.strict:
        ctx.flush_warnings()
        raise CliError(
            f"{sum(len(r.warnings) for r in results)} warning(s) under --strict", STRICT_WARNINGS
        )
    return OK
