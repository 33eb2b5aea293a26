"""The coscheduling and Volcano objects we write validate against their CRDs' schemas.

The same objects are created on the real API server with those CRDs installed in
``tests/integration/test_gangs_contracts.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gangs.cases import example, karta_of, opted, set_scheduler
from tests.gangs.crd_schema import check, crd_schema
from workload_map.gangs import COSCHEDULING_API, VOLCANO_API, plan

CRDS = {
    COSCHEDULING_API: ("scheduling.x-k8s.io_podgroups.yaml", "v1alpha1"),
    VOLCANO_API: ("scheduling.volcano.sh_podgroups.yaml", "v1beta1"),
}
SCHEDULERS = {COSCHEDULING_API: "scheduler-plugins-scheduler", VOLCANO_API: "volcano"}


def objects_for(api: str) -> list[dict[str, Any]]:
    out = []
    for name in ("jobset", "leaderworkerset", "pytorchjob", "raycluster"):
        obj, pods = example(name)
        obj = opted(set_scheduler(obj, SCHEDULERS[api]))
        if pods is not None:
            pods = [set_scheduler(p, SCHEDULERS[api]) if p["kind"] == "Pod" else p for p in pods]
        out.extend(o for o in plan(karta_of(obj), obj, pods).objects if o["apiVersion"] == api)
    return out


@pytest.mark.parametrize("api", sorted(CRDS))
def test_objects_validate_against_the_crd(api: str, shared_dir: Path) -> None:
    file, version = CRDS[api]
    schema = crd_schema(shared_dir / "realworld" / "podgroup-gang-scheduling" / file, version)
    objects = objects_for(api)
    assert len(objects) >= 4  # one per example, two LWS groups
    for obj in objects:
        assert obj["kind"] == "PodGroup"
        assert check(obj, schema) == [], obj["metadata"]["name"]


def test_the_schema_check_refuses_what_the_server_would(shared_dir: Path) -> None:
    file, version = CRDS[VOLCANO_API]
    schema = crd_schema(shared_dir / "realworld" / "podgroup-gang-scheduling" / file, version)
    bad = {"spec": {"minMember": "2", "queue": "Not_A_Queue", "minTaskMember": {"a": -(2**40)}}}
    errors = check(bad, schema)
    assert any(".spec.minMember: must be integer" in e for e in errors)
    assert any(".spec.queue" in e for e in errors)
    assert any("int32" in e for e in errors)
    assert check({"spec": {"minMembers": 2}}, schema) == [".spec.minMembers: unknown field"]


def test_volcano_matches_its_job_controllers_shape(shared_dir: Path) -> None:
    """What Volcano's job controller writes for a Job: minMember, minTaskMember per task,
    queue, minResources as quantities; pods annotated with the group and their task."""
    (obj,) = [o for o in objects_for(VOLCANO_API) if "cluster" in o["metadata"]["name"]]
    spec = obj["spec"]
    assert set(spec) <= {"minMember", "minTaskMember", "minResources", "queue", "priorityClassName"}
    assert sum(spec["minTaskMember"].values()) == spec["minMember"]
    assert spec["queue"] == "default"
    assert all(isinstance(v, str) for v in spec["minResources"].values())


def test_a_long_coscheduling_group_name_is_its_pods_label_value() -> None:
    """scheduler-plugins finds a pod's group by its label's value, at most 63 characters: the
    group's name is that value, however long the workload's name."""
    from tests.catalog.operator_pods import early_pods
    from workload_map.gangs.admission import pod_decisions
    from workload_map.gangs.config import COSCHEDULING_LABEL

    obj, _ = example("leaderworkerset")
    obj["metadata"]["name"] = "vllm-llama-3-70b-instruct-tensor-parallel"
    obj = opted(set_scheduler(obj, SCHEDULERS[COSCHEDULING_API]))
    karta = karta_of(obj)
    pods = [set_scheduler(p, SCHEDULERS[COSCHEDULING_API]) for p in early_pods(obj)]
    names = {o["metadata"]["name"] for o in plan(karta, obj, pods).objects}
    assert len(names) == 2 and all(len(n) <= 63 for n in names)
    decisions = pod_decisions(karta, obj, pods)
    assert len(decisions) == len(pods)
    for decision in decisions:
        assert decision["labels"][COSCHEDULING_LABEL] == decision["podGroup"]
        assert decision["podGroup"] in names
