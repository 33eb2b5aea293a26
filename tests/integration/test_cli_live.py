"""``wlmap get``/``describe`` against a real kube-apiserver (the ``kube`` harness).

Pods are created directly (owned by Jobs owned by the JobSet, as the controllers would) and
their status is set through the status subresource. Forbidden paths use impersonation
(``--as``) with the harness's admin credential: a user with no RBAC at all, and one allowed
to read workloads but not Karta definitions.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from workload_map.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

JOBSET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "jobsets.jobset.x-k8s.io"},
    "spec": {
        "group": "jobset.x-k8s.io",
        "scope": "Namespaced",
        "names": {
            "plural": "jobsets",
            "singular": "jobset",
            "kind": "JobSet",
            "listKind": "JobSetList",
            "shortNames": ["js"],
        },
        "versions": [
            {
                "name": "v1alpha2",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}

KARTA_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kartas.run.ai"},
    "spec": {
        "group": "run.ai",
        "scope": "Cluster",
        "names": {
            "plural": "kartas",
            "singular": "karta",
            "kind": "Karta",
            "listKind": "KartaList",
            "shortNames": ["krt"],
        },
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


def wlmap(kube: Any, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    # a cache of its own per call: "said once per cluster" notices are remembered in the cache
    # (and /nonexistent is writable to root), so a shared one would hide them from later runs
    with tempfile.TemporaryDirectory() as cache:
        env = {"HOME": "/nonexistent", "XDG_CACHE_HOME": cache, "PATH": "/usr/bin:/bin"}
        code = main(
            ["--kubeconfig", str(kube.kubeconfig), *argv], io.StringIO(), out, err, environ=env
        )
    return code, out.getvalue(), err.getvalue()


def _karta_crd() -> Any:
    """The project's generated CRD when present (without any stored ``status``), else ours."""
    generated = ROOT / "deploy" / "crds" / "kartas.run.ai.yaml"
    if not generated.is_file():
        return KARTA_CRD
    import yaml

    crd = yaml.safe_load(generated.read_text())
    crd.pop("status", None)
    return crd


def install_crd(kube: Any, crd: dict[str, Any], timeout: float = 30.0) -> None:
    """Apply a CRD and wait until it is Established and served (tolerates a fresh CRD whose
    ``status.conditions`` is still null)."""
    import time

    stored = kube.apply(crd)
    name = stored["metadata"]["name"]
    group, plural = stored["spec"]["group"], stored["spec"]["names"]["plural"]
    versions = [v["name"] for v in stored["spec"]["versions"] if v.get("served", True)]
    deadline = time.monotonic() + timeout
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
    while time.monotonic() < deadline:
        conditions = (kube.request("GET", path).get("status") or {}).get("conditions") or []
        established = any(
            c.get("type") == "Established" and c.get("status") == "True" for c in conditions
        )
        if established and all(_served(kube, group, v, plural) for v in versions):
            return
        time.sleep(0.1)
    raise AssertionError(f"CRD {name} not established after {timeout} s")


def _served(kube: Any, group: str, version: str, value: str, field: str = "name") -> bool:
    """Whether group/version lists a resource whose ``field`` (its plural ``name``, or its
    ``kind``) is ``value``."""
    from kubernetes.client.exceptions import ApiException

    try:
        listing = kube.request("GET", f"/apis/{group}/{version}")
    except ApiException:
        return False
    return any(r.get(field) == value for r in (listing or {}).get("resources") or [])


def _install_karta_crd(kube: Any) -> None:
    install_crd(kube, _karta_crd())


def _ready_status(node: str, ready: bool) -> dict[str, Any]:
    return {
        "phase": "Running",
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                **({} if ready else {"reason": "ContainersNotReady"}),
            },
        ],
    }


@pytest.fixture(scope="module")
def jobset_crd(kube: Any) -> None:
    install_crd(kube, JOBSET_CRD)


def _make_jobset(kube: Any, namespace: str, name: str = "train") -> dict[str, Any]:
    js = kube.apply(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": name, "namespace": namespace, "labels": {"team": "vision"}},
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "workers",
                        "replicas": 1,
                        "template": {
                            "spec": {
                                "parallelism": 2,
                                "completions": 2,
                                "template": {
                                    "spec": {
                                        "restartPolicy": "Never",
                                        "containers": [
                                            {
                                                "name": "c",
                                                "image": "busybox",
                                                "resources": {
                                                    "requests": {"cpu": "1", "nvidia.com/gpu": "4"},
                                                    "limits": {"nvidia.com/gpu": "4"},
                                                },
                                            }
                                        ],
                                    }
                                },
                            }
                        },
                    }
                ]
            },
        },
        namespace,
    )
    kube.set_status(
        {
            **js,
            "status": {
                "replicatedJobsStatus": [
                    {
                        "name": "workers",
                        "ready": 1,
                        "active": 2,
                        "succeeded": 0,
                        "failed": 0,
                        "suspended": 0,
                    }
                ]
            },
        }
    )
    job = kube.apply(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"{name}-workers-0",
                "namespace": namespace,
                "ownerReferences": [
                    {
                        "apiVersion": "jobset.x-k8s.io/v1alpha2",
                        "kind": "JobSet",
                        "name": name,
                        "uid": js["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    },
                }
            },
        },
        namespace,
    )
    for index, ready in enumerate((True, False)):
        created = kube.apply(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-workers-0-{index}",
                    "namespace": namespace,
                    "labels": {
                        "jobset.sigs.k8s.io/replicatedjob-name": "workers",
                        "jobset.sigs.k8s.io/jobset-name": name,
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": "batch/v1",
                            "kind": "Job",
                            "name": job["metadata"]["name"],
                            "uid": job["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": {
                    "nodeName": f"gpu-{index}",
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "resources": {
                                "requests": {"nvidia.com/gpu": "4"},
                                "limits": {"nvidia.com/gpu": "4"},
                            },
                        }
                    ],
                },
            },
            namespace,
        )
        kube.set_status({**created, "status": _ready_status(f"gpu-{index}", ready)})
    return js


def test_get_and_describe(kube: Any, namespace: str, jobset_crd: None) -> None:
    _make_jobset(kube, namespace)
    code, out, err = wlmap(kube, "get", "jobsets", "-n", namespace)
    assert code == 0, err
    header, row = out.splitlines()[0].split(), out.splitlines()[1].split()
    # with -n, kubectl shows no NAMESPACE column
    assert header[:4] == ["NAME", "PHASE", "PODS", "GPUS"]
    assert row[0] == "train" and row[2] == "1/2" and row[3] == "8"
    code, out, err = wlmap(
        kube,
        "get",
        "jobsets",
        "-n",
        namespace,
        "-l",
        "team=vision",
        "--chunk-size",
        "1",
        "-o",
        "json",
    )
    assert code == 0 and json.loads(out)["count"] == 1
    code, out, err = wlmap(kube, "describe", "jobset/train", "-n", namespace, "-o", "json")
    assert code == 0, err
    view = json.loads(out)
    # both pods are bound (nodeName set) and running: held, none pending
    assert view["pods"] == {"desired": 2, "current": 2, "ready": 1, "pending": 0, "held": 2}
    assert view["resources"]["gpus"] == 8
    assert view["fileMode"] is False
    code, out, err = wlmap(kube, "describe", "js", "train", "-n", namespace)
    assert code == 0, err
    assert "train-workers-0-1" in out and "ContainersNotReady" in out
    code, out, err = wlmap(kube, "get", "--all-types", "-n", namespace)
    assert code == 0, err
    assert out.splitlines()[0].split()[:2] == ["NAME", "TYPE"]  # -n: no NAMESPACE column
    types = {(line.split()[0], line.split()[1]) for line in out.splitlines()[1:]}
    assert types == {("train", "JobSet")}  # the Job and the pods are not top-level


def _unserved_catalog_kind(kube: Any) -> str:
    """A built-in definition's kind (of one API group) that this cluster serves in no version:
    other tests of the session install CRDs, in whatever order they run (PyTorchJob first)."""
    from workload_map.catalog import catalog

    versions: dict[str, set[tuple[str, str]]] = {}
    for karta in catalog:
        gvk = karta.root_gvk
        if gvk is not None and gvk.group:
            versions.setdefault(gvk.kind, set()).add((gvk.group, gvk.version))
    for kind in sorted(versions, key=lambda k: (k != "PyTorchJob", k)):
        if len({g for g, _ in versions[kind]}) == 1 and not any(
            _served(kube, g, v, kind, "kind") for g, v in versions[kind]
        ):
            return kind
    pytest.fail("every built-in definition's kind is served by the session's cluster")


def test_missing_workload_and_types(kube: Any, namespace: str, jobset_crd: None) -> None:
    code, _, err = wlmap(kube, "describe", "jobset/nope", "-n", namespace)
    assert code == 3 and "not found" in err
    code, _, err = wlmap(kube, "describe", "nothing", "-n", namespace)  # a bare name
    assert code == 3 and f'no workload named "nothing" found in namespace {namespace}' in err
    kind = _unserved_catalog_kind(kube)
    code, _, err = wlmap(kube, "describe", f"{kind.lower()}/x", "-n", namespace)
    assert code == 3 and f"{kind} is not installed in this cluster" in err
    code, out, err = wlmap(kube, "get", kind.lower(), "-n", namespace)
    # a type the cluster does not serve exits 3, listed alone too (INTERFACES.md)
    assert code == 3 and out == "" and "not installed" in err
    code, out, err = wlmap(kube, "describe", "flinkdeployment/etl", "-n", namespace, "-o", "json")
    assert code == 4 and json.loads(out)["error"] == "no_definition_for_type"


def test_karta_crd_missing_then_cluster_karta_wins(
    kube: Any, namespace: str, jobset_crd: None
) -> None:
    _make_jobset(kube, namespace)
    crds = kube.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    if not any(c["metadata"]["name"] == "kartas.run.ai" for c in crds["items"]):
        code, out, err = wlmap(kube, "get", "jobsets", "-n", namespace, "-o", "wide")
        assert code == 0
        assert "the kartas.run.ai CRD is not installed" in err
        assert "catalog" in out
    _install_karta_crd(kube)
    code, out, _ = wlmap(kube, "definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "json")
    karta = json.loads(out)
    karta["metadata"] = {"name": f"team-jobset-{namespace}"}
    kube.apply(karta)
    try:
        code, out, err = wlmap(kube, "describe", "jobset/train", "-n", namespace, "-o", "json")
        assert code == 0, err
        assert json.loads(out)["definition"] == {
            "name": f"team-jobset-{namespace}",
            "origin": "cluster",
        }
        code, out, err = wlmap(kube, "definitions", "--group", "jobset.x-k8s.io")
        assert "cluster" in out and f"team-jobset-{namespace}" in out
    finally:
        kube.request("DELETE", f"/apis/run.ai/v1alpha1/kartas/team-jobset-{namespace}")


def test_forbidden(kube: Any, namespace: str, jobset_crd: None) -> None:
    _make_jobset(kube, namespace)
    code, _, err = wlmap(kube, "--as", "nobody", "get", "jobsets", "-n", namespace)
    assert code == 1
    assert "forbidden" in err and "jobsets.jobset.x-k8s.io" in err
    user = f"reader-{namespace}"
    kube.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": user},
            "rules": [
                {"apiGroups": [""], "resources": ["*"], "verbs": ["get", "list"]},
                {
                    "apiGroups": ["batch", "apps", "jobset.x-k8s.io"],
                    "resources": ["*"],
                    "verbs": ["get", "list"],
                },
            ],
        }
    )
    kube.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": user},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": user,
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
    )
    crds = kube.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    karta_installed = any(c["metadata"]["name"] == "kartas.run.ai" for c in crds["items"])
    code, out, err = wlmap(kube, "--as", user, "get", "jobsets", "-n", namespace)
    assert code == 0, err
    assert "train" in out
    if karta_installed:
        assert "not allowed to list Karta definitions" in err


def test_deployment_pods_through_replicaset(kube: Any, namespace: str) -> None:
    """A built-in type: pods reach the Deployment through a ReplicaSet (two owner links)."""
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [
                {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "250m"}}}
            ]
        },
    }
    deploy = kube.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template,
            },
        },
        namespace,
    )
    rs = kube.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "web-5d8f",
                "namespace": namespace,
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "web",
                        "uid": deploy["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template,
            },
        },
        namespace,
    )
    for index in range(3):
        created = kube.apply(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"web-5d8f-{index}",
                    "namespace": namespace,
                    "labels": {"app": "web"},
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "ReplicaSet",
                            "name": "web-5d8f",
                            "uid": rs["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": {"nodeName": "n1", "containers": template["spec"]["containers"]},
            },
            namespace,
        )
        kube.set_status({**created, "status": _ready_status("n1", index < 2)})
    code, out, err = wlmap(kube, "describe", "deploy/web", "-n", namespace, "-o", "json")
    assert code == 0, err
    view = json.loads(out)
    assert view["pods"] == {"desired": 3, "current": 3, "ready": 2, "pending": 0, "held": 3}
    assert view["resources"]["cpuMillis"] == 750
    code, out, err = wlmap(kube, "get", "--all-types", "-n", namespace, "-o", "json")
    assert code == 0, err
    kinds = {(i["kind"], i["name"]) for i in json.loads(out)["items"]}
    assert kinds == {("Deployment", "web")}  # the ReplicaSet and pods are not top-level


def test_bad_credentials_and_unreachable(kube: Any, tmp_path: Path) -> None:
    import yaml

    config = yaml.safe_load(Path(kube.kubeconfig).read_text())
    for user in config["users"]:
        user["user"] = {"token": "not-a-valid-token"}
    bad = tmp_path / "bad-kubeconfig"
    bad.write_text(yaml.safe_dump(config))
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["--kubeconfig", str(bad), "get", "jobs"],
        io.StringIO(),
        out,
        err,
        environ={"HOME": str(tmp_path)},
    )
    assert code == 1
    assert "401 Unauthorized" in err.getvalue() and "Traceback" not in err.getvalue()
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = "https://127.0.0.1:1"
    gone = tmp_path / "gone-kubeconfig"
    gone.write_text(yaml.safe_dump(config))
    err = io.StringIO()
    code = main(
        ["--kubeconfig", str(gone), "get", "jobs"],
        io.StringIO(),
        io.StringIO(),
        err,
        environ={"HOME": str(tmp_path)},
    )
    assert code == 1 and "cannot reach the cluster at https://127.0.0.1:1" in err.getvalue()
