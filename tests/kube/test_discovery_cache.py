"""Discovery kept on disk between commands (kube.discovery_cache): a second command asks no
discovery, a cached answer missing a kind (or naming a removed one) is read again once, and a
broken file is ignored. The API is the CLI tests' in-memory one; the clock is injected."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from tests.cli.fake_cluster import JOBSET, PYTORCHJOB, FakeAPI, obj
from workload_map.kube import Cluster
from workload_map.kube.discovery_cache import TTL, DiscoveryCache, cache_root
from workload_map.kube.errors import NotFound, NotServed
from workload_map.kube.flags import CONNECTION_VALUE_FLAGS, add_connection_flags
from workload_map.kube.options import connection_options


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _cluster(api: FakeAPI, root: Path, clock: Clock | None = None) -> Cluster:
    cache = DiscoveryCache(root, api.server, ("ca",), clock=clock or Clock())
    return Cluster(api, discovery_cache=cache)


def test_second_command_makes_no_discovery_request(tmp_path: Path) -> None:
    api = FakeAPI().serve(JOBSET)
    first = _cluster(api, tmp_path)
    assert first.match_type("jobsets")
    assert "/api" in api.requests
    assert len(list((tmp_path / "discovery").iterdir())) == 1

    api.requests.clear()
    second = _cluster(api, tmp_path)
    found = second.match_type("js")
    assert [r.kind for r in found] == ["JobSet"]
    assert second.resource_for("v1", "Pod") is not None
    assert api.requests == []  # neither /api nor /apis nor a group version
    assert second.resources() == first.resources()


def test_stale_cache_missing_a_kind_rediscovers_once(tmp_path: Path) -> None:
    api = FakeAPI().serve(JOBSET)
    _cluster(api, tmp_path).resources()
    api.serve(PYTORCHJOB)  # a CRD installed after discovery was cached

    api.requests.clear()
    cluster = _cluster(api, tmp_path)
    assert [r.kind for r in cluster.match_type("pytorchjobs")] == ["PyTorchJob"]
    assert "/api" in api.requests
    # once per command: a kind nobody serves does not ask again
    api.requests.clear()
    assert cluster.match_type("nosuchthings") == []
    assert cluster.resource_for("example.com/v1", "Nothing") is None
    assert api.requests == []
    # and the next command finds the new kind in the cache it rewrote
    api.requests.clear()
    assert _cluster(api, tmp_path).match_type("pytorchjobs")
    assert api.requests == []


def test_owner_kind_missing_from_cache_rediscovers(tmp_path: Path) -> None:
    api = FakeAPI()
    _cluster(api, tmp_path).resources()
    api.serve(JOBSET)
    cluster = _cluster(api, tmp_path)
    assert cluster.resource_for("jobset.x-k8s.io/v1alpha2", "JobSet") is not None


def test_removed_type_is_not_served_after_a_404(tmp_path: Path) -> None:
    api = FakeAPI().serve(JOBSET)
    _cluster(api, tmp_path).resources()
    api.resources.remove(JOBSET)  # the CRD was deleted since

    cluster = _cluster(api, tmp_path)
    res = cluster.match_type("jobsets")[0]  # the cache still names it
    with pytest.raises(NotServed, match=r'no resource type "jobsets\.jobset\.x-k8s\.io"'):
        list(cluster.iter_list(res, "default"))
    assert cluster.match_type("jobsets") == []
    # the rewritten cache no longer names it, so a later command does not list it first
    cached = DiscoveryCache(tmp_path, api.server, ("ca",), clock=Clock()).load()
    assert cached is not None and all(r.kind != "JobSet" for r in cached)


def test_missing_object_of_a_served_type_stays_not_found(tmp_path: Path) -> None:
    api = FakeAPI().serve(JOBSET).add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "a"))
    _cluster(api, tmp_path).resources()
    cluster = _cluster(api, tmp_path)
    res = cluster.match_type("jobsets")[0]
    with pytest.raises(NotFound, match='JobSet "x" not found') as caught:
        cluster.get(res, "x", "default")
    assert not isinstance(caught.value, NotServed)
    assert cluster.get(res, "a", "default")["metadata"]["name"] == "a"


def test_expired_cache_is_read_again(tmp_path: Path) -> None:
    api = FakeAPI().serve(JOBSET)
    clock = Clock()
    _cluster(api, tmp_path, clock).resources()
    clock.now += TTL + 1
    api.requests.clear()
    _cluster(api, tmp_path, clock).resources()
    assert "/api" in api.requests
    clock.now += TTL - 1  # rewritten at the new time: fresh again
    api.requests.clear()
    _cluster(api, tmp_path, clock).resources()
    assert api.requests == []


@pytest.mark.parametrize(
    "content", [b"", b"{not json", b'{"format": 1}', b"[]", b'{"format": 99, "server": "x"}']
)
def test_corrupt_file_is_ignored_and_rewritten(tmp_path: Path, content: bytes) -> None:
    api = FakeAPI().serve(JOBSET)
    cache = DiscoveryCache(tmp_path, api.server, ("ca",))
    cache.path.parent.mkdir(parents=True)
    cache.path.write_bytes(content)
    assert cache.load() is None
    cluster = Cluster(api, discovery_cache=cache)
    assert cluster.match_type("jobsets")
    assert cache.load() is not None


def test_unwritable_cache_folder_is_silent(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    api = FakeAPI().serve(JOBSET)
    cluster = _cluster(api, blocker)
    assert cluster.match_type("jobsets")  # answered from the server, nothing written


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_is_ignored(tmp_path: Path) -> None:
    api = FakeAPI().serve(JOBSET)
    _cluster(api, tmp_path).resources()
    path = next((tmp_path / "discovery").iterdir())
    path.chmod(0)
    try:
        api.requests.clear()
        assert _cluster(api, tmp_path).match_type("jobsets")
        assert "/api" in api.requests
    finally:
        path.chmod(0o600)


def test_servers_and_trust_anchors_have_their_own_files(tmp_path: Path) -> None:
    a = DiscoveryCache(tmp_path, "https://10.0.0.1:6443", ("ca-1",))
    b = DiscoveryCache(tmp_path, "https://10.0.0.1:6443", ("ca-2",))  # recreated cluster
    c = DiscoveryCache(tmp_path, "https://10.0.0.2:6443", ("ca-1",))
    assert len({a.path, b.path, c.path}) == 3
    assert a.path.name.startswith("10.0.0.1_6443-")
    a.store([])
    assert a.load() == [] and b.load() is None and c.load() is None
    assert not [p for p in a.path.parent.iterdir() if p.name.startswith(".")]  # no temp left


def test_cache_root_follows_flag_then_xdg_then_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert cache_root(str(tmp_path / "flag"), env) == tmp_path / "flag"
    assert cache_root("", env) is None  # --cache-dir "": no cache
    assert cache_root(None, env) == tmp_path / "xdg" / "workload-map"
    assert cache_root(None, {"HOME": str(tmp_path)}) == tmp_path / ".cache" / "workload-map"
    assert cache_root(None, {"HOME": str(tmp_path), "XDG_CACHE_HOME": "relative"}) == (
        tmp_path / ".cache" / "workload-map"
    )


def test_cache_dir_flag_reaches_the_options() -> None:
    parser = argparse.ArgumentParser()
    add_connection_flags(parser)
    args = parser.parse_args(["--cache-dir", "/somewhere"])
    assert connection_options(args, {}).cache_dir == "/somewhere"
    assert connection_options(parser.parse_args([]), {}).cache_dir is None
    assert "--cache-dir" in CONNECTION_VALUE_FLAGS


def test_fresh_sweep_reads_the_server_once(tmp_path: Path) -> None:
    """--all-types and bare names sweep every covered kind: a kind missing from the cache is
    no miss there, so the sweep asks the server (once) instead of trusting the file."""
    api = FakeAPI()
    _cluster(api, tmp_path).resources()
    api.serve(JOBSET)
    cluster = _cluster(api, tmp_path)
    api.requests.clear()
    assert any(r.kind == "JobSet" for r in cluster.resources(fresh=True))
    assert api.requests.count("/api") == 1
    cluster.resources(fresh=True)
    assert api.requests.count("/api") == 1
