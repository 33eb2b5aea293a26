"""docs/gangs.md's walk-through, runnable: ``.venv/bin/python -m tests.gangs.walkthrough``.

Starts a v1.37.2 control plane with kube-scheduler (the test harness), the operator with gangs
on, a PyTorchJob of 3 pods with 8 GPUs each, and shows the gang binding all or nothing, then
the same pods without opt-in binding one by one. Needs the binaries of ``make apiserver``.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.gangs.e2e import (
    KINDS,
    NODE,
    NODE_LABEL,
    bound,
    gang_operator,
    make_namespace,
    podgroups,
    pods_in,
    token,
    wait,
)
from tests.integration.harness import FakeNodes, open_kube
from tests.operator.live import api_for
from workload_map.gangs.config import ANNOTATION_DECISION
from workload_map.kube.api import Api

ROOT = Path(__file__).resolve().parents[2]
CRD = "kubeflow-training-v1/kubeflow.org_pytorchjobs.yaml.gz"
#: kube-scheduler's defaults (the harness passes no scheduler configuration): an unschedulable
#: pod is retried when a node is added, and at the latest after podMaxInUnschedulablePodsDuration
#: (300 s) plus podMaxBackoffSeconds (10 s). The walk-through waits that long for a verdict.
VERDICT_BOUND = 300.0 + 10.0
#: the scheduler's verdicts on a gang's pod with ``n`` nodes in view, one pod of 8 GPUs fitting
#: each: the pod itself fits none of them ("0/n nodes are available: ..."), or the others were
#: placed on them and the group is short ("minCount (3) cannot be satisfied: n scheduled, ...")
_VERDICT = re.compile(
    r"^0/(?P<nodes>\d+) nodes are available|cannot be satisfied: (?P<placed>\d+) scheduled"
)


def _unschedulable_among(api: Api, ns: str, nodes: int) -> list[Any]:
    """The pods of ``ns`` once the scheduler, with ``nodes`` nodes in view, found the gang no
    place (every pod's PodScheduled condition says so); empty until then."""
    pods = pods_in(api, ns)
    verdicts = [
        _VERDICT.search(str(c.get("message") or ""))
        for p in pods
        for c in (p.get("status") or {}).get("conditions") or []
        if c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
    ]
    seen = [m for m in verdicts if m is not None and int(m["nodes"] or m["placed"]) == nodes]
    return pods if pods and len(seen) == len(pods) else []


def main() -> None:
    from tests.conftest import SHARED

    print("1. control plane v1.37.2 (etcd, kube-apiserver, controller-manager, kube-scheduler)")
    kube = open_kube(external_ok=False, scheduler=True)
    nodes = FakeNodes(kube)
    try:
        api = api_for(kube.kubeconfig)
        kube.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
        if SHARED is not None:
            kube.install_crd(SHARED / "realworld" / CRD)
        tok = token()
        op_ns = make_namespace(api, tok, opted_in=False)
        with tempfile.TemporaryDirectory() as work:
            print("2. wlmap operator --enable-gang-scheduling (+ the pod webhook over TLS)")
            with gang_operator(api, kube.kubeconfig, op_ns, Path(work), tok) as op:
                probe = wait(
                    "the probe",
                    lambda: [
                        s
                        for s in ("works", "dropped", "absent", "error")
                        if op.metric(f'workloadmap_gangs_generic_workload{{state="{s}"}}') == 1
                    ],
                )
                print(f"   GenericWorkload probe: {probe[0]}")
                make, (size,) = KINDS["pytorchjob"]
                ns = make_namespace(api, tok)
                pool = f"{tok}-walk"
                print(f"3. namespace {ns} (opted in), PyTorchJob ddp: 1 master + 2 workers")
                _, create_pods = make(api, ns, pool)
                for pod in create_pods():
                    print(
                        f"   pod {pod['metadata']['name']}: schedulingGroup {pod['spec'].get('schedulingGroup')}"
                    )
                (group,) = wait("PodGroup", lambda: podgroups(api, ns))
                decision = json.loads(group["metadata"]["annotations"][ANNOTATION_DECISION])
                print(
                    f"   PodGroup {group['metadata']['name']} minCount {group['spec']['schedulingPolicy']['gang']['minCount']}: {decision['rule']}"
                )
                nodes.add(size - 1, NODE, labels={NODE_LABEL: pool})
                # "nothing bound" means something once the scheduler has looked at every pod
                # with these nodes in view (not after a pause it may not have used)
                wait(
                    f"the scheduler to find no place for the gang among {size - 1} nodes",
                    lambda: _unschedulable_among(api, ns, size - 1),
                    VERDICT_BOUND,
                )
                print(f"4. {size - 1} nodes of 8 GPUs: bound {bound(api, ns)}")
                nodes.add(1, NODE, labels={NODE_LABEL: pool})
                start = time.monotonic()
                wait("all bound", lambda: len(bound(api, ns)) == size, 60)
                print(f"   one more node: all {size} bound after {time.monotonic() - start:.1f} s")
                plain = make_namespace(api, tok, opted_in=False)
                other = f"{tok}-plain"
                make(api, plain, other)[1]()
                nodes.add(size - 1, NODE, labels={NODE_LABEL: other})
                wait("bound one by one", lambda: len(bound(api, plain)) == size - 1, 60)
                print(f"5. not opted in, {size - 1} nodes: bound one by one {bound(api, plain)}")
    finally:
        nodes.remove_all()
        kube.shutdown()


if __name__ == "__main__":
    main()
