"""A live ``get`` imports neither ``pathlib`` nor ``urllib.parse``: its paths (the kubeconfig
files, the cache folder, the settings files, the catalog's folder) are strings built by
:mod:`workload_map.kube.paths` as pathlib builds them, and its server URL and request targets
are split and quoted by :mod:`workload_map.kube.urls` as urllib.parse does. With what they
import (``fnmatch``, ``ntpath``, ``ipaddress``) they were about 10M instructions of a live
``get`` (callgrind, docs/cli.md). Nor ``threading`` (~2M): the connection's and the catalog's
locks and thread-local are ``_thread``'s, the very objects threading hands out. Nor ``base64``
(with ``struct``, ~1M): the kubeconfig's certificate data is decoded by ``binascii``."""

from __future__ import annotations

from pathlib import Path

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from tests.cli.http_fake import serve, write_kubeconfig
from tests.fresh import fresh_python

#: pathlib and what it imports, threading, base64; none of it is on a live get's path
PATHLIB = ("pathlib", "fnmatch", "ntpath", "urllib.parse", "ipaddress", "threading", "base64")


def test_a_live_get_imports_no_pathlib_urllib_threading_nor_base64(tmp_path: Path) -> None:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    cache = tmp_path / "cache"
    with serve(api) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml")
        args = ["get", "jobsets", "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache)]
        code = (
            "import io, sys\n"
            "from workload_map.cli.main import main\n"
            "out = io.StringIO()\n"
            f"code = main({args!r}, stdout=out)\n"
            f"print(code, 'train' in out.getvalue(), [m for m in {PATHLIB!r} if m in sys.modules])\n"
        )
        # the first command writes the caches (discovery, the kubeconfig's parse, the jq
        # programs), the second reads them
        first, second = fresh_python(code), fresh_python(code)
    # (the first parses the kubeconfig with PyYAML, whose constructor imports base64)
    assert first.stdout.split() == ["0", "True", "['base64']"], first.stdout + first.stderr
    assert second.stdout.split() == ["0", "True", "[]"], second.stdout + second.stderr
    # the caches were written where they were: in the folder given, under the same names
    folders = {str(p.relative_to(cache).parent) for p in cache.rglob("*") if p.is_file()}
    assert folders == {".", "discovery", "kubeconfig"}, folders
