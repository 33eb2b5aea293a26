"""Topology: a required placement level becomes the native ``schedulingConstraints.topology``.

v1.37.2's field holds one node-label key ("all members in one domain of it"), has no preferred
placement, and is kept by the API server only under ``TopologyAwareWorkloadScheduling``. The
end-to-end proof is ``tests/integration/test_gangs_topology.py``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.gangs.cases import example, karta_of, opted, set_scheduler
from workload_map.gangs import plan
from workload_map.gangs.config import ANNOTATION_DECISION, GangConfig
from workload_map.gangs.controller import GangController
from workload_map.gangs.probe import TOPOLOGY_PROBE_KEY, probe_topology
from workload_map.gangs.reconcile import reconcile
from workload_map.gangs.runtime import GangRuntime
from workload_map.gangs.topology import (
    ANNOTATION_KAI_PREFERRED,
    ANNOTATION_KAI_REQUIRED,
    ANNOTATION_KAI_TOPOLOGY,
    kai_levels,
    resolve,
)
from workload_map.kube.errors import ApiError, NotFound
from workload_map.model import Karta, dump_karta, load_karta

Obj = dict[str, Any]
RACK = "example.com/rack"
ON = GangConfig(native_topology=True)

#: KAI's Topology with aliases, as in ../shared/realworld/podgroup-gang-scheduling/
#: kai-topology-aliases.yaml
NETWORK: Obj = {
    "apiVersion": "kai.scheduler/v1alpha1",
    "kind": "Topology",
    "metadata": {"name": "network"},
    "spec": {
        "levels": [
            {"nodeLabel": "accelerator.nvidia.com/rack", "alias": "rack"},
            {"nodeLabel": "kubernetes.io/hostname", "alias": "node"},
        ]
    },
}
PLAIN: Obj = {
    "metadata": {"name": "rack-topology"},
    "spec": {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "kubernetes.io/hostname"}]},
}


def _jobset(annotations: dict[str, str] | None = None) -> Obj:
    jobset, _ = example("jobset")
    jobset = opted(copy.deepcopy(jobset))
    jobset["metadata"]["annotations"].update(annotations or {})
    return jobset


def _karta(obj: Obj, topology: Obj | None = None, sub: Obj | None = None) -> Karta:
    """The catalog's definition of ``obj``'s kind with a topology on its ``podGroup``."""
    doc = copy.deepcopy(dump_karta(karta_of(obj)))
    group = doc["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"]
    if topology is not None:
        group["topology"] = topology
    if sub is not None:
        group["subGroups"] = [sub]
    return load_karta(doc)


def _groups(p: Any) -> list[Obj]:
    return [o for o in p.objects if o["kind"] == "PodGroup"]


def _template(p: Any) -> Obj:
    (workload,) = [o for o in p.objects if o["kind"] == "Workload"]
    (template,) = workload["spec"]["podGroupTemplates"]
    assert isinstance(template, dict)
    return template


def _note(group: Obj) -> Obj:
    note = json.loads(group["metadata"]["annotations"][ANNOTATION_DECISION])
    assert isinstance(note, dict)
    return note


def _reasons(p: Any) -> dict[str, Any]:
    return {d.reason: d for d in p.decisions}


# -- resolving a level ---------------------------------------------------------------------
def test_a_level_resolves_through_the_named_kai_topology() -> None:
    known = kai_levels([NETWORK, PLAIN, {"metadata": {}}])
    assert [name for name, _ in known] == ["network", "rack-topology"]
    assert resolve("rack", "network", known)[0] == "accelerator.nvidia.com/rack"  # an alias
    assert resolve("accelerator.nvidia.com/rack", "network", known)[0] == (
        "accelerator.nvidia.com/rack"
    )
    assert resolve("rack", "rack-topology", known)[0] == "rack"  # a level without alias
    key, why = resolve("zone", "network", known)
    assert key is None and "neither a level nor an alias" in why


def test_without_its_topology_only_a_prefixed_label_key_is_taken() -> None:
    assert resolve(RACK, "unknown", ())[0] == RACK
    key, why = resolve("rack", "unknown", ())
    assert key is None and "Topology unknown is not known" in why
    assert resolve("rack", None, ())[0] is None


# -- the plan ------------------------------------------------------------------------------
def test_a_required_level_becomes_the_groups_and_the_templates_constraint() -> None:
    jobset = _jobset()
    out = plan(
        _karta(jobset, {"topologyName": "t", "requiredTopologyLevel": RACK}), jobset, config=ON
    )
    (group,) = _groups(out)
    assert group["spec"]["schedulingConstraints"] == {"topology": [{"key": RACK}]}
    assert _template(out)["schedulingConstraints"] == {"topology": [{"key": RACK}]}
    # the fields the lead added stay beside it
    assert group["spec"]["disruptionMode"] == {"all": {}}
    assert _note(group)["topology"] == {
        "source": "definition",
        "topology": "t",
        "requiredLevel": RACK,
        "key": RACK,
        "enforced": True,
    }
    assert out.gangs[0].to_dict()["topologyKey"] == RACK
    assert not [d for d in out.decisions if d.reason.startswith("Topology")]


def test_definitions_without_topology_are_planned_as_before() -> None:
    jobset = _jobset()
    before = plan(karta_of(jobset), jobset, config=GangConfig())
    after = plan(karta_of(jobset), jobset, config=ON)
    assert after.to_dict() == before.to_dict()
    assert "schedulingConstraints" not in json.dumps(after.objects)


def test_where_the_server_drops_the_field_the_level_is_reported_not_written() -> None:
    jobset = _jobset()
    karta = _karta(jobset, {"topologyName": "t", "requiredTopologyLevel": RACK})
    out = plan(karta, jobset, config=GangConfig())
    (group,) = _groups(out)
    assert "schedulingConstraints" not in group["spec"]
    assert "schedulingConstraints" not in _template(out)
    said = _reasons(out)["TopologyNotEnforced"]
    assert said.warning and "TopologyAwareWorkloadScheduling off" in said.message
    assert _note(group)["topology"]["enforced"] is False


def test_kais_workload_annotations_win_and_resolve_aliases() -> None:
    jobset = _jobset({ANNOTATION_KAI_TOPOLOGY: "network", ANNOTATION_KAI_REQUIRED: "rack"})
    karta = _karta(jobset, {"topologyName": "t", "requiredTopologyLevel": "other.io/zone"})
    config = GangConfig(native_topology=True, kai_topologies=kai_levels([NETWORK]))
    out = plan(karta, jobset, config=config)
    (group,) = _groups(out)
    assert group["spec"]["schedulingConstraints"] == {
        "topology": [{"key": "accelerator.nvidia.com/rack"}]
    }
    note = _note(group)["topology"]
    assert note["source"] == "workload annotations" and note["requiredLevel"] == "rack"
    # the annotations alone, on the catalog's definition (no topology of its own)
    out = plan(karta_of(jobset), jobset, config=config)
    (group,) = _groups(out)
    assert group["spec"]["schedulingConstraints"]["topology"] == [
        {"key": "accelerator.nvidia.com/rack"}
    ]


def test_an_alias_that_resolves_to_nothing_writes_no_constraint() -> None:
    jobset = _jobset({ANNOTATION_KAI_TOPOLOGY: "network", ANNOTATION_KAI_REQUIRED: "rack"})
    out = plan(karta_of(jobset), jobset, config=ON)  # no Topology known
    (group,) = _groups(out)
    assert "schedulingConstraints" not in group["spec"]
    said = _reasons(out)["TopologyUnresolved"]
    assert said.warning and "'rack' may be an alias" in said.message
    assert _note(group)["topology"]["problem"].startswith("'rack' may be an alias")


def test_a_preferred_level_stays_in_the_decision_with_an_event() -> None:
    jobset = _jobset({ANNOTATION_KAI_PREFERRED: RACK})
    out = plan(karta_of(jobset), jobset, config=ON)
    (group,) = _groups(out)
    assert "schedulingConstraints" not in group["spec"]
    assert _note(group)["topology"]["preferredLevel"] == RACK
    said = _reasons(out)["TopologyPreferred"]
    assert not said.warning and "no preferred placement" in said.message
    # both: the required level is written, the preferred one reported
    jobset = _jobset({ANNOTATION_KAI_REQUIRED: RACK, ANNOTATION_KAI_PREFERRED: "example.com/host"})
    out = plan(karta_of(jobset), jobset, config=ON)
    (group,) = _groups(out)
    assert group["spec"]["schedulingConstraints"] == {"topology": [{"key": RACK}]}
    assert "TopologyPreferred" in _reasons(out)


def test_other_backends_get_no_constraint_and_say_so() -> None:
    jobset = set_scheduler(_jobset({ANNOTATION_KAI_REQUIRED: RACK}), "volcano")
    out = plan(karta_of(jobset), jobset, config=ON)
    (group,) = _groups(out)
    assert group["apiVersion"].startswith("scheduling.volcano.sh/")
    assert "volcano backend" in _reasons(out)["TopologyNotEnforced"].message


def test_a_subgroups_own_placement_is_reported() -> None:
    jobset = _jobset()
    sub = {
        "componentName": "replicatedjob",
        "topology": {"topologyName": "t", "requiredTopologyLevel": RACK},
    }
    out = plan(_karta(jobset, sub=sub), jobset, config=ON)
    assert "SubGroupTopologyIgnored" in _reasons(out)


# -- immutable: what happens when a definition's topology changes --------------------------
def _existing(group: Obj, key: str | None) -> Obj:
    out = copy.deepcopy(group)
    out["metadata"]["resourceVersion"] = "3"
    out["spec"].pop("schedulingConstraints", None)
    if key is not None:
        out["spec"]["schedulingConstraints"] = {"topology": [{"key": key}]}
    return out


def _member(group: Obj) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "m-0", "namespace": group["metadata"]["namespace"]},
        "spec": {"schedulingGroup": {"podGroupName": group["metadata"]["name"]}},
        "status": {"phase": "Pending"},
    }


def test_a_changed_topology_recreates_a_group_no_pod_joined() -> None:
    jobset = _jobset({ANNOTATION_KAI_REQUIRED: RACK})
    desired = plan(karta_of(jobset), jobset, config=ON)
    (group,) = _groups(desired)
    for stale in (_existing(group, "example.com/zone"), _existing(group, None)):
        actions = reconcile(desired, [], [stale])
        assert [o["metadata"]["name"] for o in actions.delete] == [group["metadata"]["name"]]
        (changed,) = [d for d in actions.decisions if d.reason == "ImmutableFieldChanged"]
        assert f"-> {RACK}" in changed.message
        assert not actions.patch
    # a topology removed from the definition: the same
    plain = _jobset()
    actions = reconcile(plan(karta_of(plain), plain, config=ON), [], [_existing(group, RACK)])
    assert len(actions.delete) == 1
    # unchanged: nothing
    assert reconcile(desired, [], [_existing(group, RACK)]).delete == []


def test_a_changed_topology_keeps_a_group_with_members_and_reports_it() -> None:
    jobset = _jobset({ANNOTATION_KAI_REQUIRED: RACK})
    desired = plan(karta_of(jobset), jobset, config=ON)
    (group,) = _groups(desired)
    actions = reconcile(desired, [_member(group)], [_existing(group, "example.com/zone")])
    assert actions.delete == []
    (kept,) = [d for d in actions.decisions if d.reason == "ImmutableFieldKept"]
    assert "topology example.com/zone -> example.com/rack" in kept.message
    assert not kept.warning  # the gang still schedules, in the old domain's key
    assert all("schedulingConstraints" not in p.get("spec", {}) for _, p in actions.patch)


# -- the probe and the runtime -------------------------------------------------------------
class _Api:
    def __init__(self, answer: Obj | Exception, served: bool = True) -> None:
        self.answer, self.served = answer, served
        self.sent: list[tuple[str, str, Obj, Any]] = []

    def get(self, path: str) -> Obj:
        if not self.served:
            raise NotFound(404, path)
        return {}

    def request(self, method: str, path: str, body: Obj, query: Any = None) -> Obj:
        self.sent.append((method, path, body, query))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_the_probe_is_a_dry_run_that_the_field_survives() -> None:
    wanted = {"topology": [{"key": TOPOLOGY_PROBE_KEY}]}
    api = _Api({"spec": {"schedulingConstraints": wanted}})
    assert probe_topology(api, "ops")[0] == "works"
    ((method, path, body, query),) = api.sent
    assert method == "POST" and path.endswith("/namespaces/ops/podgroups")
    assert query == [("dryRun", "All")] and body["spec"]["schedulingConstraints"] == wanted
    assert probe_topology(_Api({"spec": {}}), "ops")[0] == "dropped"
    assert probe_topology(_Api({}, served=False), "ops")[0] == "absent"
    assert probe_topology(_Api(ApiError(403, "refused")), "ops")[0] == "error"


def test_the_runtime_follows_the_probe_and_replans() -> None:
    runtime = GangRuntime(GangConfig(), miss_wait=0.0)
    heard: list[str] = []
    runtime.listeners.append(lambda event, obj: heard.append(str(obj.get("kind"))))
    runtime.set_topology("works", "kept")
    assert runtime.config.native_topology and runtime.admitter.config.native_topology
    assert heard == ["SchedulingProbe"]
    runtime.set_topology("works", "kept again")
    assert heard == ["SchedulingProbe"]  # no change, no replan
    runtime.set_topology("dropped", "gate off")
    assert not runtime.config.native_topology and runtime.topology[0] == "dropped"
    found: tuple[Any, ...] = (None, {"metadata": {"resourceVersion": "1"}}, [], {}, [], None)
    assert GangController._fingerprint(found, 1, ((), None, True)) != (
        GangController._fingerprint(found, 1, ((), None, False))
    )


def test_the_runtime_keeps_kai_topologies_for_aliases() -> None:
    runtime = GangRuntime(GangConfig(native_topology=True), miss_wait=0.0)
    heard: list[str] = []
    runtime.listeners.append(lambda event, obj: heard.append(str(obj.get("kind"))))
    runtime.on_kai_topology("ADDED", NETWORK)
    assert runtime.config.kai_topologies == kai_levels([NETWORK])
    assert runtime.admitter.config.kai_topologies == runtime.config.kai_topologies
    assert heard == ["SchedulingProbe"]
    runtime.on_kai_topology("MODIFIED", copy.deepcopy(NETWORK))  # unchanged levels: no replan
    assert heard == ["SchedulingProbe"]
    jobset = _jobset({ANNOTATION_KAI_TOPOLOGY: "network", ANNOTATION_KAI_REQUIRED: "rack"})
    (group,) = _groups(plan(karta_of(jobset), jobset, config=runtime.config))
    assert group["spec"]["schedulingConstraints"]["topology"] == [
        {"key": "accelerator.nvidia.com/rack"}
    ]
    runtime.on_kai_topology("DELETED", NETWORK)
    assert runtime.config.kai_topologies == ()
