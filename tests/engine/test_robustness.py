"""Definitions and workloads never seen before: ``describe()`` answers or raises an EngineError.

Hypothesis draws Kartas (every spec shape, array- and map-shaped instances, selectors, scales,
statuses, both gang forms) and objects and pods with missing fields and values of the wrong
type (strings where numbers are expected, lists where objects are, ``null`` status, conditions
that are not a list, pods without labels or metadata). ``Workload.describe()`` must return the
INTERFACES.md shape, typed in every field, or raise the engine's documented errors — never a
``TypeError``, a ``KeyError`` or a hang.
"""

from __future__ import annotations

import contextlib
import copy
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.engine import EngineError, Workload

# the jq engine raises the recursion limit for deep programs; hypothesis notes it, harmlessly
pytestmark = pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")

#: a hang guard counted in work, not in seconds (speed targets live in benchmarks/): the calls
#: (Python and C) one ``describe`` may make on this thread. The costliest drawn examples make
#: about 12,000 and the 2**70-replica workload below 17,000; a runaway loop (replicas walked one
#: by one) passes the bound in well under a second, on any machine and under any load
MAX_CALLS = 1_000_000


class TooMuchWork(BaseException):
    """Raised by the call counter; a BaseException, so that no ``except Exception`` of the
    code under test takes it for an error of its own."""


@contextlib.contextmanager
def counted_calls(limit: int = MAX_CALLS) -> Iterator[None]:
    """Counts the calls made on this thread inside the block; more than ``limit`` stops it."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1
            if count > limit:
                raise TooMuchWork(f"more than {limit} calls")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


KEYS = [
    "a",
    "b",
    "m",
    "items",
    "name",
    "replicas",
    "min",
    "template",
    "spec",
    "containers",
    "resources",
    "requests",
    "limits",
    "cpu",
    "memory",
    "nvidia.com/gpu",
    "labels",
    "phase",
    "conditions",
    "type",
    "status",
    "initContainers",
    "overhead",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", "1", "2", "x", "500m", "1Gi", "-1", "True", "Ready", "Running", "a"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    ),
    max_leaves=12,
)

# expressions over the object: plain paths, defaults, iterations over arrays and maps
OBJ_EXPRS = [
    ".spec.a",
    ".spec.a.b",
    ".spec.replicas",
    ".spec.replicas // 1",
    ".spec.min",
    ".spec.template",
    ".spec.template.spec",
    ".spec.items[0]",
    ".spec.items[].name",
    ".spec.items[].template",
    ".spec.items[].replicas",
    ".spec.items[]? | .spec",
    ".spec.m | keys[]",
    ".spec.m | to_entries[] | .key",
    ".spec.m[] | .template",
    ".spec.m[] | .replicas // 1",
    ".spec.m[]?.spec",
    ".spec.a | tostring",
    '.spec["a"].resources',
    ".spec.containers",
    ".spec.labels",
    ".status.phase",
    ".status.conditions",
    ".status",
    "(.spec.replicas // 1) * 2",
    ".spec | length",
]
POD_EXPRS = [
    ".metadata.labels.role",
    '.metadata.labels["idx"]',
    ".metadata.name",
    ".metadata.labels",
    ".spec.nodeName",
    ".metadata.annotations.k",
    ".status.phase",
    '.metadata.labels.role == "w"',
    ".metadata.labels.idx | tonumber",
]
ROLES = ["w", "m", "x", "0", "1"]

obj_expr = st.sampled_from(OBJ_EXPRS)
pod_expr = st.sampled_from(POD_EXPRS)


# coherent path families (each a component's paths over the same part of the object), so
# extraction mostly succeeds and the later stages run; "random" mixes any expressions
FAMILIES: dict[str, dict[str, list[str]]] = {
    "single": {
        "template": [".spec.template", ".spec.a.template"],
        "pod": [".spec.template.spec", ".spec.a.spec"],
        "meta": [".spec.template.metadata", ".spec.labels"],
        "fragment": [".spec.a.resources", ".spec.containers", ".spec.labels", ".spec.a.name"],
        "scale": [".spec.replicas", ".spec.replicas // 1", ".spec.min", ".spec.a.replicas"],
    },
    "array": {
        "ids": [".spec.items[].name"],
        "template": [".spec.items[].template"],
        "pod": [".spec.items[].spec"],
        "meta": [".spec.items[].template.metadata"],
        "fragment": [".spec.items[].resources", ".spec.items[].name"],
        "scale": [".spec.items[].replicas", ".spec.items[] | .replicas // 1"],
    },
    "map": {
        "ids": [".spec.m | keys[]", ".spec.m | to_entries[] | .key"],
        "template": [".spec.m[] | .template"],
        "pod": [".spec.m[] | .spec", ".spec.m[]?.spec"],
        "meta": [".spec.m[] | .template.metadata"],
        "fragment": [".spec.m[] | .resources", ".spec.m[] | .name"],
        "scale": [".spec.m[] | .replicas // 1", ".spec.m[] | .replicas"],
    },
}


@st.composite
def components(draw: st.DrawFn, name: str, owners: list[str]) -> dict[str, Any]:
    comp: dict[str, Any] = {"name": name}
    family_name = draw(st.sampled_from([*FAMILIES, "random"]))
    family = FAMILIES.get(family_name)

    def path(part: str) -> str:
        if family is None or part not in family:
            return draw(obj_expr)
        return draw(st.sampled_from(family[part]))

    if owners:
        comp["ownerRef"] = draw(st.sampled_from(owners))
    if draw(st.booleans()):
        comp["kind"] = {"group": "apps", "version": "v1", "kind": draw(st.sampled_from(["A", "B"]))}
    shape = draw(st.sampled_from(["none", "template", "pod", "pod+meta", "fragments"]))
    if shape == "template":
        comp["specDefinition"] = {"podTemplateSpecPath": path("template")}
    elif shape in ("pod", "pod+meta"):
        comp["specDefinition"] = {"podSpecPath": path("pod")}
        if shape == "pod+meta":
            comp["specDefinition"]["metadataPath"] = path("meta")
    elif shape == "fragments":
        fields = draw(
            st.lists(
                st.sampled_from(
                    [
                        "resourcesPath",
                        "containersPath",
                        "containerPath",
                        "labelsPath",
                        "schedulerNamePath",
                        "imagePath",
                        "resourceClaimsPath",
                    ]
                ),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
        comp["specDefinition"] = {
            "fragmentedPodSpecDefinition": {f: path("fragment") for f in fields}
        }
    if draw(st.booleans()):
        scale = {}
        for key in draw(
            st.lists(
                st.sampled_from(["replicasPath", "minReplicasPath", "maxReplicasPath"]),
                min_size=1,
                unique=True,
            )
        ):
            scale[key] = path("scale")
        comp["scaleDefinition"] = scale
    selector: dict[str, Any] = {}
    if draw(st.booleans()):
        type_selector: dict[str, Any] = {}
        if draw(st.booleans()):
            type_selector["keyPath"] = draw(pod_expr)
            if draw(st.booleans()):
                type_selector["value"] = draw(st.sampled_from(ROLES))
        if not type_selector or draw(st.booleans()):
            type_selector["matchLabels"] = {"role": draw(st.sampled_from(ROLES))}
        selector["componentTypeSelector"] = type_selector
    if family_name in ("array", "map") or (family is None and draw(st.booleans())):
        comp["instanceIdPath"] = path("ids")
        selector["componentInstanceSelector"] = {"idPath": draw(pod_expr)}
    if draw(st.booleans()):
        selector["replicaSelector"] = {"keyPath": draw(pod_expr)}
    if selector:
        comp["podSelector"] = selector
    return comp


@st.composite
def statuses(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"statusMappings": {}}
    if draw(st.booleans()):
        out["phaseDefinition"] = {"path": draw(st.one_of(st.just(".status.phase"), obj_expr))}
    if draw(st.booleans()):
        out["conditionsDefinition"] = {
            "path": draw(st.one_of(st.just(".status.conditions"), obj_expr))
        }
    for status in draw(
        st.lists(st.sampled_from(["running", "failed", "completed", "degraded"]), max_size=3)
    ):
        matcher: dict[str, Any] = {}
        kind = draw(st.sampled_from(["phase", "conditions", "expression"]))
        if kind == "phase":
            matcher["byPhase"] = draw(st.sampled_from(["Running", "1", ""])) or "Running"
        elif kind == "conditions":
            matcher["byConditions"] = [{"type": "Ready", "status": draw(st.sampled_from(["True"]))}]
        else:
            matcher["byExpression"] = {"expression": draw(obj_expr), "expectedResult": "1"}
        out["statusMappings"].setdefault(status, []).append(matcher)
    return out


@st.composite
def kartas(draw: st.DrawFn, wild: bool = False) -> dict[str, Any]:
    """A definition; ``wild``: owner references may be unknown, circular or the component itself."""
    count = draw(st.integers(0, 4))
    names = ["root"] + [f"c{i}" for i in range(count)]
    root = draw(components("root", ["c0", "ghost"] if wild and count else []))
    root["kind"] = {"group": "ex.com", "version": "v1", "kind": "Thing"}
    root["statusDefinition"] = draw(statuses())  # required on the root
    children = [
        draw(components(names[i + 1], [*names, "ghost"] if wild else names[: i + 1]))
        for i in range(count)
    ]
    spec: dict[str, Any] = {
        "structureDefinition": {"rootComponent": root, "childComponents": children}
    }
    gang = draw(st.sampled_from(["none", "alpha", "v2"]))
    if gang == "alpha":
        groups = []
        for index in range(draw(st.integers(1, 2))):
            members = [
                {
                    "componentName": draw(st.sampled_from(names)),
                    "groupByKeyPaths": draw(st.lists(pod_expr, max_size=2)),
                    "filters": draw(st.lists(pod_expr, max_size=1)),
                }
                for _ in range(draw(st.integers(1, 2)))
            ]
            groups.append({"name": f"g{index}", "members": members})
        spec["optimizationInstructions"] = {"gangScheduling": {"podGroups": groups}}
    elif gang == "v2":
        subs = [
            {"componentName": n}
            for n in draw(st.lists(st.sampled_from(names), max_size=3, unique=True))
        ]
        mapping: dict[str, Any] = {"name": "grp", "subGroups": subs}
        if draw(st.booleans()):
            mapping["topology"] = {"topologyName": "t", "requiredTopologyLevel": "rack"}
        spec["optimizationInstructions"] = {"gangScheduling": {"podGroup": mapping}}
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "k"},
        "spec": spec,
    }


IDS = ["x", "y", "w", "Worker"]
quantities = st.sampled_from(
    ["1", "500m", "2Gi", 3, 0.5, "x", None, [], {"a": 1}, "-1", -2, "1e999999", "9" * 5000]
)
containers = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"name": st.sampled_from(["c", "d"])},
            optional={
                "resources": st.one_of(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "requests": st.dictionaries(
                                st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "amd.com/gpu"]),
                                quantities,
                                max_size=3,
                            ),
                            "limits": st.dictionaries(
                                st.sampled_from(["cpu", "nvidia.com/gpu"]), quantities, max_size=2
                            ),
                        },
                    ),
                    json_values,
                ),
                "restartPolicy": st.sampled_from(["Always", None, 1]),
            },
        ),
        json_values,
    ),
    max_size=2,
)
pod_specs = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "containers": st.one_of(containers, json_values),
            "initContainers": containers,
            "overhead": st.one_of(st.dictionaries(st.just("cpu"), quantities), json_values),
            "resources": json_values,
        },
    ),
    json_values,
)
templates = st.one_of(
    st.none(),
    st.fixed_dictionaries({"spec": pod_specs}, optional={"metadata": json_values}),
    st.fixed_dictionaries({"spec": pod_specs}),
    json_values,
)
replica_counts = st.one_of(
    st.integers(-1, 4),
    st.integers(0, 3),
    st.sampled_from([10**9, 2**70, "3", " 2 ", "1e3", "9" * 5000]),
    quantities,
    json_values,
)
entries = st.one_of(
    st.fixed_dictionaries(
        {"name": st.sampled_from(IDS)},
        optional={
            "template": templates,
            "replicas": replica_counts,
            "spec": pod_specs,
            "resources": json_values,
        },
    ),
    json_values,
)


@st.composite
def objects(draw: st.DrawFn) -> dict[str, Any]:
    good_entries = st.fixed_dictionaries(
        {"name": st.sampled_from(IDS), "template": templates}, optional={"replicas": replica_counts}
    )
    spec = draw(
        st.one_of(
            st.fixed_dictionaries(
                {
                    "items": st.lists(good_entries, max_size=3),
                    "m": st.dictionaries(st.sampled_from(IDS), good_entries, max_size=3),
                    "template": templates,
                    "a": good_entries,
                },
                optional={"replicas": replica_counts, "containers": containers},
            ),
            st.fixed_dictionaries(
                {},
                optional={
                    "a": st.one_of(entries, json_values),
                    "replicas": replica_counts,
                    "min": replica_counts,
                    "items": st.one_of(st.lists(entries, max_size=3), json_values),
                    "m": st.one_of(st.dictionaries(st.sampled_from(IDS), entries), json_values),
                    "template": templates,
                    "containers": st.one_of(containers, json_values),
                    "labels": json_values,
                },
            ),
            json_values,
        )
    )
    metadata = draw(
        st.one_of(
            st.fixed_dictionaries({"name": st.just("obj"), "uid": st.sampled_from(["u1", ""])}),
            json_values,
        )
    )
    obj: dict[str, Any] = {"apiVersion": "ex.com/v1", "kind": "Thing", "metadata": metadata}
    if draw(st.sampled_from([True, True, True, False])):
        obj["spec"] = spec
    if draw(st.booleans()):
        obj["status"] = draw(
            st.one_of(
                st.none(),
                st.fixed_dictionaries(
                    {},
                    optional={
                        "phase": st.one_of(st.sampled_from(["Running", "1"]), json_values),
                        "conditions": st.one_of(
                            st.lists(
                                st.fixed_dictionaries(
                                    {"type": st.sampled_from(["Ready", "Failed"])},
                                    optional={"status": st.sampled_from(["True", "False", 1])},
                                ),
                                max_size=2,
                            ),
                            json_values,
                        ),
                    },
                ),
            )
        )
    return obj


@st.composite
def pods(draw: st.DrawFn, index: int) -> dict[str, Any]:
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod"}
    shape = draw(st.sampled_from(["full", "no-labels", "no-metadata", "odd-metadata"]))
    if shape == "full":
        labels = draw(
            st.dictionaries(
                st.sampled_from(["role", "idx"]),
                st.one_of(st.sampled_from(ROLES + IDS), st.sampled_from(ROLES), json_values),
                max_size=2,
            )
        )
        pod["metadata"] = {"name": f"p{index}", "labels": labels}
        if draw(st.booleans()):
            pod["metadata"]["ownerReferences"] = draw(
                st.one_of(
                    json_values,
                    st.just([{"kind": "Thing", "name": "obj", "uid": "u1", "controller": True}]),
                )
            )
    elif shape == "no-labels":
        pod["metadata"] = {"name": f"p{index}"}
    elif shape == "odd-metadata":
        pod["metadata"] = draw(json_values)
    if draw(st.booleans()):
        pod["spec"] = draw(
            st.one_of(
                json_values,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "nodeName": json_values,
                        "containers": st.lists(
                            st.dictionaries(st.sampled_from(KEYS), json_values, max_size=3),
                            max_size=2,
                        ),
                        "overhead": json_values,
                    },
                ),
            )
        )
    if draw(st.booleans()):
        pod["status"] = draw(
            st.one_of(
                st.none(),
                json_values,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "phase": json_values,
                        "conditions": st.one_of(
                            json_values,
                            st.lists(
                                st.fixed_dictionaries(
                                    {"type": st.sampled_from(["Ready", "PodScheduled"])},
                                    optional={"status": json_values, "reason": json_values},
                                ),
                                max_size=2,
                            ),
                        ),
                        "containerStatuses": json_values,
                    },
                ),
            )
        )
    return pod


pod_lists = st.one_of(
    st.none(),
    st.integers(0, 4).flatmap(lambda n: st.tuples(*(pods(i) for i in range(n))).map(list)),
)


# -- the shape of INTERFACES.md ------------------------------------------------------------------
def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt(value: Any, kind: type | tuple[type, ...]) -> bool:
    return value is None or (isinstance(value, kind) and not isinstance(value, bool))


def _check_resources(r: Any, where: str) -> None:
    assert isinstance(r, dict), where
    for key in ("gpus", "cpuMillis", "memoryBytes"):
        assert _is_int(r[key]) and r[key] >= 0, (where, key, r[key])
    by = r.get("byResource", {})
    assert isinstance(by, dict) and all(isinstance(k, str) and _is_int(v) for k, v in by.items()), (
        where,
        by,
    )


def _check_node(node: Any, where: str) -> None:
    assert isinstance(node, dict), where
    assert isinstance(node["name"], str) and isinstance(node["component"], str), where
    assert _opt(node["instance"], str), where
    kind = node["kind"]
    assert kind is None or (
        isinstance(kind, dict)
        and all(isinstance(kind[k], str) for k in ("group", "version", "kind"))
    ), where
    r = node["replicas"]
    assert _is_int(r["desired"]) and r["desired"] >= 0, where
    for key in ("current", "ready", "min", "max"):
        assert _opt(r[key], int), (where, key, r[key])
    _check_resources(node["resources"], where)
    assert isinstance(node["pods"], list), where
    for pod in node["pods"]:
        assert isinstance(pod["name"], str), where
        assert _opt(pod["phase"], str), (where, pod)
        assert isinstance(pod["ready"], bool), (where, pod)
        assert _opt(pod["node"], str), (where, pod)
        assert _is_int(pod["gpus"]), (where, pod)
        assert _opt(pod.get("reason"), str), (where, pod)
    assert isinstance(node["children"], list), where
    for child in node["children"]:
        _check_node(child, f"{where}/{child.get('name')}")


def _check_group(group: Any) -> None:
    assert isinstance(group["name"], str)
    assert _is_int(group["minMember"]) and group["minMember"] >= 0
    assert isinstance(group["pods"], list) and all(isinstance(p, str) for p in group["pods"])
    assert isinstance(group["subGroups"], list)
    for sub in group["subGroups"]:
        _check_group(sub)


def check_shape(d: Any, file_mode: bool) -> None:
    """Every field of the describe JSON has the type INTERFACES.md gives it."""
    assert isinstance(d, dict)
    json.dumps(d)  # plain JSON, nothing else
    for key in ("apiVersion", "kind", "name", "namespace", "uid"):
        assert _opt(d[key], str), (key, d[key])
    assert isinstance(d["definition"]["name"], str) and isinstance(d["definition"]["origin"], str)
    assert d["fileMode"] is file_mode
    assert isinstance(d["phases"], list) and d["phases"]
    assert all(isinstance(p, str) for p in d["phases"])
    pods = d["pods"]
    assert _is_int(pods["desired"]) and pods["desired"] >= 0
    if file_mode:
        assert pods["current"] is None and pods["ready"] is None
    else:
        assert _is_int(pods["current"]) and _is_int(pods["ready"])
        assert 0 <= pods["ready"] <= pods["current"]
    _check_resources(d["resources"], "resources")
    assert isinstance(d["components"], list)
    for node in d["components"]:
        _check_node(node, node.get("name", "?"))
    assert isinstance(d["podGroups"], list)
    for group in d["podGroups"]:
        _check_group(group)
    assert isinstance(d["unattributedPods"], list)
    assert all(isinstance(p, str) for p in d["unattributedPods"])


def _describe(karta: dict[str, Any], obj: dict[str, Any], pods: Any, validate: bool) -> None:
    try:
        with counted_calls():
            d = Workload(karta, obj, pods, validate=validate).describe()
    except EngineError:
        return
    check_shape(d, file_mode=pods is None)


SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(kartas(), objects(), pod_lists)
def test_describe_of_validated_definitions(karta: Any, obj: Any, pods: Any) -> None:
    _describe(karta, obj, pods, validate=True)


@SETTINGS
@given(kartas(wild=True), objects(), pod_lists)
def test_describe_without_validation(karta: Any, obj: Any, pods: Any) -> None:
    """Definitions the validator would refuse (unknown members, clashing shapes) still answer."""
    _describe(karta, obj, pods, validate=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kartas(wild=True), objects(), pod_lists)
def test_other_views_never_crash(karta: Any, obj: Any, pods: Any) -> None:
    try:
        wl = Workload(karta, obj, pods, validate=False)
    except EngineError:
        return
    for view in (
        wl.phases,
        wl.explain,
        wl.resources,
        lambda: wl.tree().to_dict(),
        wl.desired_pods,
        wl.pod_groups,
        wl.suspend,
        wl.resume,
        *(lambda c=c: wl.subtree_scale(c) for c in wl.structure.components),
        *(
            lambda c=c: wl.update_pod_template(c, wl.pod_template_specs(c))
            for c in wl.structure.pod_bearing
        ),
        *(
            lambda c=c: wl.update_fragmented_pod_spec(c, wl.fragmented_pod_specs(c))
            for c in wl.structure.pod_bearing
        ),
    ):
        try:
            view()
        except EngineError:
            pass


def test_huge_counts_and_quantities_stay_fast() -> None:
    from tests.engine.conftest import load_fixture

    karta, obj, pods = load_fixture("leaderworker")
    obj["spec"]["replicas"] = 2**70
    obj["spec"]["template"]["workerTemplate"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "1e999999999", "memory": "9" * 5000}
    }
    with counted_calls():
        d = Workload(karta, obj, pods).describe()
    check_shape(d, file_mode=False)
    assert d["pods"]["desired"] == 2**70 * 3
    # only the replica indexes that have pods are listed when there are too many to list
    assert [n["name"] for n in d["components"]] == ["group[0]", "group[1]"]
    assert any("out of range" in e for e in d["errors"])


# -- known definitions over damaged objects --------------------------------------------------------
def _locations(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out.extend(_locations(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.extend(_locations(child, (*prefix, index)))
    return out


def _damage(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with a few locations replaced by random JSON or removed (a deep copy)."""
    out = copy.deepcopy(value)
    for _ in range(draw(st.integers(1, 4))):
        locations = [loc for loc in _locations(out) if loc]
        if not locations:
            break
        location = draw(st.sampled_from(locations))
        parent = out
        for step in location[:-1]:
            parent = parent[step]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[location[-1]]
        else:
            parent[location[-1]] = draw(json_values)
    return out


@st.composite
def damaged_fixtures(draw: st.DrawFn) -> tuple[Any, Any, Any]:
    from tests.engine.conftest import FIXTURE_NAMES, load_fixture

    karta, obj, pods = load_fixture(draw(st.sampled_from(FIXTURE_NAMES)))
    if draw(st.booleans()):
        obj = _damage(draw, obj)
    if draw(st.booleans()):
        pods = [_damage(draw, p) if draw(st.booleans()) else p for p in pods]
    return karta, obj, draw(st.sampled_from([pods, None]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_fixtures())
def test_fixture_definitions_over_damaged_objects_and_pods(case: tuple[Any, Any, Any]) -> None:
    karta, obj, pods = case
    _describe(karta, obj, pods, validate=True)
