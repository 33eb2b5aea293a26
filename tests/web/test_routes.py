"""Every route of ``wlmap serve`` over HTTP, its access guard, and bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.web.conftest import EXAMPLES, TOKEN, Http, make_http
from workload_map.web import FileSource


def test_workloads_page_lists_every_top_level_workload(http: Http) -> None:
    status, headers, body = http.get("/")
    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    for name in ("llm-pretrain", "resnet-ddp", "vllm-70b", "batch-infer"):
        assert f">{name}</a>" in body
    # the Jobs of the JobSet are not listed as workloads of their own
    assert ">llm-pretrain-workers-0</a>" not in body
    assert 'chip chip-running">Running' in body


def test_filters_sort_and_paging(http: Http) -> None:
    _, _, body = http.get("/?kind=JobSet")
    assert ">llm-pretrain</a>" in body and ">resnet-ddp</a>" not in body
    _, _, body = http.get("/?namespace=research")
    assert ">resnet-ddp</a>" in body and ">llm-pretrain</a>" not in body
    _, _, body = http.get("/?phase=Degraded")
    assert ">vllm-70b</a>" in body and ">llm-pretrain</a>" not in body
    _, _, body = http.get("/?q=ddp")
    assert ">resnet-ddp</a>" in body and ">vllm-70b</a>" not in body
    _, _, asc = http.get("/?sort=name&dir=asc")
    _, _, desc = http.get("/?sort=name&dir=desc")
    assert asc.index(">batch-infer<") < asc.index(">vllm-70b<")
    assert desc.index(">vllm-70b<") < desc.index(">batch-infer<")
    _, _, nothing = http.get("/?kind=NoSuchKind")
    assert "No workloads match." in nothing
    status, _, _ = http.get("/?page=abc&sort=%3Cscript%3E")
    assert status == 200  # nonsense parameters fall back to defaults


def test_workload_page_has_tree_gangs_vitals_and_raw_object(http: Http) -> None:
    status, _, body = http.get("/workloads/jobset.x-k8s.io/v1alpha2/JobSet/ml-team/llm-pretrain")
    assert status == 200
    assert "<svg" in body and "llm-pretrain-workers-0-0-m4d9s" in body
    assert "pg-5f1c2a7e-0000-4000-8000-000000000001-jobset" in body  # the gang
    assert "short of the minimum" in body  # one member Pending, not bound
    assert "requested" in body and "pending" in body and "held" in body and "GPUs" in body
    assert "&#34;replicatedJobs&#34;" in body or "&quot;replicatedJobs&quot;" in body
    assert "How each pod was placed" in body


def test_pods_per_instance_are_capped_with_more(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all((EXAMPLES / "jobset/jobset.yaml").read_text()))
    jobset = docs[0]
    jobset["metadata"]["uid"] = "js-1"
    pods = []
    for i in range(12):
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{jobset['metadata']['name']}-workers-0-{i}-x",
                    "namespace": jobset["metadata"]["namespace"],
                    "uid": f"p{i}",
                    # the Job is not in the file: the JobSet's labels place the pod
                    "ownerReferences": [
                        {
                            "apiVersion": "batch/v1",
                            "kind": "Job",
                            "name": "gone",
                            "uid": "j0",
                            "controller": True,
                        }
                    ],
                    "labels": {
                        "jobset.sigs.k8s.io/jobset-name": jobset["metadata"]["name"],
                        "jobset.sigs.k8s.io/replicatedjob-name": "workers",
                    },
                },
                "spec": {"containers": [{"name": "c", "image": "x"}]},
                "status": {"phase": "Running"},
            }
        )
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([jobset, *pods]))
    source = FileSource(tmp_path, poll_seconds=0)
    for client in make_http(source):
        name = jobset["metadata"]["name"]
        _, _, body = client.get(
            f"/workloads/jobset.x-k8s.io/v1alpha2/JobSet/{jobset['metadata']['namespace']}/{name}"
        )
        assert "+4 more" in body


def test_unknown_workload_and_page(http: Http) -> None:
    status, _, body = http.get("/workloads/jobset.x-k8s.io/v1alpha2/JobSet/ml-team/nope")
    assert status == 404 and "No JobSet ml-team/nope here" in body
    status, _, body = http.get("/nothing/here")
    assert status == 404 and "No such page." in body
    assert "Traceback" not in body


def test_definitions_page(http: Http) -> None:
    status, _, body = http.get("/definitions")
    assert status == 200
    assert "jobset-x-k8s-io-jobset-v1alpha2" in body
    assert "catalog" in body


def test_playground_evaluates_offline(http: Http) -> None:
    workload = (EXAMPLES / "jobset/jobset.yaml").read_text()
    pods = (EXAMPLES / "jobset/pods.yaml").read_text()
    status, _, body = http.request(
        "POST", "/api/playground", json={"workload": workload, "pods": pods}
    )
    assert status == 200
    result = json.loads(body)
    assert result["error"] is None
    assert result["view"]["pods"] == {
        "desired": 5,
        "current": 5,
        "ready": 3,
        "pending": 1,
        "held": 4,
    }
    assert result["definition"]["origin"] == "catalog"


def test_playground_marks_jq_positions_of_a_bad_karta(http: Http) -> None:
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "bad"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "w",
                    "kind": {"group": "example.com", "version": "v1", "kind": "W"},
                    "specDefinition": {"podTemplateSpecPath": ".spec.template | ]"},
                    "statusDefinition": {"statusMappings": {}},
                }
            }
        },
    }
    workload = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"}}
    _, _, body = http.request(
        "POST",
        "/api/playground",
        json={"workload": json.dumps(workload), "karta": yaml.safe_dump(karta)},
    )
    result = json.loads(body)
    assert result["error"] == "the definition is not valid (see the findings)"
    bad = [f for f in result["findings"] if f["path"].endswith("podTemplateSpecPath")]
    assert bad and isinstance(bad[0]["offset"], int)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"workload": "a: [unclosed"}, "workload: not valid YAML or JSON: line 2"),
        ({"workload": ""}, "workload: paste a workload object"),
        ({"workload": "- 1\n- 2\n"}, "workload: expected objects, found a list"),
        (
            {"workload": "apiVersion: x/v1\nkind: Unknown\nmetadata: {name: a}\n"},
            "no built-in definition covers Unknown (x/v1)",
        ),
        ({"workload": "x" * (2 * 2**20 + 1)}, "workload: larger than 2 MiB"),
        ({"workload": "[" * 100000}, "workload:"),
    ],
)
def test_playground_bad_input_gets_a_message(
    http: Http, payload: dict[str, str], message: str
) -> None:
    status, _, body = http.request("POST", "/api/playground", json=payload)
    assert status == 200
    result = json.loads(body)
    assert result["error"].startswith(message) or message in result["error"]
    assert "Traceback" not in body


def test_playground_rejects_non_json(http: Http) -> None:
    status, _, body = http.request("POST", "/api/playground", data=b"not json")
    assert status == 400 and "not JSON" in body
    status, _, body = http.request("POST", "/api/playground", json={"workload": 3})
    assert status == 400


@pytest.fixture
def anonymous(examples_source: FileSource) -> Iterator[Http]:
    for client in make_http(examples_source):
        client.client.session.cookie_jar.clear()
        yield client


def test_requests_without_the_token_are_refused(anonymous: Http) -> None:
    for path in ("/", "/definitions", "/workloads/batch/v1/Job/ml-team/x", "/events"):
        status, headers, _ = anonymous.get(path)
        assert status == 403, path
        assert "Access-Control-Allow-Origin" not in headers
    status, _, _ = anonymous.request("POST", "/api/playground", json={"workload": "a: 1"})
    assert status == 403
    status, _, _ = anonymous.get("/?token=wrong")
    assert status == 403


def test_the_token_in_the_address_becomes_a_strict_cookie(anonymous: Http) -> None:
    status, headers, _ = anonymous.get(f"/?token={TOKEN}&kind=JobSet")
    assert status == 302
    assert headers["Location"] == "/?kind=JobSet"  # dropped from the address bar
    cookie = headers["Set-Cookie"]
    assert f"wlmap_token={TOKEN}" in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, _, body = anonymous.get("/?kind=JobSet")
    assert status == 200 and ">llm-pretrain</a>" in body
    status, _, _ = anonymous.get("/", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 200


def test_foreign_hosts_are_refused_even_with_the_token(http: Http) -> None:
    for host in ("evil.example.com", "evil.example.com:8765", "127.0.0.1.nip.io"):
        status, _, _ = http.get("/", headers={"Host": host})
        assert status == 421, host
    for host in ("localhost:8765", "127.0.0.1", "[::1]:8765"):
        status, _, _ = http.get("/", headers={"Host": host})
        assert status == 200, host


def test_security_headers(http: Http) -> None:
    _, headers, _ = http.get("/")
    assert headers["X-Frame-Options"] == "DENY"
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"] == "no-referrer"
    assert "Access-Control-Allow-Origin" not in headers


def test_markup_in_labels_and_names_renders_as_text(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all((EXAMPLES / "jobset/jobset.yaml").read_text()))
    jobset = docs[0]
    jobset["metadata"]["labels"] = {"x": "<script>alert(1)</script>"}
    jobset["metadata"]["annotations"] = {"a": '"><img src=x onerror=alert(1)>'}
    (tmp_path / "js.yaml").write_text(yaml.safe_dump(jobset))
    source = FileSource(tmp_path, poll_seconds=0)
    for client in make_http(source):
        meta = jobset["metadata"]
        _, _, body = client.get(
            f"/workloads/jobset.x-k8s.io/v1alpha2/JobSet/{meta['namespace']}/{meta['name']}"
        )
        assert "<script>alert(1)</script>" not in body
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
        assert "<img src=x" not in body


def test_static_assets_and_health(http: Http) -> None:
    status, _, body = http.get("/static/app.js")
    assert status == 200 and "EventSource" in body
    status, _, _ = http.get("/static/../app.py")
    assert status in (403, 404)
    status, _, body = http.get("/healthz")
    assert status == 200 and body == "ok\n"


def test_a_bad_file_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("a: [unclosed\n")
    (tmp_path / "deep.json").write_text("[" * 20000 + "]" * 20000)
    for path in (EXAMPLES / "pytorchjob").glob("*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    source = FileSource(tmp_path, poll_seconds=0)
    for client in make_http(source):
        status, _, body = client.get("/")
        assert status == 200
        assert ">resnet-ddp</a>" in body
        assert "broken.yaml" in body and "deep.json" in body
