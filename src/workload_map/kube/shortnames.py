"""Short names of resource types when there is no API server to ask (``describe -f FILE
po/NAME``).

Live commands take short names from discovery (``cluster.discovery.match_type``); offline,
these are the ones the Kubernetes API server serves for its built-in types and the ones the
upstream CRDs of covered workload types declare (``spec.names.shortNames``, read from the CRDs
under ``shared/realworld``). A type whose CRD declares none (JobSet, RayCluster, the Kubeflow
jobs) has none here either: ``js`` is not JobSet's name anywhere but in examples.
"""

from __future__ import annotations

__all__ = ["SHORT_NAMES", "short_names"]

#: (group, Kind) -> short names, as discovery lists them
SHORT_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): ("po",),
    ("", "Service"): ("svc",),
    ("", "Namespace"): ("ns",),
    ("", "Node"): ("no",),
    ("", "ConfigMap"): ("cm",),
    ("", "PersistentVolumeClaim"): ("pvc",),
    ("", "PersistentVolume"): ("pv",),
    ("", "ServiceAccount"): ("sa",),
    ("", "ReplicationController"): ("rc",),
    ("", "Endpoints"): ("ep",),
    ("", "Event"): ("ev",),
    ("apps", "Deployment"): ("deploy",),
    ("apps", "ReplicaSet"): ("rs",),
    ("apps", "StatefulSet"): ("sts",),
    ("apps", "DaemonSet"): ("ds",),
    ("batch", "CronJob"): ("cj",),
    ("autoscaling", "HorizontalPodAutoscaler"): ("hpa",),
    ("policy", "PodDisruptionBudget"): ("pdb",),
    ("networking.k8s.io", "Ingress"): ("ing",),
    ("scheduling.k8s.io", "PriorityClass"): ("pc",),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): ("crd", "crds"),
    ("serving.knative.dev", "Service"): ("kservice", "ksvc"),
    ("serving.kserve.io", "InferenceService"): ("isvc",),
    ("argoproj.io", "Workflow"): ("wf",),
    ("workload.codeflare.dev", "AppWrapper"): ("aw",),
    ("scheduling.volcano.sh", "PodGroup"): ("pg", "podgroup-v1beta1"),
    ("scheduling.volcano.sh", "Queue"): ("q", "queue-v1beta1"),
    ("scheduling.x-k8s.io", "PodGroup"): ("pg", "pgs"),
    ("scheduling.run.ai", "PodGroup"): ("pg",),
    ("grove.io", "PodCliqueScalingGroup"): ("pcsg",),
    ("optimization.nvidia.com", "ResourceInterface"): ("ri",),
    ("run.ai", "Karta"): ("krt",),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): ("lws",),
    ("batch.volcano.sh", "Job"): ("vcjob", "vj"),
    ("milvus.io", "MilvusCluster"): ("mc", "mic"),
    ("milvus.io", "Milvus"): ("mi",),
    ("grove.io", "PodClique"): ("pclq",),
    ("grove.io", "PodCliqueSet"): ("pcs",),
    ("kueue.x-k8s.io", "Workload"): ("kwl", "kueueworkload", "kueueworkloads"),
    ("sparkoperator.k8s.io", "SparkApplication"): ("sparkapp",),
    ("serving.kserve.io", "LLMInferenceService"): ("llmisvc",),
    ("nvidia.com", "DynamoGraphDeployment"): ("dgd",),
    ("nvidia.com", "DynamoComponentDeployment"): ("dcd",),
    ("kubeflow.org", "ScheduledWorkflow"): ("swf",),
    ("workspace.devfile.io", "DevWorkspace"): ("dw",),
}


def short_names(group: str, kind: str) -> tuple[str, ...]:
    """The short names of ``group``/``kind`` (lower case; empty when it has none)."""
    return SHORT_NAMES.get((group, kind), ())
