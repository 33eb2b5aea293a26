"""The pod webhook: the admission adapter the operator serves at :data:`WEBHOOK_PATH`, and the
configuration entry that registers it (docs/gangs.md, "Pods joined at creation").

:class:`PodWebhook` turns an AdmissionReview's ``request`` into the operator's answer
(``allowed``, maybe a JSON ``patch``): the admitter decides from caches, the adapter never
blocks a pod on our fault, drops ``schedulingGroup`` where the API server would, and counts.
The AdmissionReview around it is built by the operator's server, for every webhook alike.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from workload_map.gangs.admission import PodAdmitter, json_patch
from workload_map.gangs.config import GangConfig
from workload_map.gangs.metrics import GangMetrics

__all__ = ["WEBHOOK_PATH", "PodWebhook", "pod_webhook"]

log = logging.getLogger("workload_map.gangs")

WEBHOOK_PATH = "/mutate-v1-pod-gangs"


class PodWebhook:
    """The ``AdmissionHandler`` of :data:`WEBHOOK_PATH` (``admit``), as production serves it."""

    def __init__(
        self, admitter: PodAdmitter, metrics: GangMetrics, native_served: Callable[[], bool]
    ) -> None:
        self.admitter = admitter
        self.metrics = metrics
        self.native_served = native_served

    def admit(self, request: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        answer: dict[str, Any] = {"allowed": True}
        pod = request.get("object")
        patched = missed = failed = False
        try:
            if request.get("operation") == "CREATE" and isinstance(pod, dict):
                decision = self.admitter.decide(pod, request.get("namespace"))
                if decision.scheduling_group and not self.native_served():
                    decision.scheduling_group = None  # the server would drop it anyway
                ops = json_patch(pod, decision)
                if ops:
                    answer["patch"] = ops
                    patched = True
                missed = decision.cache_miss
        except Exception:  # never block a pod on our fault
            log.exception("gang webhook failed; the pod is admitted unchanged")
            failed = True
        self.metrics.admitted(time.perf_counter() - start, patched, missed, failed)
        return answer


def pod_webhook(
    *,
    url: str | None = None,
    service: tuple[str, str, int] | None = None,
    ca_bundle: str = "",
    excluded_namespaces: frozenset[str] = GangConfig().excluded_namespaces,
    timeout_seconds: int = 3,
    name: str = "gangs.pods.workload-map.run.ai",
) -> dict[str, Any]:
    """The pod CREATE entry of a MutatingWebhookConfiguration (``Ignore``, short timeout).

    ``service`` is (namespace, name, port); on the test harness ``url`` points at loopback.
    The operator's namespace belongs in ``excluded_namespaces``; pods labelled
    ``workload-map.run.ai/gang-scheduling: disabled`` are skipped by the object selector.
    """
    client: dict[str, Any] = {}
    if url is not None:
        client["url"] = url.rstrip("/") + WEBHOOK_PATH
    elif service is not None:
        client["service"] = {
            "namespace": service[0],
            "name": service[1],
            "port": service[2],
            "path": WEBHOOK_PATH,
        }
    if ca_bundle:
        client["caBundle"] = ca_bundle
    return {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": client,
        "rules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["pods"],
                "scope": "Namespaced",
            }
        ],
        "failurePolicy": "Ignore",
        "sideEffects": "None",
        "timeoutSeconds": timeout_seconds,
        "reinvocationPolicy": "Never",
        "matchPolicy": "Equivalent",
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": sorted(excluded_namespaces),
                }
            ]
        },
        "objectSelector": {
            "matchExpressions": [
                {
                    "key": "workload-map.run.ai/gang-scheduling",
                    "operator": "NotIn",
                    "values": ["disabled"],
                }
            ]
        },
    }
