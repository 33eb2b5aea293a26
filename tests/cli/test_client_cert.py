"""Inline client certificates of a kubeconfig (``client-certificate-data``/``client-key-data``)
are loaded into the TLS context from memory-backed files where the system has them, else from a
private temporary directory; a mismatched pair is a clear error either way."""

from __future__ import annotations

import datetime
import os

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from workload_map.kube import senders, wire
from workload_map.kube.errors import ClusterError
from workload_map.kube.kubeconfig import ResolvedConfig


def _pair() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "wlmap-test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    pem_key = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), pem_key


def _resolved(cert: bytes, key: bytes) -> ResolvedConfig:
    return ResolvedConfig(
        server="https://127.0.0.1:6443",
        namespace="default",
        context="ctx",
        source="test",
        cert_data=cert,
        key_data=key,
        insecure=True,
    )


def test_inline_pair_loads_from_memory_without_temporary_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]
) -> None:
    if not hasattr(os, "memfd_create"):
        pytest.skip("no memfd_create on this system: the temporary-directory test covers it")
    cert, key = _pair()
    opened: list[str] = []
    real = wire.TLSContext.load_cert_chain

    def spy(self: wire.TLSContext, certfile: str, keyfile: str | None = None, *a: object) -> None:
        opened.extend([certfile, str(keyfile)])
        real(self, certfile, keyfile)

    import tempfile

    monkeypatch.setattr(wire.TLSContext, "load_cert_chain", spy)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    senders.ssl_context(_resolved(cert, key))
    assert [p.rpartition("/")[0] for p in opened] == ["/proc/self/fd", "/proc/self/fd"]
    assert os.listdir(tmp_path) == []  # nothing written to the temporary directory


def test_without_memfd_a_private_temporary_directory_is_used_and_removed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]
) -> None:
    import tempfile

    cert, key = _pair()
    monkeypatch.delattr(os, "memfd_create", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    opened: list[str] = []
    real = wire.TLSContext.load_cert_chain

    def spy(self: wire.TLSContext, certfile: str, keyfile: str | None = None, *a: object) -> None:
        opened.extend([certfile, str(keyfile)])
        assert oct(os.stat(str(keyfile)).st_mode & 0o777) == "0o600"
        real(self, certfile, keyfile)

    monkeypatch.setattr(wire.TLSContext, "load_cert_chain", spy)
    senders.ssl_context(_resolved(cert, key))
    assert all(p.startswith(str(tmp_path)) for p in opened), opened
    assert os.listdir(tmp_path) == []  # removed at once


@pytest.mark.parametrize("memfd", [True, False], ids=["memfd", "tempdir"])
def test_a_key_that_does_not_match_is_a_clear_error(
    memfd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if memfd and not hasattr(os, "memfd_create"):
        pytest.skip("no memfd_create on this system")
    if not memfd:
        monkeypatch.delattr(os, "memfd_create", raising=False)
    cert, _ = _pair()
    _, other_key = _pair()
    with pytest.raises(ClusterError, match="client certificate and key of the kubeconfig user"):
        senders.ssl_context(_resolved(cert, other_key))
