"""``describe -f FILE TYPE/NAME`` takes the short names discovery would offer (offline)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_short_names_pick_objects_of_a_file(wlmap, tmp_path: Path) -> None:
    lws = str(ROOT / "examples/leaderworkerset/lws.yaml")
    r = wlmap(["describe", "-f", lws, "lws/vllm-70b", "-o", "name"])
    assert r.code == 0, r.err
    assert r.out.strip().endswith("/vllm-70b")
    both = tmp_path / "both.yaml"
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "solo", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    both.write_text(yaml.safe_dump_all([deploy, pod]))
    for word, name in (("deploy/web", "web"), ("po/solo", "solo"), ("pods/solo", "solo")):
        r = wlmap(["describe", "-f", str(both), word, "-o", "name"])
        assert r.code == 0, (word, r.err)
        assert r.out.strip().endswith(f"/{name}"), word


def test_a_short_name_the_type_does_not_have_is_refused(wlmap) -> None:
    jobset = str(ROOT / "examples/jobset/jobset.yaml")
    r = wlmap(["describe", "-f", jobset, "js/llm-pretrain"])
    assert r.code == 2 and "no object matches js/llm-pretrain" in r.err
