"""Gang enforcement under failure: the operator restarted mid-gang, two replicas (only the
leader writes, every replica answers the webhook, the standby takes over)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.gangs.e2e import (
    NODE,
    NODE_LABEL,
    bound,
    gang_operator,
    make_namespace,
    min_counts,
    part_pod,
    partset_gpu,
    podgroups,
    prepare_plane,
    review,
    token,
    wait,
)
from tests.operator.live import OperatorProcess, delete
from workload_map.kube.api import Api

from .harness import FakeNodes, Kube

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def plane(module_kube: Kube) -> Kube:
    return prepare_plane(module_kube)


def test_operator_restarted_mid_gang_duplicates_and_loses_nothing(
    module_kube: Kube, api: Api, fake_nodes: FakeNodes, tmp_path: Path
) -> None:
    tok = token()
    op_ns = make_namespace(api, tok, opted_in=False)
    ns = make_namespace(api, tok)
    pool = f"{tok}-restart"
    try:
        with gang_operator(api, module_kube.kubeconfig, op_ns, tmp_path / "op", tok) as op:
            obj = partset_gpu(api, ns, 3, pool)
            wait("PodGroup", lambda: min_counts(api, ns) == [3])
            (group,) = podgroups(api, ns)
            first = [part_pod(api, ns, obj, pool) for _ in range(2)]
            assert op.stop() == 0
            # down: nothing answers the webhook, nothing reconciles; the gang waits intact
            assert [g["metadata"]["uid"] for g in podgroups(api, ns)] == [group["metadata"]["uid"]]
            op.start()
            op.wait_ready(120)
            wait("caches warm", lambda: op.metric("workloadmap_gangs_reconciles_total") >= 1, 60)
            reconciles = op.metric("workloadmap_gangs_reconciles_total")
            last = part_pod(api, ns, obj, pool)
            assert last["spec"]["schedulingGroup"] == first[0]["spec"]["schedulingGroup"]
            # the restarted operator has reconciled since the last member came (waited for,
            # not a sleep: a sleep can end before it looked, and the checks below would pass
            # unexamined)
            wait(
                "a reconcile after the last member",
                lambda: op.metric("workloadmap_gangs_reconciles_total") > reconciles,
                60,
            )
            groups = podgroups(api, ns)
            assert [g["metadata"]["uid"] for g in groups] == [group["metadata"]["uid"]]
            assert min_counts(api, ns) == [3]
            fake_nodes.add(3, NODE, labels={NODE_LABEL: pool})
            wait("all bound", lambda: len(bound(api, ns)) == 3, 90)
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")
        delete(api, f"/api/v1/namespaces/{op_ns}")


def _leader(*ops: OperatorProcess) -> list[OperatorProcess]:
    return [o for o in ops if o.alive() and o.metric("workloadmap_operator_leader") == 1]


def test_two_replicas_only_the_leader_writes_and_both_answer(
    module_kube: Kube, api: Api, tmp_path: Path
) -> None:
    tok = token()
    op_ns = make_namespace(api, tok, opted_in=False)
    ns = make_namespace(api, tok)
    pool = f"{tok}-ha"
    name = f"wlmap-gangs-{tok}"
    second = OperatorProcess(
        module_kube.kubeconfig,
        op_ns,
        tmp_path / "b",
        config_name=name,
        leader_elect=True,
        extra=["--enable-gang-scheduling", "--gang-resync-period=30"],
    )
    try:
        with gang_operator(
            api, module_kube.kubeconfig, op_ns, tmp_path / "a", tok, leader_elect=True
        ) as first:
            second.start()
            second.wait_ready(120)
            (leader,) = wait(
                "one leader", lambda: len(_leader(first, second)) == 1 and _leader(first, second)
            )
            standby = second if leader is first else first
            obj = partset_gpu(api, ns, 3, pool)
            wait("PodGroup", lambda: min_counts(api, ns) == [3])
            # counted once a write has returned, a moment after it is visible
            wait("writes counted", lambda: leader.metric("workloadmap_gangs_writes_total") >= 2)
            assert standby.metric("workloadmap_gangs_writes_total") == 0
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "generateName": "parts-p0-",
                    "namespace": ns,
                    "labels": {"example.wlmap.io/part": "p0"},
                    "ownerReferences": [
                        {
                            "apiVersion": obj["apiVersion"],
                            "kind": obj["kind"],
                            "name": "parts",
                            "uid": obj["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": {"containers": [{"name": "main", "image": "x"}]},
            }
            answers = []
            for replica in (first, second):
                # each replica's own watch caches: give them the moment they need
                response = wait(
                    "a patch from this replica",
                    lambda replica=replica: (
                        review(replica.webhook_port, pod, ns)["response"].get("patch")
                        and review(replica.webhook_port, pod, ns)["response"]
                    ),
                    30,
                )
                answers.append(json.loads(base64.b64decode(response["patch"])))
            assert answers[0] == answers[1]
            assert any(op["path"] == "/spec/schedulingGroup" for op in answers[0])
            # the leader dies: the standby takes over and keeps the objects in step
            leader.stop()
            wait("standby leads", lambda: _leader(standby) == [standby], 60)
            api.merge_patch(
                f"/apis/example.wlmap.io/v1/namespaces/{ns}/partsets/parts",
                {"spec": {"p0": {"replicas": 4}}},
            )
            wait("the new leader follows the scale", lambda: min_counts(api, ns) == [4], 60)
    finally:
        second.stop()
        delete(api, f"/api/v1/namespaces/{ns}")
        delete(api, f"/api/v1/namespaces/{op_ns}")


def test_api_server_restarted_under_the_operator(
    module_kube: Kube, api: Api, fake_nodes: FakeNodes, tmp_path: Path
) -> None:
    tok = token()
    op_ns = make_namespace(api, tok, opted_in=False)
    ns = make_namespace(api, tok)
    pool = f"{tok}-apisrv"
    try:
        with gang_operator(api, module_kube.kubeconfig, op_ns, tmp_path / "op", tok):
            obj = partset_gpu(api, ns, 3, pool)
            wait("PodGroup", lambda: min_counts(api, ns) == [3])
            (group,) = podgroups(api, ns)
            module_kube.restart_apiserver()
            # watches resume: a change right after the restart is followed, nothing recreated
            api.merge_patch(
                f"/apis/example.wlmap.io/v1/namespaces/{ns}/partsets/parts",
                {"spec": {"p0": {"replicas": 4}}},
            )
            wait("minCount follows after the restart", lambda: min_counts(api, ns) == [4], 90)
            assert [g["metadata"]["uid"] for g in podgroups(api, ns)] == [group["metadata"]["uid"]]
            pods = [part_pod(api, ns, obj, pool) for _ in range(4)]
            assert all(p["spec"].get("schedulingGroup") for p in pods)
            fake_nodes.add(4, NODE, labels={NODE_LABEL: pool})
            wait("all bound", lambda: len(bound(api, ns)) == 4, 90)
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")
        delete(api, f"/api/v1/namespaces/{op_ns}")


def _edit_karta(api: Api, path: str, change: Any) -> None:
    """Read, change, write; read again on a 409 (the operator writes the Karta's status and
    labels concurrently, as a controller may)."""
    from workload_map.kube.errors import ApiError

    for _attempt in range(10):
        karta = api.get(path)
        change(karta)
        try:
            api.request("PUT", path, karta)
            return
        except ApiError as err:
            if err.status != 409:
                raise
            time.sleep(0.2)
    raise AssertionError(f"{path} kept conflicting")


def test_a_karta_changed_under_a_running_workload(
    module_kube: Kube, api: Api, tmp_path: Path
) -> None:
    from tests.gangs import custom
    from tests.operator.live import KARTAS

    tok = token()
    op_ns = make_namespace(api, tok, opted_in=False)
    ns = make_namespace(api, tok)
    name = custom.karta(1)["metadata"]["name"]
    path = f"{KARTAS}/{name}"

    def plus_one(karta: dict[str, Any]) -> None:
        comp = karta["spec"]["structureDefinition"]["childComponents"][0]
        comp["scaleDefinition"]["replicasPath"] = ".spec.p0.replicas + 1"

    def restore(karta: dict[str, Any]) -> None:
        fresh = custom.karta(1)
        karta["spec"] = fresh["spec"]

    try:
        with gang_operator(api, module_kube.kubeconfig, op_ns, tmp_path / "op", tok):
            partset_gpu(api, ns, 3, f"{tok}-karta")
            wait("PodGroup", lambda: min_counts(api, ns) == [3])
            _edit_karta(api, path, plus_one)
            wait("the minimum follows the edited Karta", lambda: min_counts(api, ns) == [4], 60)
            _edit_karta(api, path, lambda k: k["spec"].pop("optimizationInstructions"))
            wait("no gang instructions: the objects go", lambda: podgroups(api, ns) == [], 60)
    finally:
        _edit_karta(api, path, restore)
        delete(api, f"/api/v1/namespaces/{ns}")
        delete(api, f"/api/v1/namespaces/{op_ns}")


def test_delete_unbound_mode_deletes_a_member_that_missed_the_webhook(
    module_kube: Kube, api: Api, tmp_path: Path
) -> None:
    from tests.gangs.e2e import create_pod

    tok = token()
    op_ns = make_namespace(api, tok, opted_in=False)
    ns = make_namespace(api, tok)
    pool = f"{tok}-del"
    try:
        with gang_operator(
            api,
            module_kube.kubeconfig,
            op_ns,
            tmp_path / "op",
            tok,
            extra=["--gang-missed-member-mode=delete-unbound"],
        ) as op:
            obj = partset_gpu(api, ns, 3, pool)
            wait("PodGroup", lambda: min_counts(api, ns) == [3])
            joined = [part_pod(api, ns, obj, pool) for _ in range(2)]
            # a member created past the webhook (its namespace is not one the webhook selects
            # at that moment: the label is taken off, then put back)
            path = f"/api/v1/namespaces/{ns}"
            api.merge_patch(path, {"metadata": {"labels": {"wlmap-gangs-test": None}}})
            # the API server's namespace cache catches up: waited for with dry runs (a fixed
            # sleep is a guess on a loaded machine: too short, and the member would join)
            wait(
                "the namespace out of the webhook's selector",
                lambda: (
                    "schedulingGroup"
                    not in create_pod(
                        api,
                        ns,
                        obj,
                        generate="parts-p0-",
                        labels={"example.wlmap.io/part": "p0"},
                        pool=pool,
                        dry_run=True,
                    )["spec"]
                ),
            )
            missed = create_pod(
                api,
                ns,
                obj,
                generate="parts-p0-",
                labels={"example.wlmap.io/part": "p0"},
                pool=pool,
            )
            api.merge_patch(path, {"metadata": {"labels": {"wlmap-gangs-test": tok}}})
            assert "schedulingGroup" not in missed["spec"]
            gone = missed["metadata"]["name"]
            wait(
                "the unbound missed member is deleted",
                lambda: (
                    gone
                    not in [
                        p["metadata"]["name"]
                        for p in api.get(f"/api/v1/namespaces/{ns}/pods")["items"]
                        if not p["metadata"].get("deletionTimestamp")
                    ]
                ),
                60,
            )
            assert min_counts(api, ns) == [3]  # the minimum stays: the member will come back
            assert all(p["spec"]["schedulingGroup"] for p in joined)
            wait("deletion counted", lambda: op.metric("workloadmap_gangs_pods_deleted_total") >= 1)
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")
        delete(api, f"/api/v1/namespaces/{op_ns}")
