"""Webhook serving certificates: ``auto`` (self-signed, kept in a Secret, rotated) and ``manual``.

``auto``: the leader (:class:`CertIssuer`) keeps a CA and a serving certificate in a
``kubernetes.io/tls`` Secret, re-issues the serving certificate when a third of its lifetime
is left (and the CA when it would not outlive the next certificate), and writes the CA bundle
(new CA plus the previous one while it is valid, so in-flight callers keep trusting us) into
``caBundle`` of both webhook configurations. Every replica (:class:`SecretCertLoader`) watches
that Secret and serves what it holds.

``manual``: :class:`FileCertLoader` serves ``tls.crt``/``tls.key`` from ``--webhook-cert-dir``
(mounted by cert-manager or by hand) and reloads them when they change on disk.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import logging
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workload_map.kube.errors import ApiError, ClusterError, NotFound
from workload_map.operator.errors import ConfigError, OperatorError

if TYPE_CHECKING:
    from workload_map.operator.controllers import OperatorContext
    from workload_map.operator.server import TlsSource

__all__ = [
    "CertIssuer",
    "CertSettings",
    "FileCertLoader",
    "Issued",
    "SecretCertLoader",
    "issue",
    "parse_duration",
    "service_names",
]

log = logging.getLogger("workload_map.operator.certs")

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class CertError(OperatorError):
    """A certificate could not be issued, stored or loaded."""


def parse_duration(text: str) -> float:
    """Seconds of a Go-style duration (``90s``, ``10m``, ``8760h``, ``1h30m``, ``2d``)."""
    pos = 0
    total = 0.0
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text or total <= 0:
        raise ConfigError(f"invalid duration {text!r} (use e.g. 90s, 10m, 8760h)")
    return total


def service_names(service: str, namespace: str) -> list[str]:
    """The DNS names the API server may use for the webhook Service."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


@dataclass(frozen=True)
class CertSettings:
    namespace: str
    secret: str
    service: str
    extra_sans: tuple[str, ...]
    lifetime: float  # seconds, of the serving certificate
    cert_dir: Path
    mutating: str
    validating: str

    @property
    def sans(self) -> list[str]:
        return [*service_names(self.service, self.namespace), *self.extra_sans]


@dataclass(frozen=True)
class Issued:
    ca_cert: bytes
    ca_key: bytes
    cert: bytes
    key: bytes


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def issue(
    sans: list[str],
    lifetime: float,
    *,
    ca: tuple[bytes, bytes] | None = None,
    ca_lifetime: float | None = None,
) -> Issued:
    """A serving certificate for ``sans`` (DNS names and IP addresses) signed by ``ca``
    (PEM cert, key), or by a new self-signed CA when ``ca`` is None."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = _now()
    back = datetime.timedelta(minutes=1)  # tolerate clock skew between replicas and server
    if ca is None:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name(
            [
                x509.NameAttribute(
                    NameOID.COMMON_NAME, f"workload-map-webhook-ca@{int(now.timestamp())}"
                )
            ]
        )
        ca_cert = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - back)
            .not_valid_after(now + datetime.timedelta(seconds=ca_lifetime or lifetime * 4))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(ca_key, hashes.SHA256())
        )
    else:
        ca_cert = x509.load_pem_x509_certificate(ca[0])
        loaded = serialization.load_pem_private_key(ca[1], password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise CertError("the stored webhook CA key is not an EC key")
        ca_key = loaded
    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = []
    for san in sans:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(san)))
        except ValueError:
            alt.append(x509.DNSName(san))
    not_after = min(now + datetime.timedelta(seconds=lifetime), ca_cert.not_valid_after_utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, sans[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - back)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return Issued(
        ca_cert=ca_cert.public_bytes(pem),
        ca_key=ca[1]
        if ca is not None
        else ca_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
        cert=cert.public_bytes(pem),
        key=key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


def _write_pair(cert_dir: Path, cert: bytes, key: bytes) -> tuple[str, str]:
    """Write tls.crt/tls.key atomically (rename), so a reader never sees half a pair."""
    cert_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for name, data in (("tls.crt", cert), ("tls.key", key)):
        fd, tmp = tempfile.mkstemp(dir=cert_dir, prefix=f".{name}.")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o600)
        os.replace(tmp, cert_dir / name)
        out.append(str(cert_dir / name))
    return out[0], out[1]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(value: Any) -> bytes:
    return base64.b64decode(value) if isinstance(value, str) else b""


def _pems(bundle: bytes) -> list[bytes]:
    parts = bundle.split(b"-----END CERTIFICATE-----")
    return [p.strip() + b"\n-----END CERTIFICATE-----\n" for p in parts if p.strip()]


class SecretCertLoader:
    """Every replica: serve the certificate the Secret holds (reloaded when it changes)."""

    name = "webhook-cert-loader"
    needs_leader = False

    def __init__(self, settings: CertSettings, tls: TlsSource) -> None:
        self.settings = settings
        self.tls = tls
        self._digest = ""

    def start(self, ctx: OperatorContext) -> None:
        s = self.settings
        informer = ctx.informer(
            f"/api/v1/namespaces/{s.namespace}/secrets",
            field_selector=f"metadata.name={s.secret}",
            kind="Secret",
            api_version="v1",
        )
        informer.add_handler(self._on_secret)

    def _on_secret(self, event: str, obj: dict[str, Any]) -> None:
        if event == "DELETED":
            return
        data = obj.get("data") or {}
        cert, key = _unb64(data.get("tls.crt")), _unb64(data.get("tls.key"))
        if not cert or not key:
            return
        digest = hashlib.sha256(cert + key).hexdigest()
        if digest == self._digest:
            return
        try:
            files = _write_pair(self.settings.cert_dir, cert, key)
            self.tls.load(*files)
        except (OSError, ValueError) as exc:
            log.error(
                "cannot load the webhook certificate from Secret %s: %s", self.settings.secret, exc
            )
            return
        self._digest = digest
        log.info("serving webhook certificate serial %x", self.tls.serial or 0)

    def stop(self) -> None:
        pass


class FileCertLoader:
    """``manual`` mode: serve the mounted files; poll them and reload on change."""

    name = "webhook-cert-files"
    needs_leader = False

    def __init__(self, cert_dir: Path, tls: TlsSource, *, interval: float = 2.0) -> None:
        self.cert_dir = cert_dir
        self.tls = tls
        self.interval = interval
        self._seen = ""
        self._stop = threading.Event()

    def _digest(self) -> str:
        try:
            data = (self.cert_dir / "tls.crt").read_bytes() + (
                self.cert_dir / "tls.key"
            ).read_bytes()
        except OSError:
            return ""
        return hashlib.sha256(data).hexdigest()

    def check(self) -> bool:
        """Reload when the files changed; True when a new pair was loaded."""
        digest = self._digest()
        if not digest or digest == self._seen:
            return False
        try:
            self.tls.load(str(self.cert_dir / "tls.crt"), str(self.cert_dir / "tls.key"))
        except (OSError, ssl_error()) as exc:  # a half-written pair: try again next round
            log.warning("cannot load %s/tls.crt+tls.key yet: %s", self.cert_dir, exc)
            return False
        self._seen = digest
        log.info(
            "loaded webhook certificate serial %x from %s", self.tls.serial or 0, self.cert_dir
        )
        return True

    def start(self, ctx: OperatorContext) -> None:
        self.check()

        def loop() -> None:
            while not self._stop.wait(self.interval) and not ctx.stopping.is_set():
                self.check()

        ctx.spawn(loop, "webhook-cert-files")

    def stop(self) -> None:
        self._stop.set()


def ssl_error() -> type[Exception]:
    import ssl

    return ssl.SSLError


class CertIssuer:
    """The leader: keep the Secret's certificates valid and ``caBundle`` in both webhooks."""

    name = "webhook-cert-issuer"
    needs_leader = True

    def __init__(self, settings: CertSettings) -> None:
        self.settings = settings
        self.interval = max(1.0, min(settings.lifetime / 10, 300.0))
        self._stop = threading.Event()
        self.issued = 0
        self.ctx: OperatorContext | None = None

    def start(self, ctx: OperatorContext) -> None:
        self.ctx = ctx

        def loop() -> None:
            while not ctx.stopping.is_set():
                try:
                    self.sync()
                except (ClusterError, CertError, ValueError) as exc:
                    log.warning("webhook certificates: %s", exc)
                if self._stop.wait(self.interval):
                    return

        ctx.spawn(loop, "webhook-cert-issuer")

    def stop(self) -> None:
        self._stop.set()

    @property
    def _path(self) -> str:
        s = self.settings
        return f"/api/v1/namespaces/{s.namespace}/secrets/{s.secret}"

    def sync(self) -> None:
        """One round: (re)issue when needed, then make sure both webhooks trust the CA."""
        from cryptography import x509

        assert self.ctx is not None
        api = self.ctx.api
        try:
            secret: dict[str, Any] | None = api.get(self._path)
        except NotFound:
            secret = None
        data = (secret or {}).get("data") or {}
        ca_cert, ca_key = _unb64(data.get("ca.crt")), _unb64(data.get("ca.key"))
        cert = _unb64(data.get("tls.crt"))
        bundle = _unb64(data.get("ca-bundle.crt")) or ca_cert
        now = _now()
        lifetime = self.settings.lifetime
        renew = True
        ca_ok = False
        if cert and ca_cert and ca_key:
            try:
                leaf = x509.load_pem_x509_certificate(cert)
                ca = x509.load_pem_x509_certificate(ca_cert)
                left = (leaf.not_valid_after_utc - now).total_seconds()
                total = (leaf.not_valid_after_utc - leaf.not_valid_before_utc).total_seconds()
                sans = set(self._sans_of(leaf))
                renew = left < total / 3 or sans != set(self.settings.sans)
                ca_ok = (ca.not_valid_after_utc - now).total_seconds() > 2 * lifetime
            except ValueError:
                renew = True
        if renew:
            previous = [p for p in _pems(bundle) if self._still_valid(p, now)] if bundle else []
            issued = issue(
                self.settings.sans,
                lifetime,
                ca=(ca_cert, ca_key) if ca_ok else None,
                ca_lifetime=lifetime * 4,
            )
            new_bundle = issued.ca_cert + b"".join(
                p for p in previous if p.strip() != issued.ca_cert.strip()
            )
            body: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "kubernetes.io/tls",
                "metadata": {
                    "name": self.settings.secret,
                    "namespace": self.settings.namespace,
                    "labels": {"app.kubernetes.io/managed-by": "workload-map-operator"},
                },
                "data": {
                    "tls.crt": _b64(issued.cert),
                    "tls.key": _b64(issued.key),
                    "ca.crt": _b64(issued.ca_cert),
                    "ca.key": _b64(issued.ca_key),
                    "ca-bundle.crt": _b64(new_bundle),
                },
            }
            # trust first, serve second: callers must know the new CA before we present it
            self._patch_ca_bundles(new_bundle)
            if secret is None:
                api.request("POST", f"/api/v1/namespaces/{self.settings.namespace}/secrets", body)
            else:
                body["metadata"]["resourceVersion"] = secret["metadata"]["resourceVersion"]
                api.request("PUT", self._path, body)
            self.issued += 1
            log.info("issued a webhook serving certificate (valid %ss)", int(lifetime))
            bundle = new_bundle
        self._patch_ca_bundles(bundle)

    @staticmethod
    def _sans_of(cert: Any) -> list[str]:
        from cryptography import x509

        try:
            ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return []
        names = [str(n) for n in ext.get_values_for_type(x509.DNSName)]
        names += [str(ip) for ip in ext.get_values_for_type(x509.IPAddress)]
        return names

    @staticmethod
    def _still_valid(pem: bytes, now: datetime.datetime) -> bool:
        from cryptography import x509

        try:
            return x509.load_pem_x509_certificate(pem).not_valid_after_utc > now
        except ValueError:
            return False

    def _patch_ca_bundles(self, bundle: bytes) -> None:
        assert self.ctx is not None
        value = _b64(bundle)
        for kind, name in (
            ("mutatingwebhookconfigurations", self.settings.mutating),
            ("validatingwebhookconfigurations", self.settings.validating),
        ):
            path = f"/apis/admissionregistration.k8s.io/v1/{kind}/{name}"
            for _attempt in range(3):
                try:
                    config = self.ctx.api.get(path)
                except NotFound:
                    break  # not installed (yet): the next round tries again
                hooks = config.get("webhooks") or []
                if all((h.get("clientConfig") or {}).get("caBundle") == value for h in hooks):
                    break
                for hook in hooks:
                    hook.setdefault("clientConfig", {})["caBundle"] = value
                try:
                    self.ctx.api.request("PUT", path, config)
                    log.info("patched caBundle of %s/%s", kind, name)
                    break
                except ApiError as exc:
                    if exc.status != 409:
                        raise
