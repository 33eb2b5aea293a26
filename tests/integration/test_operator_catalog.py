"""`wlmap definitions install|uninstall` and the operator's `--install-catalog`, on a real API
server: server-side apply with one field manager, catalog annotations, stale copies, a user's
own Kartas never clobbered (``--force`` takes over a same-name one, never deletes another)."""

from __future__ import annotations

import copy
import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator.live import (
    KARTAS,
    OperatorProcess,
    api_for,
    condition,
    delete,
    eventually,
    put_crd,
)
from workload_map.catalog import catalog
from workload_map.catalog.stamps import (
    CATALOG_DIGEST_ANNOTATION,
    CATALOG_VERSION_ANNOTATION,
)
from workload_map.cli.main import main as wlmap
from workload_map.cluster.catalog_install import FIELD_MANAGER, served_gvks
from workload_map.kube.api import Api
from workload_map.kube.errors import NotFound
from workload_map.operator.catalog_installer import RECHECK_SECONDS

from .harness import Kube
from .test_operator import ensure_karta_crd

A = "milvus-io-milvus-v1beta1"
B = "tekton-dev-taskrun-v1"


@pytest.fixture(scope="module")
def api(kube: Kube) -> Iterator[Api]:
    client = api_for(kube.kubeconfig)
    ensure_karta_crd(client)
    yield client
    client.close()


@pytest.fixture
def clean(api: Api) -> Iterator[None]:
    for name in (A, B, "my-taskruns"):
        delete(api, f"{KARTAS}/{name}")
    yield
    for name in (A, B, "my-taskruns"):
        delete(api, f"{KARTAS}/{name}")


def cli(kube: Kube, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = wlmap(["definitions", *args, f"--kubeconfig={kube.kubeconfig}"], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def root(obj: Any) -> tuple[Any, Any]:
    """What identifies the definition's content (the server adds schema defaults elsewhere)."""
    r = obj["spec"]["structureDefinition"]["rootComponent"]
    return r["name"], r["kind"]


def results(text: str) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in json.loads(text)}


def milvus_crd() -> dict[str, Any]:
    """The Milvus CRD's shape as far as serving it goes (any object accepted)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "milvuses.milvus.io"},
        "spec": {
            "group": "milvus.io",
            "scope": "Namespaced",
            "names": {"plural": "milvuses", "singular": "milvus", "kind": "Milvus"},
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


def test_install_all_skips_kinds_the_cluster_does_not_serve(
    kube: Kube, api: Api, clean: None
) -> None:
    delete(api, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/milvuses.milvus.io")
    eventually(lambda: ("milvus.io", "v1beta1", "Milvus") not in served_gvks(api), 60)
    code, out, err = cli(kube, "install", "--all", "--dry-run")
    assert code == 0, err
    assert "batch-job-v1: created" in out or "batch-job-v1: unchanged" in out
    assert f"{A}:" not in out
    [summary] = [line for line in out.splitlines() if line.startswith("skipped ")]
    assert "whose kind this cluster does not serve" in summary
    assert f"{A} (Milvus.v1beta1.milvus.io)" in summary
    assert "`wlmap definitions install NAME`" in out and "--include-unserved" in out
    code, out, _ = cli(kube, "install", "--all", "--dry-run", "--include-unserved", "-o", "json")
    assert code == 0 and results(out)[A]["action"] == "created"
    # named explicitly: installed as asked, served or not
    code, out, _ = cli(kube, "install", A, "--dry-run")
    assert out.startswith(f"{A}: created")


def test_install_update_stale_and_uninstall(kube: Kube, api: Api, clean: None) -> None:
    code, out, err = cli(kube, "install", A, "--dry-run", "-o", "json")
    assert code == 0, err
    assert results(out)[A]["action"] == "created" and "dry run" in results(out)[A]["detail"]
    with pytest.raises(NotFound):
        api.get(f"{KARTAS}/{A}")

    code, out, err = cli(kube, "install", A, B)
    assert code == 0, err
    assert out.splitlines() == [f"{A}: created", f"{B}: created"]
    stored = api.get(f"{KARTAS}/{A}")
    annotations = stored["metadata"]["annotations"]
    assert CATALOG_DIGEST_ANNOTATION in annotations and CATALOG_VERSION_ANNOTATION in annotations
    assert stored["metadata"]["labels"]["run.ai/karta-kind"] == "Milvus"
    assert any(m["manager"] == FIELD_MANAGER for m in stored["metadata"]["managedFields"])
    assert root(stored) == root(catalog.document(A))

    code, out, _ = cli(kube, "install", A)
    assert out.strip() == f"{A}: unchanged"

    # an older copy (another spec, another version): reported and brought up to date
    old = copy.deepcopy(stored)
    old["metadata"]["annotations"][CATALOG_DIGEST_ANNOTATION] = "0" * 16
    old["metadata"]["annotations"][CATALOG_VERSION_ANNOTATION] = "0.0.1"
    old["spec"]["structureDefinition"]["rootComponent"]["name"] = "old-root"
    api.request("PUT", f"{KARTAS}/{A}", old)
    code, out, err = cli(kube, "install", A)
    assert code == 0
    assert out.strip() == f"{A}: updated (stale copy from workload-map 0.0.1)"
    assert "stale" in err
    assert root(api.get(f"{KARTAS}/{A}")) == root(catalog.document(A))

    code, out, _ = cli(kube, "uninstall", A, B)
    assert code == 0 and out.splitlines() == [f"{A}: deleted", f"{B}: deleted"]
    code, out, _ = cli(kube, "uninstall", A)
    assert out.strip() == f"{A}: absent"


def test_users_own_kartas_are_never_clobbered(kube: Kube, api: Api, clean: None) -> None:
    # another name, same GVK as the built-in TaskRun: kept, even with --force
    mine = copy.deepcopy(
        next(o for o in catalog.as_cluster_objects() if o["metadata"]["name"] == B)
    )
    mine["metadata"] = {"name": "my-taskruns"}
    api.request("POST", KARTAS, mine)
    for flags in ((), ("--force",)):
        code, out, _ = cli(kube, "install", B, *flags)
        assert code == 0
        assert out.startswith(f"{B}: skipped (Karta my-taskruns already defines this type")
    api.get(f"{KARTAS}/my-taskruns")
    with pytest.raises(NotFound):
        api.get(f"{KARTAS}/{B}")
    delete(api, f"{KARTAS}/my-taskruns")

    # the same name, not a catalog copy: skipped, taken over only with --force
    own = copy.deepcopy(next(o for o in catalog.as_cluster_objects() if o["metadata"]["name"] == A))
    own["metadata"] = {"name": A, "annotations": {"team": "ml"}}
    own["spec"]["structureDefinition"]["rootComponent"]["name"] = "custom"
    api.request("POST", KARTAS, own)
    code, out, _ = cli(kube, "install", A)
    assert out.startswith(f"{A}: skipped (a Karta of this name exists and is not a catalog copy")
    assert (
        api.get(f"{KARTAS}/{A}")["spec"]["structureDefinition"]["rootComponent"]["name"] == "custom"
    )
    code, out, _ = cli(kube, "uninstall", A)
    assert out.strip() == f"{A}: skipped (not a catalog copy; kept)"
    code, out, _ = cli(kube, "install", A, "--force")
    assert (
        code == 0
        and out.strip() == f"{A}: updated (took over a user's Karta of this name (--force))"
    )
    assert root(api.get(f"{KARTAS}/{A}")) == root(catalog.document(A))


def test_usage_errors(kube: Kube) -> None:
    code, _, err = cli(kube, "install")
    assert code == 2 and "give --all" in err
    code, _, err = cli(kube, "install", "no-such-definition")
    assert code == 1 and "not a built-in definition: no-such-definition" in err


def test_operator_installs_the_catalog_and_reports_stale_copies(
    kube: Kube, api: Api, tmp_path: Path
) -> None:
    token = uuid.uuid4().hex[:6]
    op = OperatorProcess(
        kube.kubeconfig,
        "default",
        tmp_path,
        webhook=False,
        config_name=f"cat-{token}",
        extra=["--install-catalog"],
    )
    op.start()
    try:
        op.wait_ready(60)
        names = set(catalog.names())
        served = served_gvks(api)
        wanted = {
            o["metadata"]["name"]
            for o in catalog.as_cluster_objects()
            if (r := o["spec"]["structureDefinition"]["rootComponent"]["kind"])
            and (r.get("group", ""), r["version"], r["kind"]) in served
        }
        assert "batch-job-v1" in wanted and A not in wanted

        def copies() -> set[str]:
            return {
                k["metadata"]["name"]
                for k in api.get(KARTAS)["items"]
                if k["metadata"]["name"] in names
                and CATALOG_DIGEST_ANNOTATION in (k["metadata"].get("annotations") or {})
            }

        # only the kinds this cluster serves: no CRDNotFound Karta for the others
        eventually(lambda: wanted <= copies(), 90, "served kinds' definitions installed")
        assert A not in copies()
        # a catalog kind's CRD appears later: its definition follows (the leader rechecks
        # discovery every RECHECK_SECONDS)
        put_crd(api, milvus_crd())
        eventually(lambda: A in copies(), 4 * RECHECK_SECONDS + 30, "Milvus definition installed")
        name = "batch-job-v1"
        obj = eventually(
            lambda: (
                condition(api.get(f"{KARTAS}/{name}"), "Catalog") and api.get(f"{KARTAS}/{name}")
            ),
            60,
        )
        assert condition(obj, "Catalog")["reason"] == "CatalogCurrent"
        assert condition(obj, "Ready")["status"] == "True"  # batch/v1 Job is a built-in kind
        # someone edits the installed copy: it is now stale and the operator says so
        api.merge_patch(
            f"{KARTAS}/{name}",
            {"metadata": {"annotations": {CATALOG_DIGEST_ANNOTATION: "f" * 16}}},
        )
        stale = eventually(
            lambda: (
                condition(api.get(f"{KARTAS}/{name}"), "Catalog").get("reason")
                == "StaleCatalogCopy"
                and condition(api.get(f"{KARTAS}/{name}"), "Catalog")
            ),
            30,
            "stale reported",
        )
        assert stale["status"] == "False"
        assert f"wlmap definitions install {name}" in stale["message"]
    finally:
        assert op.stop() == 0, op.log_tail()
        delete(api, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/milvuses.milvus.io")
        out = io.StringIO()
        wlmap(
            ["definitions", "uninstall", "--all", f"--kubeconfig={kube.kubeconfig}"],
            stdout=out,
            stderr=io.StringIO(),
        )
