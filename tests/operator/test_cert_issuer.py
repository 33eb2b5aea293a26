"""The ``auto`` certificate issuer's decisions, against an in-memory API: first issue, no churn
while valid, re-issue with a third of the lifetime left, CA rotation keeping the old CA in the
bundle, and the webhooks trusting the new CA before it is served."""

from __future__ import annotations

import argparse
import base64
import copy
import datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from workload_map.kube.errors import NotFound
from workload_map.operator import certs
from workload_map.operator.certs import CertIssuer, CertSettings, _pems
from workload_map.operator.controllers import OperatorConfig, OperatorContext

SECRET = "/api/v1/namespaces/ns/secrets/hook-cert"
MUT = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m"
VAL = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v"


class FakeApi:
    def __init__(self) -> None:
        hook = {"webhooks": [{"name": "a", "clientConfig": {"url": "https://127.0.0.1:1/x"}}]}
        self.objects: dict[str, Any] = {MUT: copy.deepcopy(hook), VAL: copy.deepcopy(hook)}
        self.log: list[tuple[str, str]] = []

    def get(self, path: str, query: Any = None) -> Any:
        if path not in self.objects:
            raise NotFound(404, f"not found: {path}")
        return copy.deepcopy(self.objects[path])

    def request(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        self.log.append((method, path))
        if method == "POST":
            path = f"{path}/{body['metadata']['name']}"
        stored = copy.deepcopy(body)
        stored.setdefault("metadata", {})["resourceVersion"] = str(len(self.log))
        self.objects[path] = stored
        return stored


def make(tmp_path: Path, lifetime: float = 3600) -> tuple[CertIssuer, FakeApi]:
    api = FakeApi()
    ctx = OperatorContext(
        config=OperatorConfig(argparse.Namespace(), "ns", "me"),
        api=api,  # type: ignore[arg-type]
        informers=None,  # type: ignore[arg-type]
        events=None,  # type: ignore[arg-type]
    )
    settings = CertSettings("ns", "hook-cert", "svc", ("127.0.0.1",), lifetime, tmp_path, "m", "v")
    issuer = CertIssuer(settings)
    issuer.ctx = ctx
    return issuer, api


def data(api: FakeApi, key: str) -> bytes:
    return base64.b64decode(api.objects[SECRET]["data"][key])


def bundle_of(api: FakeApi, path: str) -> bytes:
    return base64.b64decode(api.objects[path]["webhooks"][0]["clientConfig"]["caBundle"])


def test_first_issue_then_no_churn(tmp_path: Path) -> None:
    issuer, api = make(tmp_path)
    issuer.sync()
    assert issuer.issued == 1
    leaf = x509.load_pem_x509_certificate(data(api, "tls.crt"))
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "svc.ns.svc" in sans.get_values_for_type(x509.DNSName)
    assert [str(i) for i in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert bundle_of(api, MUT) == bundle_of(api, VAL) == data(api, "ca-bundle.crt")
    # trust first, serve second: both webhooks were updated before the Secret was written
    order = [p for _, p in api.log]
    assert order.index(MUT) < order.index("/api/v1/namespaces/ns/secrets")
    writes = len(api.log)
    issuer.sync()
    assert issuer.issued == 1 and len(api.log) == writes  # valid: nothing written


def test_reissue_with_a_third_left_keeps_the_ca_then_rotates_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    issuer, api = make(tmp_path, lifetime=3600)
    issuer.sync()
    ca1 = data(api, "ca.crt")
    serial1 = x509.load_pem_x509_certificate(data(api, "tls.crt")).serial_number
    start = datetime.datetime.now(datetime.UTC)

    # 2/3 of the lifetime later: a new serving certificate from the same CA
    monkeypatch.setattr(certs, "_now", lambda: start + datetime.timedelta(seconds=2500))
    issuer.sync()
    assert issuer.issued == 2
    assert data(api, "ca.crt") == ca1
    assert x509.load_pem_x509_certificate(data(api, "tls.crt")).serial_number != serial1

    # near the CA's end (4 x lifetime): a new CA; the bundle trusts both while the old is valid
    monkeypatch.setattr(certs, "_now", lambda: start + datetime.timedelta(seconds=3600 * 2.5))
    issuer.sync()
    ca2 = data(api, "ca.crt")
    assert ca2 != ca1
    pems = [p.strip() for p in _pems(bundle_of(api, VAL))]
    assert ca2.strip() in pems and ca1.strip() in pems
    leaf = x509.load_pem_x509_certificate(data(api, "tls.crt"))
    leaf.verify_directly_issued_by(x509.load_pem_x509_certificate(ca2))
