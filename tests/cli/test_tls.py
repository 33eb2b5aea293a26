"""A live command over TLS (``kube.wire`` speaks it through ``_ssl`` and ``_socket``, not the
``ssl`` and ``socket`` modules): the server's certificate is checked against the kubeconfig's
CA and its name against the server's address, a failure names the reason, and the answer is
read through to its end."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from tests.cli.http_fake import serve, write_kubeconfig
from tests.cli.test_imports import importtime, loaded


def _certificate(folder: Path, name: str, san: x509.GeneralName) -> tuple[Path, Path]:
    """A self-signed certificate for ``san`` and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([san]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / f"{name}.crt", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


_LOCAL = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))


def _get(tmp_path: Path, served: tuple[Path, Path], trusted: Path) -> tuple[set[str], str]:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    # enough rows that the answer takes several TLS records
    for i in range(60):
        api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", f"train-{i}", "ml", spec={}))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(*served)
    with serve(api, tls) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml", ca_file=trusted)
        return importtime(["get", "jobsets", "--kubeconfig", str(kubeconfig)], tmp_path)


def test_a_live_get_over_tls_loads_neither_ssl_nor_socket(tmp_path: Path) -> None:
    served = _certificate(tmp_path, "server", _LOCAL)
    modules, output = _get(tmp_path, served, trusted=served[0])
    assert all(f"train-{i} " in output for i in range(60)), output
    assert "_ssl" in modules
    # their enum classes alone are ~25M instructions of every live command (docs/cli.md)
    assert loaded(modules, ("ssl", "socket", "selectors")) == []


def test_a_server_certificate_the_ca_did_not_sign_is_refused(tmp_path: Path) -> None:
    served = _certificate(tmp_path, "server", _LOCAL)
    other, _ = _certificate(tmp_path, "other", _LOCAL)
    _, output = _get(tmp_path, served, trusted=other)
    assert "TLS certificate not trusted (self-signed certificate)" in output, output
    assert "train-0" not in output


def test_a_server_certificate_for_another_name_is_refused(tmp_path: Path) -> None:
    served = _certificate(tmp_path, "server", x509.DNSName("elsewhere.example"))
    _, output = _get(tmp_path, served, trusted=served[0])
    assert "TLS certificate not trusted (IP address mismatch" in output, output
    assert "train-0" not in output
