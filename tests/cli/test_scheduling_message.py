"""The scheduler's message of a pod it cannot place, from the pod entry to ``wlmap describe``.

Upstream pods (../shared/realworld) are turned Pending the way kube-scheduler leaves an
unschedulable pod: no node, no container statuses, a ``PodScheduled`` condition False with reason
``Unschedulable`` and the scheduler's message. The message must reach the engine's pod entry,
the JSON of ``describe -o json`` and the table (under the pod); a scheduled pod has none.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map import catalog
from workload_map.engine import Workload
from workload_map.engine.pod_status import scheduling_message

MESSAGE = (
    "0/16 nodes are available: 16 Insufficient nvidia.com/gpu. preemption: 0/16 nodes are "
    "available: 16 No preemption victims found for incoming pod."
)
RAY_POD = "ray/pods/raycluster-auth-token-head-vbjrq.pod.yaml"
TORCH_POD = "kubeflow-training-v1/pods/neko-tensorboard-job-test-worker-0.pytorchjob-pod.yaml"
TORCH_JOB = "kubeflow-training-v1/with-status/pytorch-tcp-dist-mnist.status.yaml"


def _load(shared: Path, rel: str) -> dict[str, Any]:
    doc = yaml.safe_load((shared / "realworld" / rel).read_text())
    assert isinstance(doc, dict), rel
    return doc


def _unschedulable(pod: dict[str, Any], message: str = MESSAGE) -> dict[str, Any]:
    """The pod as the scheduler leaves it when no node fits (one GPU asked for)."""
    out = copy.deepcopy(pod)
    out["spec"].pop("nodeName", None)
    container = out["spec"]["containers"][0]
    container.setdefault("resources", {}).setdefault("limits", {})["nvidia.com/gpu"] = 1
    out["status"] = {
        "phase": "Pending",
        "qosClass": "BestEffort",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastProbeTime": None,
                "lastTransitionTime": "2026-01-08T08:06:40Z",
            }
        ],
    }
    return out


def _karta(obj: dict[str, Any]) -> Any:
    karta = catalog.for_api_version(obj["apiVersion"], obj["kind"])
    assert karta is not None, obj["kind"]
    return karta


def _entries(view: Any) -> list[Any]:
    found: list[Any] = []

    def walk(nodes: Any) -> None:
        for node in nodes:
            found.extend(node.pods)
            walk(node.children)

    walk(view.components)
    return found


@pytest.mark.shared
def test_scheduled_upstream_pods_carry_no_message(shared_dir: Path) -> None:
    for rel in (RAY_POD, TORCH_POD):
        pod = _load(shared_dir, rel)
        assert scheduling_message(pod) is None, rel
        wl = Workload(_karta(pod), pod, [pod])
        (entry,) = _entries(wl.view())
        assert entry.message is None, rel
        (node,) = wl.describe()["components"]
        assert "message" not in node["pods"][0], rel  # the key is left out, not null


@pytest.mark.shared
def test_pending_upstream_pod_entry_has_the_schedulers_message(shared_dir: Path) -> None:
    pod = _unschedulable(_load(shared_dir, RAY_POD))
    assert scheduling_message(pod) == MESSAGE
    wl = Workload(_karta(pod), pod, [pod])
    (entry,) = _entries(wl.view())
    assert (entry.phase, entry.reason, entry.node) == ("Pending", "Unschedulable", None)
    assert entry.message == MESSAGE
    (node,) = wl.describe()["components"]
    assert node["pods"][0]["message"] == MESSAGE
    # a condition that is True again (bound since) or has no text says nothing
    bound = copy.deepcopy(pod)
    bound["status"]["conditions"][0].update(status="True", message="")
    assert scheduling_message(bound) is None
    blank = _unschedulable(pod, message="   ")
    assert scheduling_message(blank) is None


@pytest.mark.shared
def test_describe_shows_the_message_under_the_pending_worker(
    wlmap, shared_dir: Path, tmp_path: Path
) -> None:
    job = _load(shared_dir, TORCH_JOB)
    worker = _unschedulable(_load(shared_dir, TORCH_POD))
    # the upstream worker pod belongs to the upstream job (its owner reference and labels)
    ref = worker["metadata"]["ownerReferences"][0]
    job["metadata"].update(name=ref["name"], uid=ref["uid"])
    job_file, pods_file = tmp_path / "job.yaml", tmp_path / "pods.yaml"
    job_file.write_text(yaml.safe_dump(job))
    pods_file.write_text(yaml.safe_dump(worker))

    r = wlmap(["describe", "-f", str(job_file), "--pods", str(pods_file), "-o", "json"])
    assert r.code == 0, r.err
    pods = [p for c in json.loads(r.out)["components"] for p in c["pods"]]
    assert [(p["name"], p["reason"], p["message"]) for p in pods] == [
        (worker["metadata"]["name"], "Unschedulable", MESSAGE)
    ]

    r = wlmap(["describe", "-f", str(job_file), "--pods", str(pods_file)])
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    at = next(i for i, line in enumerate(lines) if worker["metadata"]["name"] in line)
    assert "Pending (Unschedulable)" in lines[at]
    # the scheduler's words on the next line, under the pod (cut to one readable line)
    assert lines[at + 1].strip().startswith("0/16 nodes are available: 16 Insufficient")
