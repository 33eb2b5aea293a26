"""``opt_in``'s answers, asked per workload of every resync: the namespace label's answer is
kept per namespace, and every answer reads as the rule says whatever was asked before."""

from __future__ import annotations

from typing import Any

from workload_map.gangs.config import ANNOTATION_GANG, LABEL_NAMESPACE_OPT_IN, GangConfig
from workload_map.gangs.policy import opt_in


def _job(namespace: Any, annotation: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "j", "namespace": namespace}
    if annotation is not None:
        meta["annotations"] = {ANNOTATION_GANG: annotation}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta}


def test_each_namespace_and_label_gets_its_own_answer() -> None:
    config = GangConfig()
    on, off = {LABEL_NAMESPACE_OPT_IN: "enabled"}, {LABEL_NAMESPACE_OPT_IN: "disabled"}
    for _ in range(2):  # asked again: the same answers
        a = opt_in(_job("team-a"), on, config)
        b = opt_in(_job("team-b"), on, config)
        assert (a.enabled, a.reason) == (
            True,
            f"label {LABEL_NAMESPACE_OPT_IN}=enabled on namespace team-a",
        )
        assert b.reason.endswith("on namespace team-b")
        # the label turned off on the same namespace
        c = opt_in(_job("team-a"), off, config)
        assert (c.enabled, c.reason) == (
            False,
            f"label {LABEL_NAMESPACE_OPT_IN}=disabled on namespace team-a",
        )


def test_the_workload_annotation_and_the_defaults_still_decide() -> None:
    on = {LABEL_NAMESPACE_OPT_IN: "enabled"}
    config = GangConfig()
    assert not opt_in(_job("team-a", "disabled"), on, config).enabled
    assert opt_in(_job("team-a", "enabled"), None, config).enabled
    assert not opt_in(_job("team-a"), None, config).enabled
    assert opt_in(_job("team-a"), None, GangConfig(default_enabled=True)).enabled
    excluded = opt_in(_job("kube-system"), on, config)
    assert (excluded.enabled, excluded.reason) == (False, "namespace kube-system is excluded")


def test_a_namespace_that_is_not_a_string_is_named_as_given() -> None:
    answer = opt_in(_job(7), {LABEL_NAMESPACE_OPT_IN: "enabled"}, GangConfig())
    assert (answer.enabled, answer.reason) == (
        True,
        f"label {LABEL_NAMESPACE_OPT_IN}=enabled on namespace 7",
    )
