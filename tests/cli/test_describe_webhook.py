"""`wlmap describe --explain` says, per pod, what the gang webhook would set at its creation."""

from __future__ import annotations

import io
from pathlib import Path

from workload_map.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, environ={})
    return code, out.getvalue(), err.getvalue()


def test_explain_shows_the_webhook_decision_of_every_pod() -> None:
    code, out, _ = run(
        "describe",
        "-f",
        str(ROOT / "examples/jobset/jobset.yaml"),
        "--pods",
        str(ROOT / "examples/jobset/pods.yaml"),
        "--explain",
    )
    assert code == 0
    group = "pg-5f1c2a7e-0000-4000-8000-000000000001-jobset"
    native = f"      webhook: native gang {group} (spec.schedulingGroup.podGroupName={group})"
    assert out.count(native) == 5  # the JobSet's five pods
    # the other JobSet's pod in the file: the webhook would leave it to its own workload
    assert "      webhook: sets nothing (the pod is not one of JobSet/llm-pretrain's" in out


def test_explain_without_pods_has_no_webhook_lines() -> None:
    code, out, _ = run("describe", "-f", str(ROOT / "examples/jobset/jobset.yaml"), "--explain")
    assert code == 0
    assert "webhook:" not in out
