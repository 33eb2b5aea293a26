"""Gang rules the Karta language cannot say, as annotations under ``workload-map.run.ai/``.

Neither the reference's Karta CRD nor ours preserves unknown fields (the API server prunes
them), so a definition that needs more than ``podGroup``/``podGroups`` says it in annotations
on the Karta, which every consumer that does not know them ignores:

``workload-map.run.ai/gang-min-member``
    A jq expression on the workload object. A number is the minimum member count of the v2
    ``podGroup`` (Kubeflow's ``.spec.runPolicy.schedulingPolicy.minAvailable``, a Volcano
    Job's ``.spec.minAvailable``), capped at the pods that can exist before the gang is
    admitted; ``null`` or no result keeps the computed minimum. In the alpha ``podGroups``
    form it is the minimum of *each* group (every gang instance: one per LWS group, per
    replicated job), capped at the pods of that group that can exist before admission (one
    replica's share where the keys split by replica, the pinned instance's where they pin one).

``workload-map.run.ai/created-after-admission.<component>``
    A jq expression on the workload object naming the instances of ``<component>`` whose pods
    the operator creates only once the gang runs (mpi-operator's launcher under
    ``WaitForWorkersReady``, Spark executors started by the driver): ``true`` means every
    instance, strings are instance ids, ``false``/``null``/no result none. Those pods stay out
    of every gang minimum; the group reports them (``createdLater``) and reserves their
    requests (``minResources``), as Volcano's Spark integration does. In the alpha
    ``podGroups`` form this holds per gang instance too: a group whose member is an ancestor
    of the component (an LWS ``group`` of ``size`` pods, a worker created once its leader is
    Ready under ``startupPolicy: LeaderReady``) needs its own scale less its share of the later
    pods (their count spread over the ancestor's replicas, rounded up), and reserves the
    requests of all of its pods when each instance's pods divide evenly over those replicas.

:func:`gang_extensions` reads them; :func:`check` reports malformed ones (``wlmap validate``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from workload_map import jq
from workload_map.model.views import View

if TYPE_CHECKING:
    from workload_map.model.findings import Finding

__all__ = [
    "CREATED_LATER",
    "GANG_MIN_MEMBER",
    "PREFIX",
    "GangExtensions",
    "check",
    "gang_extensions",
]

PREFIX = "workload-map.run.ai/"
GANG_MIN_MEMBER = PREFIX + "gang-min-member"
CREATED_LATER = PREFIX + "created-after-admission."

#: annotations under the prefix that are not gang extensions (catalog bookkeeping)
_OTHER = ("checked-against", "served-versions", "derived-from")


class GangExtensions(View):
    """The gang annotations of one definition (expressions as written)."""

    min_member: str | None = None
    #: component name -> expression naming its instances created after admission
    created_later: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.min_member is None and not self.created_later


def _annotations(metadata: Mapping[str, Any] | None) -> Mapping[str, Any]:
    value = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def gang_extensions(karta: Any) -> GangExtensions:
    """The gang annotations of a :class:`~workload_map.model.Karta` (or its metadata dict)."""
    metadata = karta if isinstance(karta, Mapping) else getattr(karta, "metadata", None)
    annotations = _annotations(metadata)
    minimum = annotations.get(GANG_MIN_MEMBER)
    later = {
        key[len(CREATED_LATER) :]: value
        for key, value in annotations.items()
        if isinstance(key, str)
        and key.startswith(CREATED_LATER)
        and isinstance(value, str)
        and value.strip()
    }
    return GangExtensions(
        min_member=minimum if isinstance(minimum, str) and minimum.strip() else None,
        created_later=later,
    )


def _path(key: str) -> str:
    return f'metadata.annotations["{key}"]'


def _jq_findings(key: str, expr: str) -> list[Finding]:
    from workload_map.model.findings import ERROR, Finding, FindingCode

    try:
        jq.parse(expr)
        violations = jq.karta_violations(expr)
    except jq.JqError as exc:
        return [
            Finding(
                _path(key),
                FindingCode.JQ_PARSE_ERROR,
                ERROR,
                f"failed to parse JQ expression '{expr}': {exc.message}",
                None,
                exc.offset,
            )
        ]
    except RecursionError:
        return [
            Finding(
                _path(key),
                FindingCode.JQ_PARSE_ERROR,
                ERROR,
                "JQ expression nests too deeply",
                None,
            )
        ]
    return [
        Finding(
            _path(key),
            FindingCode.JQ_FORBIDDEN,
            ERROR,
            f"JQ expression '{expr}' failed validation: {v.message}",
            None,
            v.offset,
        )
        for v in violations
    ]


def check(karta: Any) -> list[Finding]:
    """Findings on the ``workload-map.run.ai/`` gang annotations of a definition.

    Errors: an expression that does not parse or breaks the Karta jq rules, a
    ``created-after-admission`` annotation naming no component, or one naming a component
    that describes no pods; ``gang-min-member`` on a definition without gang instructions is a
    warning (there is no group it could set). Unknown keys under the prefix are warnings
    (a misspelt extension would otherwise be ignored silently).
    """
    from workload_map.model.findings import ERROR, WARNING, Finding, FindingCode

    metadata = karta if isinstance(karta, Mapping) else getattr(karta, "metadata", None)
    annotations = _annotations(metadata)
    out: list[Finding] = []
    components: dict[str, Any] = {}
    if not isinstance(karta, Mapping) and hasattr(karta, "components"):
        components = {c.name: c for c in karta.components()}
    for key, value in annotations.items():
        if not isinstance(key, str) or not key.startswith(PREFIX):
            continue
        rest = key[len(PREFIX) :]
        if rest in _OTHER:
            continue
        if key == GANG_MIN_MEMBER or key.startswith(CREATED_LATER):
            if not isinstance(value, str) or not value.strip():
                out.append(
                    Finding(
                        _path(key),
                        FindingCode.EXTENSION_EMPTY,
                        ERROR,
                        f"{key} needs a jq expression",
                    )
                )
                continue
            out += _jq_findings(key, value)
            if key == GANG_MIN_MEMBER:
                out += _min_member_rules(karta, key)
            else:
                out += _created_later_rules(components, key)
            continue
        out.append(
            Finding(
                _path(key),
                FindingCode.EXTENSION_UNKNOWN,
                WARNING,
                f"unknown workload-map.run.ai annotation '{rest}' (known: gang-min-member, "
                "created-after-admission.<component>)",
            )
        )
    return out


def _min_member_rules(karta: Any, key: str) -> list[Finding]:
    from workload_map.model.findings import WARNING, Finding, FindingCode

    spec = getattr(karta, "spec", None)
    instructions = getattr(spec, "optimization_instructions", None)
    gang = getattr(instructions, "gang_scheduling", None)
    if spec is None or getattr(gang, "pod_group", None) is not None:
        return []
    if getattr(gang, "pod_groups", None):
        return []  # the alpha form: the minimum of each of its groups
    return [
        Finding(
            _path(key),
            FindingCode.EXTENSION_NO_POD_GROUP,
            WARNING,
            f"{key} sets the minimum of the gangs, and this definition has no podGroup or "
            "podGroups",
        )
    ]


def _created_later_rules(components: Mapping[str, Any], key: str) -> list[Finding]:
    from workload_map.model.findings import ERROR, Finding, FindingCode

    name = key[len(CREATED_LATER) :]
    if not name:
        return [
            Finding(
                _path(key),
                FindingCode.EXTENSION_COMPONENT,
                ERROR,
                f"{CREATED_LATER}<component> must name a component",
            )
        ]
    if not components:
        return []
    comp = components.get(name)
    if comp is None:
        return [
            Finding(
                _path(key),
                FindingCode.EXTENSION_COMPONENT,
                ERROR,
                f"{key} names component '{name}', which is not defined",
                name,
            )
        ]
    if not getattr(comp, "has_pod_definition", True):
        return [
            Finding(
                _path(key),
                FindingCode.EXTENSION_COMPONENT,
                ERROR,
                f"{key} names component '{name}', which describes no pods",
                name,
            )
        ]
    return []
