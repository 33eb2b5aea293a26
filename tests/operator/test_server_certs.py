"""Webhook TLS: certificates issued with IP SANs, served, swapped without a restart; the
AdmissionReview envelope; health and readiness endpoints."""

from __future__ import annotations

import argparse
import base64
import json
import socket
import ssl
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from tests.ports import free_port
from workload_map.operator.certs import FileCertLoader, issue, parse_duration
from workload_map.operator.controllers import OperatorConfig, OperatorContext
from workload_map.operator.server import Servers, TlsSource, parse_bind_address


def test_parse_duration_and_bind_address() -> None:
    assert parse_duration("90s") == 90
    assert parse_duration("1h30m") == 5400
    assert parse_duration("2d") == 172800
    for bad in ("", "10", "1x", "s"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    assert parse_bind_address(":8080") == ("0.0.0.0", 8080)
    assert parse_bind_address("127.0.0.1:9") == ("127.0.0.1", 9)
    assert parse_bind_address("0") is None


def test_issue_has_sans_and_chains_to_the_ca() -> None:
    got = issue(["svc", "svc.ns.svc", "127.0.0.1"], 3600)
    cert = x509.load_pem_x509_certificate(got.cert)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["svc", "svc.ns.svc"]
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    ca = x509.load_pem_x509_certificate(got.ca_cert)
    cert.verify_directly_issued_by(ca)
    again = issue(["svc"], 60, ca=(got.ca_cert, got.ca_key))
    x509.load_pem_x509_certificate(again.cert).verify_directly_issued_by(ca)


def _write(dir_: Path, issued: Any) -> None:
    (dir_ / "tls.crt").write_bytes(issued.cert)
    (dir_ / "tls.key").write_bytes(issued.key)


def _peer_serial(port: int, ca: bytes) -> int:
    ctx = ssl.create_default_context(cadata=ca.decode())
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            der = tls.getpeercert(binary_form=True)
    assert der is not None
    return int(x509.load_der_x509_certificate(der).serial_number)


def test_webhook_server_serves_reloaded_certificates_and_reviews(tmp_path: Path) -> None:
    first = issue(["127.0.0.1"], 3600)
    _write(tmp_path, first)
    tls = TlsSource()
    loader = FileCertLoader(tmp_path, tls)
    assert loader.check() is True
    ctx = OperatorContext(
        config=OperatorConfig(argparse.Namespace(), "default", "me"),
        api=None,  # type: ignore[arg-type]
        informers=None,  # type: ignore[arg-type]
        events=None,  # type: ignore[arg-type]
    )
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"allowed": True, "patch": [{"op": "add", "path": "/x", "value": 1}]}

    ctx.add_webhook("/hook", handler)
    flag = threading.Event()
    ctx.add_readiness("flag", flag.is_set)
    hport, wport = free_port(), free_port()
    servers = Servers(
        ctx, health=("127.0.0.1", hport), metrics=None, webhook=("127.0.0.1", wport), tls=tls
    )
    servers.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{hport}/healthz", timeout=5) as r:
            assert r.read() == b"ok"
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{hport}/readyz", timeout=5)
        assert err.value.code == 503
        flag.set()
        with urllib.request.urlopen(f"http://127.0.0.1:{hport}/readyz", timeout=5) as r:
            assert r.status == 200

        assert (
            _peer_serial(wport, first.ca_cert)
            == x509.load_pem_x509_certificate(first.cert).serial_number
        )
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": "abc", "operation": "CREATE", "object": {}},
        }
        ctx_ssl = ssl.create_default_context(cadata=first.ca_cert.decode())
        req = urllib.request.Request(
            f"https://127.0.0.1:{wport}/hook",
            data=json.dumps(review).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5, context=ctx_ssl) as r:
            answer = json.loads(r.read())
        assert answer["response"]["uid"] == "abc" and answer["response"]["allowed"] is True
        assert answer["response"]["patchType"] == "JSONPatch"
        assert json.loads(base64.b64decode(answer["response"]["patch"])) == [
            {"op": "add", "path": "/x", "value": 1}
        ]
        assert seen[0]["uid"] == "abc"

        second = issue(["127.0.0.1"], 3600, ca=(first.ca_cert, first.ca_key))
        _write(tmp_path, second)
        assert loader.check() is True
        assert loader.check() is False  # unchanged files: no reload
        assert (
            _peer_serial(wport, first.ca_cert)
            == x509.load_pem_x509_certificate(second.cert).serial_number
        )
    finally:
        servers.stop()
