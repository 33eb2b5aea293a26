"""The integration tests' client side: ``Cluster`` helpers over one cluster (apply, set_status,
install_crd, namespaces, nodes), ``Kube`` (a Cluster plus the local plane behind it, if any) and
``open_kube``, which gives the session its cluster: WLMAP_TEST_KUBECONFIG's or a local plane."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hack.localkube.nodes import fake_node
from hack.localkube.plane import (
    HarnessError,
    LocalControlPlane,
    find_binaries,
    find_controllers,
    start_timeout,
)

FIELD_MANAGER = "wlmap-tests"
CRD_DIGEST_ANNOTATION = "wlmap-test.example.com/input-sha256"
# Metadata a server assigns: copied manifests (kubectl -o yaml output) must not send it back.
SERVER_METADATA = (
    "resourceVersion",
    "uid",
    "selfLink",
    "creationTimestamp",
    "managedFields",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


@dataclass
class Cluster:
    """Client-side helpers over one cluster: the local control plane or WLMAP_TEST_KUBECONFIG's."""

    kubeconfig: Path
    server: str = ""
    context: str | None = None
    _config: Any = field(default=None, repr=False)
    _resources: dict[tuple[str, str], tuple[str, bool]] = field(default_factory=dict, repr=False)
    _client: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(
            config_file=str(self.kubeconfig),
            context=self.context,
            client_configuration=cfg,
            persist_config=False,
        )
        self._config = cfg
        self.server = cfg.host
        self._client = client.ApiClient(cfg)

    def api_client(self) -> Any:
        """A new ``kubernetes.client.ApiClient`` for this cluster (caller may close it)."""
        from kubernetes import client

        return client.ApiClient(self._config)

    # -- raw REST --------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        query: Mapping[str, Any] | None = None,
    ) -> Any:
        """One API call; returns the decoded JSON body; raises kubernetes ApiException."""
        from kubernetes.client.exceptions import ApiException

        # kubernetes >= 35 (the newer generator): serialise, send, then read. The REST layer
        # JSON-encodes a dict/list body for every +json and +yaml content type (apply patches).
        method_, url, headers, _body, _ = self._client.param_serialize(
            method=method,
            resource_path=path,
            query_params=[(k, v) for k, v in (query or {}).items()],
            header_params={"Content-Type": content_type, "Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        response = self._client.call_api(
            method_, url, header_params=headers, body=body, _request_timeout=60
        )
        raw = response.read()
        text = raw.decode("utf-8", errors="replace") if raw else ""
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=text, data=None)
        return json.loads(text) if text else None

    def resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        """(plural, namespaced) of a kind from discovery, refreshed when unknown (new CRDs)."""
        key = (api_version, kind)
        if key not in self._resources:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            from kubernetes.client.exceptions import ApiException

            try:
                listing = self.request("GET", base)
            except ApiException as err:
                if err.status != 404:
                    raise
                listing = {"resources": []}
            for res in listing.get("resources", []):
                if "/" not in res["name"]:
                    self._resources[(api_version, res["kind"])] = (
                        res["name"],
                        bool(res["namespaced"]),
                    )
        if key not in self._resources:
            raise HarnessError(
                f"the cluster serves no kind {kind!r} in {api_version!r} "
                "(CRD not installed or not yet in discovery)"
            )
        return self._resources[key]

    def path(
        self, api_version: str, kind: str, name: str | None = None, namespace: str | None = None
    ) -> str:
        plural, namespaced = self.resource(api_version, kind)
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if namespaced:
            base += f"/namespaces/{namespace or 'default'}"
        base += f"/{plural}"
        return f"{base}/{name}" if name else base

    # -- objects ---------------------------------------------------------------------------

    def apply(
        self,
        obj_or_yaml: Mapping[str, Any] | str | Path,
        namespace: str | None = None,
        *,
        field_validation: str | None = None,
    ) -> Any:
        """Server-side apply one object (dict) or every document of a YAML text/file.

        Returns the applied object as the server stored it, or a list of them when the YAML
        holds several documents (or a ``kind: List``). ``namespace`` overrides the manifests'
        namespace for namespaced kinds. Server-assigned metadata in copied manifests is dropped;
        ``status`` is ignored by the server (use ``set_status``). ``field_validation="Strict"``
        turns unknown/duplicate fields into errors instead of silent pruning."""
        docs = load_objects(obj_or_yaml)
        results = [self._apply_one(doc, namespace, field_validation) for doc in docs]
        if isinstance(obj_or_yaml, Mapping) and obj_or_yaml.get("kind") != "List":
            return results[0]
        return results[0] if len(results) == 1 else results

    def _apply_one(
        self, obj: Mapping[str, Any], namespace: str | None, field_validation: str | None = None
    ) -> Any:
        body = json.loads(json.dumps(obj))  # deep copy, JSON-only values
        meta = body.setdefault("metadata", {})
        for key in SERVER_METADATA:
            meta.pop(key, None)
        name = meta.get("name")
        if not name or "apiVersion" not in body or "kind" not in body:
            raise HarnessError(
                f"cannot apply an object without apiVersion/kind/metadata.name: {str(obj)[:200]}"
            )
        _, namespaced = self.resource(body["apiVersion"], body["kind"])
        if namespaced:
            meta["namespace"] = namespace or meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        path = self.path(body["apiVersion"], body["kind"], name, meta.get("namespace"))
        query = {"fieldManager": FIELD_MANAGER, "force": "true"}
        if field_validation:
            query["fieldValidation"] = field_validation
        return self.request(
            "PATCH", path, body, content_type="application/apply-patch+yaml", query=query
        )

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        return self.request("GET", self.path(api_version, kind, name, namespace))

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        """Delete at once (grace 0): no kubelet will ever confirm a graceful pod deletion."""
        return self.request(
            "DELETE",
            self.path(api_version, kind, name, namespace),
            {"gracePeriodSeconds": 0, "propagationPolicy": "Background"},
        )

    def set_status(self, obj: Mapping[str, Any], namespace: str | None = None) -> Any:
        """Replace an existing object's ``.status`` through the status subresource.

        ``obj`` needs apiVersion, kind, metadata.name (+ namespace) and status; it is what
        a controller or kubelet would have written. For a CRD without the status subresource
        the whole object is PUT instead (status is then ordinary data). Returns the stored
        object."""
        from kubernetes.client.exceptions import ApiException

        meta = obj.get("metadata") or {}
        if "status" not in obj or not meta.get("name"):
            raise HarnessError("set_status needs metadata.name and a status field")
        ns = namespace or meta.get("namespace")
        path = self.path(obj["apiVersion"], obj["kind"], meta["name"], ns)
        target = path + "/status"
        for _attempt in range(5):
            current = self.request("GET", path)
            current["status"] = json.loads(json.dumps(obj["status"]))
            try:
                return self.request("PUT", target, current)
            except ApiException as err:
                if err.status == 404 and target != path:
                    target = path  # a CRD without the status subresource: status is plain data
                elif err.status != 409:  # 409: resourceVersion conflict, read again
                    raise
        raise HarnessError(f"set_status kept conflicting on {path}")

    def create_with_status(self, obj: Mapping[str, Any], namespace: str | None = None) -> Any:
        """Apply a manifest, then set the status it carries (for kubectl -o yaml fixtures)."""
        applied = self.apply(obj, namespace)
        if obj.get("status") is None:
            return applied
        return self.set_status({**obj, "metadata": applied["metadata"]})

    # -- CRDs and namespaces ---------------------------------------------------------------

    def install_crd(self, crd: Mapping[str, Any] | str | Path, timeout: float = 60.0) -> Any:
        """Create or update a CRD (dict, YAML text or file, ``.gz`` allowed); wait until
        Established and every served version is in discovery. Returns the CRD as stored.

        Plain create/update, not server-side apply: SSA on a 300 KB upstream CRD costs the
        apiserver tens of seconds. A CRD already installed from identical input (same
        content hash annotation) is left alone, so session-wide re-installs are free."""
        from kubernetes.client.exceptions import ApiException

        docs = [d for d in load_objects(crd) if d.get("kind") == "CustomResourceDefinition"]
        if len(docs) != 1:
            raise HarnessError(f"expected exactly one CustomResourceDefinition, found {len(docs)}")
        body = json.loads(json.dumps(docs[0]))
        body.pop("status", None)
        meta = body.setdefault("metadata", {})
        for key in SERVER_METADATA:
            meta.pop(key, None)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        meta.setdefault("annotations", {})[CRD_DIGEST_ANNOTATION] = digest
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        try:
            stored = self.request("POST", base, body)
        except ApiException as err:
            if err.status != 409:
                raise
            stored = self._replace_crd(f"{base}/{meta.get('name')}", body, digest)
        name = stored["metadata"]["name"]
        group = stored["spec"]["group"]
        kind = stored["spec"]["names"]["kind"]
        versions = [v["name"] for v in stored["spec"]["versions"] if v.get("served", True)]
        deadline = time.monotonic() + timeout
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
        while True:
            stored = self.request("GET", path)
            conditions = {
                c["type"]: c for c in (stored.get("status") or {}).get("conditions") or []
            }
            established = conditions.get("Established", {}).get("status") == "True"
            if established and all(self._discovered(f"{group}/{v}", kind) for v in versions):
                return stored
            if time.monotonic() > deadline:
                raise HarnessError(
                    f"CRD {name} not Established/discoverable after {timeout} s: "
                    f"{json.dumps(list(conditions.values()))}"
                )
            time.sleep(0.1)

    def _replace_crd(self, path: str, body: dict[str, Any], digest: str) -> Any:
        from kubernetes.client.exceptions import ApiException

        for _attempt in range(5):
            stored = self.request("GET", path)
            if stored["metadata"].get("annotations", {}).get(CRD_DIGEST_ANNOTATION) == digest:
                return stored
            body["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
            try:
                return self.request("PUT", path, body)
            except ApiException as err:
                if err.status != 409:  # the CRD controllers write its status meanwhile
                    raise
        raise HarnessError(f"updating {path} kept conflicting")

    def _discovered(self, api_version: str, kind: str) -> bool:
        self._resources.pop((api_version, kind), None)
        try:
            self.resource(api_version, kind)
        except HarnessError:
            return False
        return True

    def create_namespace(self, prefix: str = "wlmap-test-") -> str:
        created = self.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": prefix}},
        )
        return str(created["metadata"]["name"])

    def delete_namespace(self, name: str) -> None:
        """Delete the namespace; its pods go first, at once (grace 0).

        Pods go first because nothing else would delete them: a pod bound to a fake node waits
        for a kubelet forever, and a pending pod left behind would be bound to the next test's
        nodes while a scheduler runs. The namespace controller removes the rest."""
        from kubernetes.client.exceptions import ApiException

        try:
            self.request(
                "DELETE",
                f"/api/v1/namespaces/{name}/pods",
                {"gracePeriodSeconds": 0, "propagationPolicy": "Background"},
            )
        except ApiException as err:
            if err.status not in (403, 404):
                raise
        try:
            self.request("DELETE", f"/api/v1/namespaces/{name}")
        except ApiException as err:
            if err.status != 404:
                raise

    # -- fake nodes ------------------------------------------------------------------------

    def create_node(
        self,
        name: str,
        capacity: Mapping[str, str] | None = None,
        *,
        allocatable: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        taints: list[Mapping[str, Any]] | None = None,
    ) -> Any:
        """A Node object that a scheduler can bind pods to, no kubelet behind it.

        The harness's ``fake_node`` (capacity, allocatable, ``Ready=True``). Returns the stored
        Node."""
        body = fake_node(name, capacity, allocatable=allocatable, labels=labels, taints=taints)
        stored = self.request("POST", "/api/v1/nodes", body)
        if (stored.get("status") or {}).get("capacity") != body["status"]["capacity"]:
            # A server that drops status on create gets it through the status subresource.
            stored = self.set_status({**stored, "status": body["status"]})
        return stored

    def delete_node(self, name: str) -> None:
        from kubernetes.client.exceptions import ApiException

        try:
            self.request("DELETE", f"/api/v1/nodes/{name}", {"gracePeriodSeconds": 0})
        except ApiException as err:
            if err.status != 404:
                raise

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def load_objects(src: Mapping[str, Any] | str | Path) -> list[dict[str, Any]]:
    """Objects of a dict, a YAML/JSON text, or a file (``.gz`` read through gzip); Lists flattened."""
    if isinstance(src, Mapping):
        raw: list[Any] = [dict(src)]
    else:
        if isinstance(src, Path) or ("\n" not in src and Path(src).is_file()):
            path = Path(src)
            data = path.read_bytes()
            text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode()
        else:
            text = src
        raw = [d for d in yaml.safe_load_all(text) if d is not None]
    out: list[dict[str, Any]] = []
    for doc in raw:
        if not isinstance(doc, dict):
            raise HarnessError(f"expected a Kubernetes object (mapping), got {type(doc).__name__}")
        if doc.get("kind") == "List" or (
            str(doc.get("kind", "")).endswith("List") and "items" in doc
        ):
            out.extend(doc.get("items") or [])
        else:
            out.append(doc)
    return out


@dataclass
class Kube(Cluster):
    """What the ``kube`` fixture yields: a Cluster plus the local plane behind it (if any)."""

    plane: LocalControlPlane | None = None

    def local_plane(self) -> LocalControlPlane:
        """The local plane, or HarnessError for a cluster given by WLMAP_TEST_KUBECONFIG."""
        if self.plane is None:
            raise HarnessError(
                "this needs the local control plane; WLMAP_TEST_KUBECONFIG names another cluster"
            )
        return self.plane

    def restart_apiserver(self) -> float:
        """Bounce the local API server (same address, same etcd data); seconds it was away."""
        return self.local_plane().restart_apiserver()

    def shutdown(self) -> None:
        """Close the client and stop the local plane (if any); idempotent."""
        try:
            self.close()
        finally:
            if self.plane is not None:
                self.plane.stop()


def open_kube(
    *,
    generic_workload: bool = True,
    controller_manager: bool = True,
    scheduler: bool = False,
    workload_controllers: bool = False,
    extra_gates: tuple[str, ...] = (),
    extra_apis: tuple[str, ...] = (),
    external_ok: bool = True,
    etcd_data_from: Path | None = None,
) -> Kube:
    """The cluster for a test session: WLMAP_TEST_KUBECONFIG's, else a fresh local plane.

    The local plane runs etcd, kube-apiserver and (``controller_manager``) the controller-
    manager; ``scheduler`` also starts kube-scheduler. ``generic_workload=False`` leaves the
    workload-aware scheduling API off; ``workload_controllers`` adds the in-tree Job,
    ReplicaSet, Deployment and StatefulSet controllers; ``extra_gates`` turns more feature gates
    on in every component and ``extra_apis`` serves more API versions. ``external_ok=False`` always starts a local plane
    (tests that restart or reconfigure it); ``etcd_data_from`` starts the local plane from a
    copy of a stopped plane's etcd data (``LocalControlPlane.etcd_data_from``)."""
    external = os.environ.get("WLMAP_TEST_KUBECONFIG")
    if external and external_ok:
        path = Path(external).expanduser()
        if not path.is_file():
            raise HarnessError(f"WLMAP_TEST_KUBECONFIG={external}: no such file")
        return Kube(kubeconfig=path, context=os.environ.get("WLMAP_TEST_CONTEXT") or None)
    apiserver, etcd = find_binaries()
    kcm, sched = find_controllers() if controller_manager or scheduler else (None, None)
    plane = LocalControlPlane(
        apiserver,
        etcd,
        start_timeout=start_timeout(),
        keep_workdir=bool(os.environ.get("WLMAP_TEST_KEEP_DIR")),
        controller_manager_bin=kcm if controller_manager else None,
        scheduler_bin=sched,
        scheduler=scheduler,
        generic_workload=generic_workload,
        workload_controllers=workload_controllers,
        extra_gates=extra_gates,
        extra_apis=extra_apis,
        etcd_data_from=etcd_data_from,
    )
    plane.start()
    try:
        assert plane.kubeconfig is not None
        return Kube(kubeconfig=plane.kubeconfig, plane=plane)
    except BaseException:
        plane.stop()
        raise
