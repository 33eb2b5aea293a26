"""TLS connections made with ``_ssl`` (kube/sockets.py) against a real TLS server (the standard
library's, in a thread): the server verified by the kubeconfig's CA and its host name, a client
certificate, ``insecure-skip-tls-verify``, keep-alive, a stream cut without its close alert, a
read that times out, a read ended from another thread, and the error classes ``ssl`` exports."""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from workload_map.kube import sockets
from workload_map.kube.errors import ClusterError, Unreachable
from workload_map.kube.kubeconfig import ResolvedConfig
from workload_map.kube.senders import WireSender
from workload_map.kube.transport import KubeTransport
from workload_map.kube.wire import Connection


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


class _CA:
    def __init__(self, cn: str = "test-ca") -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(_name(cn))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.pem = self.cert.public_bytes(serialization.Encoding.PEM)

    def issue(
        self, cn: str, *, ip: str | None = None, dns: str | None = None
    ) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
        )
        names: list[x509.GeneralName] = []
        if ip:
            names.append(x509.IPAddress(ipaddress.ip_address(ip)))
        if dns:
            names.append(x509.DNSName(dns))
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


class _Server:
    """HTTPS on 127.0.0.1: ``/version`` (JSON, kept alive), ``/whoami`` (the client
    certificate's CN), ``/ragged`` (a body to the end of the stream, then the TCP connection
    closed without TLS's close alert), ``/hang`` (headers and one chunk, then nothing)."""

    def __init__(self, tmp: Path, ca: _CA, cert: tuple[bytes, bytes], *, client_ca: _CA | None):
        (tmp / "srv.crt").write_bytes(cert[0])
        (tmp / "srv.key").write_bytes(cert[1])
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(tmp / "srv.crt", tmp / "srv.key")
        if client_ca is not None:
            self.context.load_verify_locations(cadata=client_ca.pem.decode())
            self.context.verify_mode = ssl.CERT_REQUIRED
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.requests: list[str] = []
        self.release = threading.Event()
        self._threads: list[threading.Thread] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(raw,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, raw: socket.socket) -> None:
        try:
            conn = self.context.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            return
        reader = conn.makefile("rb")
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                path = line.split()[1].decode()
                while reader.readline() not in (b"\r\n", b""):
                    pass
                self.requests.append(path)
                if path == "/ragged":
                    body = json.dumps({"ragged": True}).encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body)
                    conn.close()  # no close_notify: the TCP connection just ends
                    return
                if path == "/hang":
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"
                    )
                    self.release.wait(60)
                    return
                if path == "/whoami":
                    peer = conn.getpeercert() or {}
                    subject = dict(x[0] for x in peer.get("subject", ()))
                    doc: Any = {"cn": subject.get("commonName")}
                else:
                    doc = {"path": path}
                body = json.dumps(doc).encode()
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                conn.sendall(head + body)
        except OSError:
            return
        finally:
            reader.close()
            conn.close()

    def close(self) -> None:
        self.release.set()
        self.listener.close()
        for thread in self._threads:
            thread.join(10)


@pytest.fixture
def ca() -> _CA:
    return _CA()


@pytest.fixture
def server(tmp_path: Path, ca: _CA) -> Iterator[_Server]:
    srv = _Server(tmp_path, ca, ca.issue("apiserver", ip="127.0.0.1", dns="api.test"), client_ca=ca)
    try:
        yield srv
    finally:
        srv.close()


def _resolved(port: int, ca: _CA | None, **more: Any) -> ResolvedConfig:
    client = _CA().issue("nobody") if ca is None else ca.issue("jane")
    return ResolvedConfig(
        server=f"https://127.0.0.1:{port}",
        namespace="default",
        context="ctx",
        source="test",
        ca_data=ca.pem if ca is not None else None,
        cert_data=more.pop("cert_data", client[0]),
        key_data=more.pop("key_data", client[1]),
        timeout=more.pop("timeout", 30.0),
        **more,
    )


def test_the_classes_are_the_ones_ssl_and_socket_export() -> None:
    assert sockets.SslError is ssl.SSLError
    assert sockets.CertificateError is ssl.SSLCertVerificationError
    assert issubclass(sockets.TlsContext, ssl.SSLContext.__mro__[1])
    assert sockets.SHUT_RDWR == socket.SHUT_RDWR and sockets.CERT_NONE == ssl.CERT_NONE


def test_a_verified_server_and_a_client_certificate_over_one_kept_connection(
    server: _Server, ca: _CA
) -> None:
    transport = KubeTransport(_resolved(server.port, ca))
    assert transport.get("/version") == {"path": "/version"}
    assert transport.get("/whoami") == {"cn": "jane"}
    assert server.requests == ["/version", "/whoami"]
    assert len(server._threads) == 1  # one TLS connection, kept alive


def test_the_server_name_is_checked_against_tls_server_name(server: _Server, ca: _CA) -> None:
    named = KubeTransport(_resolved(server.port, ca, tls_server_name="api.test"))
    assert named.get("/version") == {"path": "/version"}
    other = KubeTransport(_resolved(server.port, ca, tls_server_name="other.test"))
    with pytest.raises(Unreachable, match=r"TLS certificate not trusted \(Hostname mismatch"):
        other.get("/version")


def test_an_untrusted_server_is_refused_and_insecure_skips_the_check(
    server: _Server, ca: _CA
) -> None:
    stranger = _CA("someone-else")
    client = ca.issue("jane")
    refused = KubeTransport(
        _resolved(server.port, stranger, cert_data=client[0], key_data=client[1])
    )
    with pytest.raises(Unreachable, match=r"TLS certificate not trusted \("):
        refused.get("/version")
    insecure = KubeTransport(
        _resolved(server.port, None, insecure=True, cert_data=client[0], key_data=client[1])
    )
    assert insecure.get("/whoami") == {"cn": "jane"}


def test_a_client_certificate_the_server_does_not_trust_is_refused(
    server: _Server, ca: _CA
) -> None:
    transport = KubeTransport(_resolved(server.port, ca, cert_data=b"", key_data=b""))
    with pytest.raises((Unreachable, ClusterError)):
        transport.get("/version")


def test_a_stream_cut_without_its_close_alert_ends_the_body(server: _Server, ca: _CA) -> None:
    transport = KubeTransport(_resolved(server.port, ca))
    assert transport.get("/ragged") == {"ragged": True}
    assert transport.get("/version") == {"path": "/version"}  # a new connection after close


def test_a_read_that_times_out_is_reported_and_the_stream_refuses_more(
    server: _Server, ca: _CA
) -> None:
    resolved = _resolved(server.port, ca)
    sender = WireSender(resolved)
    reply = sender.send("GET", "/hang", [], None, timeout=0.2)
    assert reply.read1() == b"abc"
    with pytest.raises(TimeoutError):
        reply.read1()
    with pytest.raises(OSError, match="timed out object"):
        reply.read1()
    sender.close()


def test_a_read_is_ended_from_another_thread(server: _Server, ca: _CA) -> None:
    """What stopping a watch does: the blocked read returns (the stream ends), not a hang."""
    sender = WireSender(_resolved(server.port, ca))
    reply = sender.send("GET", "/hang", [], None, timeout=None, stream=True)
    assert reply.read1() == b"abc"
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(reply.read1())
        except Exception as exc:  # the end of the stream inside a chunk: a protocol error
            outcome.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    reply.abort()
    reader.join(60)
    assert not reader.is_alive() and len(outcome) == 1, outcome


def test_a_connection_to_a_closed_port_is_refused(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conn = Connection("127.0.0.1", port, timeout=5)
    with pytest.raises(ConnectionRefusedError):
        conn.connect()
