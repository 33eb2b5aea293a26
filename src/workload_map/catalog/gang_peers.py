"""What the scheduler peers make of each catalog kind's gang, for the per-kind table of the docs.

Facts read from KAI Scheduler's pod-grouper plugins (``pkg/podgrouper/podgrouper/plugins/…``
and its plugin hub), the operators' own PodGroup code (Kubeflow training operator,
mpi-operator, KubeRay, Volcano's job controller and Spark integration, Knative, the NIM and
Grove operators) and their docs, written down here because no API exposes them. Each entry:
what KAI's dedicated plugin does (``default grouper: 1`` = one group for the top owner with
minimum 1),
what the kind's own operator or its Volcano integration does, and why our gang is what it is.
``tests/catalog/test_docs.py`` fails when a catalog definition has no entry.
"""

from __future__ import annotations

from workload_map.model.views import View

__all__ = ["PEERS", "Peers"]


class Peers(View):
    kai: str
    operator: str
    why: str
    #: how our gang still differs from KAI's plugin, and why ("" when it does not)
    differs: str = ""


_ONE_POD = "one pod: a group of 1 gives the scheduler's queue and priority a unit, nothing else"
_KUBEFLOW_OP = (
    "training operator PodGroup (Volcano / scheduler-plugins): `schedulingPolicy.minAvailable`, "
    "else every replica"
)
_KUBEFLOW_WHY = (
    "the job needs all its replicas to start; a stated `minAvailable` is the operators' own "
    "minimum (capped at the pods that can exist)"
)
_INDEPENDENT = (
    "replicas are independent and roll one by one; a gang of all of them would block rolling "
    "updates, a group of 1 per pod constrains nothing"
)

PEERS: dict[str, Peers] = {
    "agents-x-k8s-io-sandbox-v1alpha1": Peers("default grouper: 1", "none", _ONE_POD),
    "agents-x-k8s-io-sandbox-v1beta1": Peers("default grouper: 1", "none", _ONE_POD),
    "apps-daemonset-v1": Peers(
        "default grouper: 1",
        "none",
        "one pod per node, never co-scheduled",
        differs="no gang: one pod per node is never co-scheduled; KAI's group of 1 constrains nothing",
    ),
    "apps-deployment-v1": Peers(
        "deployment grouper: a group of 1 per pod",
        "none",
        _INDEPENDENT,
        differs="no gang where KAI gives each pod a group of 1: no co-scheduling either way, and the language cannot name one group per pod",
    ),
    "apps-nvidia-com-nimcache-v1alpha1": Peers("default grouper (its Job): 1", "none", _ONE_POD),
    "apps-nvidia-com-nimservice-v1alpha1": Peers(
        "no plugin: the LeaderWorkerSet or Deployment the NIM operator creates is grouped "
        "(lws grouper: one group of `size` per group; deployment grouper: 1 per pod)",
        "NIM operator: LeaderWorkerSet (multi-node) or Deployment",
        "a multi-node replica needs all its `pipeline` pods; Deployment replicas are "
        "independent, so Deployment mode has no gang with or without pods",
        differs="Deployment mode: no gang where KAI gives each pod a group of 1 (the same scheduling)",
    ),
    "apps-replicaset-v1": Peers(
        "default grouper: 1",
        "none",
        _INDEPENDENT,
        differs="no gang where KAI has one group of minimum 1: the same scheduling",
    ),
    "apps-statefulset-v1": Peers(
        "default grouper: 1",
        "none",
        _INDEPENDENT,
        differs="no gang where KAI has one group of minimum 1: the same scheduling",
    ),
    "argoproj-io-workflow-v1alpha1": Peers(
        "skip-top-owner grouper: each step's pod by its own owner",
        "none",
        "steps run one after another; a gang of all of them could never be satisfied",
        differs="no gang; KAI groups each step pod under its own owner (minimum 1): the same scheduling",
    ),
    "batch-cronjob-v1": Peers(
        "cronjob grouper: each Job run on its own",
        "none",
        "each run is a Job with its own gang",
        differs="no gang on the CronJob: its Jobs are described (and ganged) on their own, as KAI does",
    ),
    "batch-job-v1": Peers(
        "job grouper: `kai.scheduler/batch-min-member`, else 1",
        "Job controller: pods start as they can (Workload API: per `Job.spec.scheduling`)",
        "a Job makes progress pod by pod",
        differs="a `batch-min-member` above the pods the Job runs at once is capped at them (KAI keeps it and waits forever)",
    ),
    "batch-volcano-sh-job-v1alpha1": Peers(
        "default grouper (Volcano schedules its own jobs)",
        "Volcano PodGroup: `spec.minAvailable` (webhook default: the tasks' minAvailable, else "
        "replicas), per-task `minTaskMember`",
        "the job's own `minAvailable` is Volcano's gang minimum",
        differs="KAI only has its default grouper (Volcano jobs go to Volcano); ours is Volcano's own minimum",
    ),
    "core-pod-v1": Peers("pod grouper: 1 (Spark pods: per application)", "none", _ONE_POD),
    "grove-io-podcliqueset-v1alpha1": Peers(
        "grove grouper: the PodGang Grove creates",
        "Grove operator: one base PodGang per PodCliqueSet replica",
        "one gang per replica, sized as Grove's base PodGang",
        differs="scaling-group replicas beyond their minAvailable share the replica's group (Grove and KAI give them their own PodGangs)",
    ),
    "jobset-x-k8s-io-jobset-v1alpha2": Peers(
        "jobset grouper: every replicated job's pods (`kai.scheduler/batch-min-member` overrides)",
        "JobSet (Workload API design): one gang of all pods",
        "the replicated jobs start together",
        differs="a `batch-min-member` above the pods is capped at them",
    ),
    "kubeflow-org-jaxjob-v1": Peers(
        "jax grouper: `minAvailable`, else every replica", _KUBEFLOW_OP, _KUBEFLOW_WHY
    ),
    "kubeflow-org-mpijob-v1": Peers(
        "mpi grouper: `minAvailable`, else launcher + workers", _KUBEFLOW_OP, _KUBEFLOW_WHY
    ),
    "kubeflow-org-mpijob-v2beta1": Peers(
        "mpi grouper: `minAvailable`, else launcher + workers; under `WaitForWorkersReady` the "
        "launcher is subtracted while it does not exist",
        "mpi-operator PodGroup: `minAvailable`, else workers + 1",
        "under `WaitForWorkersReady` the launcher exists only once every worker is ready: it "
        "never counts in the minimum (it joins the group later, its requests reserved)",
        differs="under `WaitForWorkersReady` the launcher never counts (KAI counts it again once it exists, and subtracts it from a stated minAvailable: ours takes the stated minimum capped at the workers)",
    ),
    "kubeflow-org-notebook-v1": Peers("notebook grouper: 1", "none", _ONE_POD),
    "kubeflow-org-paddlejob-v1": Peers(
        "no dedicated plugin in the hub read (default grouper: 1)",
        _KUBEFLOW_OP,
        _KUBEFLOW_WHY,
        differs="KAI has no PaddleJob plugin (minimum 1); ours is the operator's gang",
    ),
    "kubeflow-org-pytorchjob-v1": Peers(
        "pytorch grouper: `minAvailable`, else `elasticPolicy.minReplicas`, else every replica; "
        "master and worker subgroups",
        _KUBEFLOW_OP + " (elastic: `minReplicas`)",
        "master + workers (elastic: + `minReplicas` workers); " + _KUBEFLOW_WHY,
        differs="elastic jobs: master + minReplicas workers where KAI takes minReplicas as the whole minimum (the same without a master); no master/worker subgroups; a minAvailable above the pods is capped",
    ),
    "kubeflow-org-scheduledworkflow-v1beta1": Peers(
        "no plugin (each run is an Argo Workflow: skip-top-owner grouper)",
        "none",
        "each run is a Workflow with its own scheduling; the schedule holds no pods",
    ),
    "kubeflow-org-tfjob-v1": Peers(
        "tensorflow grouper: `minAvailable`, else every replica", _KUBEFLOW_OP, _KUBEFLOW_WHY
    ),
    "kubeflow-org-xgboostjob-v1": Peers(
        "xgboost grouper: `minAvailable`, else every replica", _KUBEFLOW_OP, _KUBEFLOW_WHY
    ),
    "kubevirt-io-virtualmachine-v1": Peers(
        "default grouper (via its VirtualMachineInstance): 1",
        "none",
        _ONE_POD,
    ),
    "kubevirt-io-virtualmachineinstance-v1": Peers("default grouper: 1", "none", _ONE_POD),
    "kueue-x-k8s-io-workload-v1beta1": Peers(
        "not a pod owner (Kueue admits the owning job)",
        "Kueue: all PodSets admitted at once",
        "the PodSets are admitted together",
        differs="KAI never groups a Kueue Workload (not a pod owner); the group describes what Kueue admits",
    ),
    "leaderworkerset-x-k8s-io-leaderworkerset-v1": Peers(
        "lws grouper: one group of `size` per group",
        "LWS: one group of `size` pods per replica (Workload API PR open); its Volcano "
        "provider writes minMember 1 under `startupPolicy: LeaderReady`",
        "each group needs its leader and all workers (under LeaderReady its leader alone, "
        "the workers created once it is Ready are reserved for); groups are independent",
    ),
    "machinelearning-seldon-io-seldondeployment-v1": Peers(
        "default grouper: 1",
        "none",
        "predictor Deployments: " + _INDEPENDENT,
        differs="no gang where KAI has one group of minimum 1: the same scheduling",
    ),
    "milvus-io-milvus-v1beta1": Peers(
        "no plugin (its Deployments: 1 per pod)",
        "none",
        "Deployments: " + _INDEPENDENT,
        differs="no gang where KAI groups each pod alone: the same scheduling",
    ),
    "nvidia-com-dynamographdeployment-v1alpha1": Peers(
        "skip-top-owner grouper: Grove's PodGang",
        "Dynamo operator: a Grove PodCliqueSet",
        "the graph's services start together",
        differs="one group of every pod where KAI uses Grove's PodGang (its minAvailable per clique)",
    ),
    "nvidia-com-dynamographdeployment-v1beta1": Peers(
        "skip-top-owner grouper (v1alpha1 registered): Grove's PodGang",
        "Dynamo operator: a Grove PodCliqueSet",
        "the graph's services start together",
        differs="one group of every pod where KAI uses Grove's PodGang (its minAvailable per clique)",
    ),
    "ray-io-raycluster-v1": Peers(
        "ray grouper: head + Σ worker groups' minReplicas (else replicas) x hosts",
        "KubeRay PodGroup (Volcano / scheduler-plugins): the same",
        "the cluster needs its head and minimum workers",
    ),
    "ray-io-rayjob-v1": Peers(
        "ray grouper: the RayCluster's gang; the submitter Job is not counted",
        "KubeRay: the cluster's PodGroup",
        "the submitter is created once the cluster is ready: outside the gang",
    ),
    "ray-io-rayservice-v1": Peers(
        "ray grouper: the RayCluster's gang", "KubeRay: the cluster's PodGroup", "as RayCluster"
    ),
    "scheduling-volcano-sh-podgroup-v1beta1": Peers(
        "not a pod owner", "Volcano: `spec.minMember`", "the group states its own minimum"
    ),
    "scheduling-run-ai-podgroup-v2alpha2": Peers(
        "the group itself: `spec.minMember` (or `minSubGroup` over `subGroups`)",
        "KAI pod-grouper: creates it for the top owner",
        "the group states its own minimum",
    ),
    "scheduling-x-k8s-io-podgroup-v1alpha1": Peers(
        "not a pod owner", "coscheduling: `spec.minMember`", "the group states its own minimum"
    ),
    "serving-knative-dev-service-v1": Peers(
        "knative grouper (gang by default): one group per revision, minimum "
        "`autoscaling.knative.dev/min-scale`, else 1",
        "Knative: the autoscaler keeps at least min-scale pods",
        "a revision needs its min-scale pods (without it: the initial scale it starts with)",
        differs="without min-scale, the initial scale is the minimum where KAI takes 1 (both satisfiable: those pods are created with the revision)",
    ),
    "serving-kserve-io-inferenceservice-v1beta1": Peers(
        "no plugin (its Deployment / Knative Service is grouped)",
        "KServe: Deployments or Knative revisions",
        "predictor replicas are independent",
        differs="no gang: the predictor's Deployment or Knative revision is grouped by KAI on its own",
    ),
    "serving-kserve-io-llminferenceservice-v1alpha2": Peers(
        "no plugin (its LeaderWorkerSets: one group of `size` per group)",
        "KServe: LeaderWorkerSet per multi-node role, Deployments otherwise",
        "each multi-node group needs all its pods; single-node replicas are independent",
    ),
    "slinky-slurm-net-nodeset-v1alpha1": Peers(
        "default grouper: 1",
        "none",
        "Slurm nodes join the cluster one by one",
        differs="no gang where KAI has one group of minimum 1: the same scheduling",
    ),
    "sparkoperator-k8s-io-scheduledsparkapplication-v1beta2": Peers(
        "default grouper (each run is a SparkApplication)",
        "none",
        "each run has its own gang",
        differs="no gang: each run is a SparkApplication with its own",
    ),
    "sparkoperator-k8s-io-sparkapplication-v1beta2": Peers(
        "spark grouper: one group per application (`spark-app-selector`), minimum 1",
        "Volcano integration: minMember 1, minResources = driver + executors",
        "the executors are created by the running driver: only the driver counts, the "
        "executors' requests are reserved",
    ),
    "tekton-dev-pipelinerun-v1": Peers(
        "default grouper: 1",
        "none",
        "tasks run after one another: a gang could deadlock",
        differs="no gang where KAI has one group of minimum 1: the same scheduling",
    ),
    "tekton-dev-taskrun-v1": Peers("default grouper: 1", "none", _ONE_POD),
    "trainer-kubeflow-org-trainjob-v1alpha1": Peers(
        "no plugin (its JobSet: every pod)",
        "Trainer coscheduling / Volcano plugins: every pod of every replicated job of the "
        "runtime (initializers too)",
        "every pod of the job, read from its runtime ($runtime), starts together",
        differs="KAI has no TrainJob plugin (its Karta fallback would use this definition)",
    ),
    "workspace-devfile-io-devworkspace-v1alpha2": Peers(
        "no plugin (its Deployment: a group of 1 per pod)",
        "DevWorkspace operator: one Deployment of one pod",
        _ONE_POD,
    ),
    "workload-codeflare-dev-appwrapper-v1beta2": Peers(
        "no plugin (the wrapped objects' plugins)",
        "AppWrapper / Kueue: the wrapped pods are admitted together",
        "the wrapped components start together",
        differs="KAI has no AppWrapper plugin (its Karta fallback would use this definition)",
    ),
}
