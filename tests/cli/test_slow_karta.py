"""A cluster Karta whose expression runs past the jq deadline costs one deadline per command,
not one per object, and says so once (issue 12 item 3)."""

from __future__ import annotations

import copy
import itertools
import json

import pytest
import yaml

import workload_map.jq.closures as jq_closures
import workload_map.jq.program as jq_program
from tests.cli.fake_cluster import JOBSET, KARTA, FakeAPI, obj

SLOW = "reduce .spec.big[]? as $x (0; . + ($x | tostring | length)) > 0"


def test_slow_expression_hits_its_deadline_once(wlmap, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    monkeypatch.setattr(
        jq_program, "DEFAULT_LIMITS", dataclasses.replace(jq_program.DEFAULT_LIMITS, timeout=0.05)
    )
    # an injected jq clock: each look at it is a millisecond of CPU, so the 0.05 s deadline is
    # 50 looks (one per 512 evaluation steps or per costly step): SLOW reaches it by the work it
    # counts, on a machine of any speed and under any load; the other expressions look a few times
    looks = itertools.count()

    def clock() -> float:
        return next(looks) * 0.001

    monkeypatch.setattr(jq_closures, "clock", clock)
    monkeypatch.setattr(jq_program, "clock", clock)
    karta = yaml.safe_load(
        wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "yaml"]).out
    )
    karta = copy.deepcopy(karta)
    karta["metadata"] = {"name": "slow-jobset"}
    root = karta["spec"]["structureDefinition"]["rootComponent"]
    root["statusDefinition"]["statusMappings"]["resuming"] = [  # the first one evaluated
        {"byExpression": {"expression": SLOW, "expectedResult": "true"}}
    ]
    api = FakeAPI(namespace="ml").serve(JOBSET, KARTA)
    big = list(range(100_000))
    for name in ("a", "b", "c", "d"):
        api.add(
            obj(
                "jobset.x-k8s.io/v1alpha2",
                "JobSet",
                name,
                "ml",
                spec={"replicatedJobs": [], "big": big},
            )
        )
    api.add(karta)
    # the deadlines hit are counted, not timed (a loaded machine stretches wall time)
    hit: list[jq_closures.JqDeadlineError] = []

    class CountedDeadline(jq_closures.JqDeadlineError):
        def __init__(self, timeout: float) -> None:
            super().__init__(timeout)
            hit.append(self)

    monkeypatch.setattr(jq_closures, "JqDeadlineError", CountedDeadline)
    r = wlmap(["get", "jobsets", "-o", "json"], api=api)
    warnings = [line for line in r.err.splitlines() if "ran past its deadline" in line]
    assert len(warnings) == 1, (r.err, r.out[:2000])
    assert "slow-jobset" in warnings[0] and SLOW in warnings[0]
    # the rows are still there (the status of each says why it could not be resolved)
    names = [i["name"] for i in json.loads(r.out)["items"]] if r.out.strip() else []
    assert names == ["a", "b", "c", "d"] or "could not resolve" in r.err
    assert len(hit) == 1, hit  # one deadline for the command, not one per JobSet
    assert r.code == 1  # shown, but not a success
