"""Hand-written schemas of the built-in kinds the catalog covers (Kubernetes v1.34 API).

Only the fields a definition may reasonably read are spelled out, with the types of the real
API (``k8s.io/api``); anything else is absent, so a typo in a catalog path is caught offline.
The integration test ``test_builtin_openapi.py`` checks the same paths against the API server's
own OpenAPI v3 document. Each schema is wrapped as a CRD-shaped document so one checker
(``check_against_crd``) serves both built-in and custom kinds.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
INTEGER: Schema = {"type": "integer"}
BOOLEAN: Schema = {"type": "boolean"}
QUANTITY: Schema = {"x-kubernetes-int-or-string": True}
STRING_MAP: Schema = {"type": "object", "additionalProperties": STRING}


def obj(**properties: Schema) -> Schema:
    return {"type": "object", "properties": properties}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


RESOURCES = obj(
    requests={"type": "object", "additionalProperties": QUANTITY},
    limits={"type": "object", "additionalProperties": QUANTITY},
    claims=array(obj(name=STRING, request=STRING)),
)
CONTAINER = obj(
    name=STRING,
    image=STRING,
    command=array(STRING),
    args=array(STRING),
    resources=RESOURCES,
    restartPolicy=STRING,
    env=array(obj(name=STRING, value=STRING)),
)
AFFINITY = obj(
    nodeAffinity={"type": "object"},
    podAffinity={"type": "object"},
    podAntiAffinity={"type": "object"},
)
POD_SPEC = obj(
    containers=array(CONTAINER),
    initContainers=array(CONTAINER),
    schedulerName=STRING,
    priorityClassName=STRING,
    affinity=AFFINITY,
    nodeName=STRING,
    nodeSelector=STRING_MAP,
    resources=RESOURCES,
    resourceClaims=array(obj(name=STRING, resourceClaimName=STRING)),
    overhead={"type": "object", "additionalProperties": QUANTITY},
    restartPolicy=STRING,
    tolerations=array({"type": "object"}),
)
OBJECT_META = obj(
    name=STRING,
    namespace=STRING,
    uid=STRING,
    generation=INTEGER,
    labels=STRING_MAP,
    annotations=STRING_MAP,
    ownerReferences=array(obj(kind=STRING, name=STRING, uid=STRING, controller=BOOLEAN)),
)
POD_TEMPLATE = obj(metadata=OBJECT_META, spec=POD_SPEC)
CONDITIONS = array(
    obj(type=STRING, status=STRING, reason=STRING, message=STRING, lastTransitionTime=STRING)
)


def _kind(spec: Schema, status: Schema) -> Schema:
    return obj(apiVersion=STRING, kind=STRING, metadata=OBJECT_META, spec=spec, status=status)


JOB_SPEC = obj(
    parallelism=INTEGER,
    completions=INTEGER,
    completionMode=STRING,
    backoffLimit=INTEGER,
    suspend=BOOLEAN,
    template=POD_TEMPLATE,
)
JOB_STATUS = obj(
    active=INTEGER,
    ready=INTEGER,
    succeeded=INTEGER,
    failed=INTEGER,
    terminating=INTEGER,
    startTime=STRING,
    completionTime=STRING,
    conditions=CONDITIONS,
)
REPLICA_STATUS = dict(
    replicas=INTEGER,
    readyReplicas=INTEGER,
    availableReplicas=INTEGER,
    updatedReplicas=INTEGER,
    observedGeneration=INTEGER,
)

BUILTIN: dict[tuple[str, str, str], Schema] = {
    ("", "v1", "Pod"): _kind(
        POD_SPEC,
        obj(
            phase=STRING,
            reason=STRING,
            conditions=CONDITIONS,
            containerStatuses=array({"type": "object"}),
        ),
    ),
    ("batch", "v1", "Job"): _kind(JOB_SPEC, JOB_STATUS),
    ("batch", "v1", "CronJob"): _kind(
        obj(
            schedule=STRING,
            suspend=BOOLEAN,
            concurrencyPolicy=STRING,
            jobTemplate=obj(metadata=OBJECT_META, spec=JOB_SPEC),
        ),
        obj(
            active=array(obj(kind=STRING, name=STRING, uid=STRING)),
            lastScheduleTime=STRING,
            lastSuccessfulTime=STRING,
        ),
    ),
    ("apps", "v1", "Deployment"): _kind(
        obj(replicas=INTEGER, paused=BOOLEAN, template=POD_TEMPLATE),
        obj(**REPLICA_STATUS, unavailableReplicas=INTEGER, conditions=CONDITIONS),
    ),
    ("apps", "v1", "StatefulSet"): _kind(
        obj(replicas=INTEGER, podManagementPolicy=STRING, template=POD_TEMPLATE),
        obj(
            **REPLICA_STATUS,
            currentReplicas=INTEGER,
            currentRevision=STRING,
            updateRevision=STRING,
            conditions=CONDITIONS,
        ),
    ),
    ("apps", "v1", "ReplicaSet"): _kind(
        obj(replicas=INTEGER, template=POD_TEMPLATE),
        obj(**REPLICA_STATUS, fullyLabeledReplicas=INTEGER, conditions=CONDITIONS),
    ),
    ("apps", "v1", "DaemonSet"): _kind(
        obj(template=POD_TEMPLATE),
        obj(
            desiredNumberScheduled=INTEGER,
            currentNumberScheduled=INTEGER,
            numberReady=INTEGER,
            numberAvailable=INTEGER,
            updatedNumberScheduled=INTEGER,
            observedGeneration=INTEGER,
            conditions=CONDITIONS,
        ),
    ),
}


def as_crd(group: str, version: str, kind: str, schema: Schema) -> dict[str, Any]:
    """``schema`` dressed as a CRD serving only ``version`` (what ``check_against_crd`` reads)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.lower()}s.{group or 'core'}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": f"{kind.lower()}s"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }
