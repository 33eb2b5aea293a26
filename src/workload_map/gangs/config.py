"""What the gang room is told: which scheduler names mean which backend, opt-in, defaults.

The keys workload-map writes or reads live here too, so the planner, the webhook, the
controller and the docs share one spelling (INTERFACES.md: prefix ``workload-map.run.ai/``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "ANNOTATION_DECISION",
    "ANNOTATION_DISRUPTION",
    "ANNOTATION_GANG",
    "ANNOTATION_MIN_GROUPS",
    "ANNOTATION_QUEUE",
    "ANNOTATION_TIMEOUT",
    "BACKENDS",
    "COSCHEDULING",
    "COSCHEDULING_LABEL",
    "KAI",
    "LABEL_COMPONENT",
    "LABEL_INSTANCE",
    "LABEL_MANAGED_BY",
    "LABEL_NAMESPACE_OPT_IN",
    "LABEL_WORKLOAD",
    "LABEL_WORKLOAD_KIND",
    "LABEL_WORKLOAD_UID",
    "MANAGED_BY",
    "NATIVE",
    "VOLCANO",
    "VOLCANO_GROUP_ANNOTATION",
    "VOLCANO_QUEUE_ANNOTATION",
    "VOLCANO_TASK_ANNOTATION",
    "GangConfig",
]

NATIVE = "native"
COSCHEDULING = "coscheduling"
VOLCANO = "volcano"
KAI = "kai"
BACKENDS = (NATIVE, COSCHEDULING, VOLCANO, KAI)

PREFIX = "workload-map.run.ai/"
#: opt-in per namespace (label ``enabled``) and per workload (annotation ``enabled``/``disabled``)
LABEL_NAMESPACE_OPT_IN = PREFIX + "gang-scheduling"
ANNOTATION_GANG = PREFIX + "gang-scheduling"
#: per-workload overrides of the coscheduling timeout and the Volcano queue
ANNOTATION_TIMEOUT = PREFIX + "schedule-timeout-seconds"
ANNOTATION_QUEUE = PREFIX + "queue"
#: ``all`` (the default: a gang is preempted whole) or ``single`` (the API's own default)
ANNOTATION_DISRUPTION = PREFIX + "gang-disruption-mode"
#: how many of the workload's gangs must start together (a ``CompositePodGroup``'s
#: ``minGroupCount``): the Karta schema has no workload-level minimum over gang instances
ANNOTATION_MIN_GROUPS = PREFIX + "gang-min-groups"
#: on the objects we own: the decision that produced them (JSON)
ANNOTATION_DECISION = PREFIX + "decision"
LABEL_MANAGED_BY = PREFIX + "managed-by"
MANAGED_BY = "gangs"
LABEL_WORKLOAD = PREFIX + "workload"
LABEL_WORKLOAD_KIND = PREFIX + "workload-kind"
LABEL_WORKLOAD_UID = PREFIX + "workload-uid"
#: attribution labels on admitted pods (with LABEL_WORKLOAD)
LABEL_COMPONENT = PREFIX + "component"
LABEL_INSTANCE = PREFIX + "instance"

COSCHEDULING_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_TASK_ANNOTATION = "volcano.sh/task-spec"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"


@dataclass(frozen=True)
class GangConfig:
    """The operator's gang settings (flags); every field has the documented default.

    ``default_enabled`` False means opt-in: a workload is handled when its namespace carries
    ``workload-map.run.ai/gang-scheduling=enabled`` or it is annotated ``…: enabled``; the
    annotation ``disabled`` always opts a workload out.
    """

    native_schedulers: frozenset[str] = frozenset({"default-scheduler"})
    coscheduling_schedulers: frozenset[str] = frozenset({"scheduler-plugins-scheduler"})
    volcano_schedulers: frozenset[str] = frozenset({"volcano"})
    kai_schedulers: frozenset[str] = frozenset({"kai-scheduler"})
    default_enabled: bool = False
    schedule_timeout_seconds: int = 60
    volcano_queue: str = "default"
    #: namespaces never handled (the webhook's namespace selector leaves them out too)
    excluded_namespaces: frozenset[str] = field(
        default_factory=lambda: frozenset({"kube-system", "kube-public", "kube-node-lease"})
    )
    #: PriorityClass values by name beyond the built-in ``system-*`` ones, (name, value) pairs:
    #: they order the tasks that fill a stated minimum's ``minResources`` (gangs/tasks.py)
    priority_values: tuple[tuple[str, int], ...] = ()
    #: the cluster's ``globalDefault`` PriorityClass (the lowest-valued one if several, as the
    #: Priority admission plugin picks): the class pods and pod groups naming none receive
    default_priority_class: str | None = None
    #: the cluster runs ``WorkloadWithJob``: the in-tree Job controller makes the scheduling
    #: objects of the Jobs it takes over (gangs/jobs.py), which are then left alone. Learned at
    #: start (``--gang-workload-with-job``, its probe) and from the Job controller's Workloads
    workload_with_job: bool = False
    #: whether the API server keeps a native PodGroup's ``schedulingConstraints`` (the
    #: ``TopologyAwareWorkloadScheduling`` probe, ``gangs.probe``): only then is a required
    #: topology level written as a constraint (docs/gangs.md, "Topology")
    native_topology: bool = False
    #: KAI ``Topology`` objects by name, their levels as (nodeLabel, alias) pairs: the aliases
    #: a required level may use (``gangs.topology``)
    kai_topologies: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    #: whether the cluster serves ``CompositePodGroup`` (v1alpha3) and keeps a Workload's
    #: ``compositePodGroupTemplates`` (the composite probe, ``gangs.probe``): only then is a gang
    #: with subgroups written as a composite group (docs/gangs.md, "Composite groups")
    composite_groups: bool = False

    def backend_for(self, scheduler_name: str | None) -> str | None:
        """The backend of a pod's ``spec.schedulerName`` (unset = the default scheduler)."""
        name = scheduler_name or "default-scheduler"
        if name in self.native_schedulers:
            return NATIVE
        if name in self.coscheduling_schedulers:
            return COSCHEDULING
        if name in self.volcano_schedulers:
            return VOLCANO
        if name in self.kai_schedulers:
            return KAI
        return None
