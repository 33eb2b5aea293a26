"""Differential test: our engine against the reference Go library, on every realworld fixture.

The reference is ``github.com/run-ai/karta`` at the version KAI Scheduler pins, run through the
harness in ``benchmarks/refgo`` (built by its ``build.sh`` into the cache outside the checkout;
skipped with the reason when Go is absent). Each case is a definition (the reference's own
catalog, the older ResourceInterface examples, the newer upstream example, our catalog) applied
to every realworld object of its kind, with the realworld pods that belong to it or, for the
operators whose pod labels are well known (LeaderWorkerSet, JobSet, Kubeflow jobs), the pods
the operator would create; plus the engine's hand-written fixtures and a few hand-written probe
definitions. Both engines answer the same questions (validity, instances, scale, extracted
parts, status, subtree scale, tree, pod attribution, replica keys, gang members and keys, pod
groups); every answer that differs must be listed, with its reason, in
``docs/reference-differences.md`` — a new difference, or a listed one that went away, fails the
test. ``python -m tests.engine.test_reference_diff`` (from the checkout's root) prints the current
differences in the document's table format. The cases are built in ``reference_cases``, the
facts in ``reference_facts``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from tests.engine.reference_cases import all_cases, shared_dir
from tests.engine.reference_facts import Facts, our_facts, reference_facts
from tests.engine.refgo_harness import ROOT, refgo_client, start_refgo

DOC = ROOT / "docs" / "reference-differences.md"
MISSING = "∅"  # a fact one side does not state


def render(value: Any) -> str:
    """A short, stable text for a fact value (long lists become a count and a digest)."""
    if isinstance(value, str) and value == MISSING:
        return MISSING
    if isinstance(value, list) and len(value) > 4:
        digest = hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()[:8]
        return f"[{len(value)} items #{digest}]"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text.replace("|", "\\|")


@dataclass(frozen=True)
class Difference:
    case: str
    fact: str
    ours: str
    reference: str

    def row(self, reason: str = "?") -> str:
        return f"| `{self.case}` | `{self.fact}` | {self.ours} | {self.reference} | {reason} |"


def differences(case_id: str, ours: Facts, reference: Facts) -> set[Difference]:
    out: set[Difference] = set()
    for key in sorted(set(ours) | set(reference)):
        a, b = ours.get(key, MISSING), reference.get(key, MISSING)
        if a != b:
            out.add(Difference(case_id, key, render(a), render(b)))
    return out


_ROW = re.compile(r"^\|\s*`(?P<case>[^`]+)`\s*\|\s*`(?P<fact>[^`]+)`\s*\|(?P<rest>.*)\|\s*$")
_REASON_HEADING = re.compile(r"^###\s+(?P<id>[a-z0-9-]+)\b")


def documented() -> dict[Difference, str]:
    """Rows of the document's difference tables, each with the reason id it is filed under."""
    out: dict[Difference, str] = {}
    if not DOC.is_file():
        return out
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", match.group("rest"))]
        if len(cells) < 3:
            continue
        diff = Difference(match.group("case"), match.group("fact"), cells[0], cells[1])
        out[diff] = cells[2]
    return out


def reason_ids() -> set[str]:
    if not DOC.is_file():
        return set()
    return {
        m.group("id")
        for line in DOC.read_text(encoding="utf-8").splitlines()
        if (m := _REASON_HEADING.match(line))
    }


def compute_all(refgo: Any) -> dict[str, tuple[Facts, Facts]]:
    cases = all_cases()
    requests = [{"karta": c.definition.karta, "object": c.obj, "pods": c.pods} for c in cases]
    reports = refgo.describe_many(requests)
    return {
        case.id: (our_facts(case), reference_facts(report, case))
        for case, report in zip(cases, reports, strict=True)
    }


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def refgo() -> Any:
    return start_refgo()


@pytest.fixture(scope="session")
def all_facts(refgo: Any) -> dict[str, tuple[Facts, Facts]]:
    pytest.importorskip("workload_map.engine", reason="the engine package is not importable")
    return compute_all(refgo)


# A fresh machine builds the harness first (module downloads and a compile: minutes).
@pytest.mark.timeout(900)
def test_every_difference_is_documented(all_facts: dict[str, tuple[Facts, Facts]]) -> None:
    found: set[Difference] = set()
    for case_id, (ours, reference) in all_facts.items():
        found |= differences(case_id, ours, reference)
    # Rows of cases that were not run here (../shared absent) are neither checked nor stale.
    listed = {d: r for d, r in documented().items() if d.case in all_facts}
    new = sorted(found - set(listed), key=lambda d: (d.case, d.fact))
    gone = sorted(set(listed) - found, key=lambda d: (d.case, d.fact))
    message = []
    if new:
        message.append(f"{len(new)} difference(s) not in {DOC.name}:")
        message += [d.row() for d in new[:60]]
    if gone:
        message.append(f"{len(gone)} documented difference(s) no longer occur:")
        message += [d.row(listed[d]) for d in gone[:60]]
    assert not message, "\n".join(message)


def test_every_documented_difference_has_a_reason() -> None:
    known = reason_ids()
    unexplained = sorted(
        f"{d.case} {d.fact}: {reason!r}"
        for d, reason in documented().items()
        if reason not in known
    )
    assert not unexplained, "rows whose reason is not a '### <id>' section:\n" + "\n".join(
        unexplained
    )


def test_cases_cover_the_reference_catalog() -> None:
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared (realworld manifests) is not beside this checkout")
    covered = {c.definition.id for c in all_cases()}
    # The reference catalog definitions whose kinds have realworld objects (Sandbox and
    # LLMInferenceService v1alpha1 have none).
    expected = {
        "refcat:apps-statefulset-v1",
        "refcat:leaderworkerset-x-k8s-io-leaderworkerset-v1",
        "refcat:milvus-io-milvus-v1beta1",
        "refcat:ray-io-rayjob-v1",
        "refcat:serving-knative-dev-service-v1",
        "refcat:serving-kserve-io-llminferenceservice-v1alpha2",
    }
    assert expected <= covered
    with_pods = {c.definition.id for c in all_cases() if c.pods}
    assert {"refcat:leaderworkerset-x-k8s-io-leaderworkerset-v1", "ri:jobset", "ri:pytorch"} <= (
        with_pods
    )


def main() -> int:
    """Print the current differences as rows for docs/reference-differences.md."""
    try:
        refgo = refgo_client.RefGo(refgo_client.build())
    except refgo_client.RefGoUnavailable as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    listed = documented()
    for case_id, (ours, reference) in compute_all(refgo).items():
        for diff in sorted(differences(case_id, ours, reference), key=lambda d: d.fact):
            print(diff.row(listed.get(diff, "?")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
