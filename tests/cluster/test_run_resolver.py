"""``cluster.references.run_resolver``: one resolver per cluster client for its run; the
mapping is made on the first call, so a command that never asks (a live describe) does not
import ``weakref`` (~1.5M instructions, callgrind)."""

from __future__ import annotations

from tests.cli.fake_cluster import FakeAPI
from workload_map.cluster import references
from workload_map.kube.client import Cluster


def test_the_module_binds_no_weakref_at_import() -> None:
    assert "weakref" not in vars(references)


def test_one_resolver_per_cluster() -> None:
    first, second = Cluster(FakeAPI()), Cluster(FakeAPI())
    resolver = references.run_resolver(first)
    assert references.run_resolver(first) is resolver
    assert references.run_resolver(second) is not resolver
