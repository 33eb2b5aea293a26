"""A live command over TLS (``kube.wire`` speaks it through ``_ssl`` and ``_socket``, not the
``ssl`` and ``socket`` modules): the server's certificate is checked against the kubeconfig's
CA and its name against the server's address, a failure names the reason, and the answer is
read through to its end."""

from __future__ import annotations

import ssl
from pathlib import Path

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from tests.cli.http_fake import serve, write_kubeconfig
from tests.cli.test_imports import importtime, loaded
from workload_map.operator.certs import issue


def _certificate(folder: Path, name: str, san: str) -> tuple[Path, Path, Path]:
    """A serving certificate for ``san`` signed by a new CA (the operator's issuer): the
    certificate, its key and the CA's certificate, as PEM files."""
    issued = issue([san], 3600)
    paths = [folder / f"{name}.{ext}" for ext in ("crt", "key", "ca.crt")]
    for path, pem in zip(paths, (issued.cert, issued.key, issued.ca_cert), strict=True):
        path.write_bytes(pem)
    return paths[0], paths[1], paths[2]


def _get(tmp_path: Path, served: tuple[Path, Path, Path], trusted: Path) -> tuple[set[str], str]:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    # enough rows that the answer takes several TLS records
    for i in range(60):
        api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", f"train-{i}", "ml", spec={}))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(served[0], served[1])
    with serve(api, tls) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml", ca_file=trusted)
        return importtime(["get", "jobsets", "--kubeconfig", str(kubeconfig)], tmp_path)


def test_a_live_get_over_tls_loads_neither_ssl_nor_socket(tmp_path: Path) -> None:
    served = _certificate(tmp_path, "server", "127.0.0.1")
    modules, output = _get(tmp_path, served, trusted=served[2])
    assert all(f"train-{i} " in output for i in range(60)), output
    assert "_ssl" in modules
    # their enum classes alone are ~25M instructions of every live command (docs/cli.md)
    assert loaded(modules, ("ssl", "socket", "selectors")) == []


def test_a_server_certificate_the_ca_did_not_sign_is_refused(tmp_path: Path) -> None:
    served = _certificate(tmp_path, "server", "127.0.0.1")
    other_ca = _certificate(tmp_path, "other", "127.0.0.1")[2]
    _, output = _get(tmp_path, served, trusted=other_ca)
    # the reason is OpenSSL's (the other CA has the same subject: a signature failure)
    assert "TLS certificate not trusted (" in output, output
    assert "train-0" not in output


def test_a_server_certificate_for_another_name_is_refused(tmp_path: Path) -> None:
    served = _certificate(tmp_path, "server", "elsewhere.example")
    _, output = _get(tmp_path, served, trusted=served[2])
    assert "TLS certificate not trusted (IP address mismatch" in output, output
    assert "train-0" not in output
