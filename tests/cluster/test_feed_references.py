"""The inventory feed watches the kinds the definitions' references read: a cluster-scoped one
cluster-wide, a namespaced one in the namespaces served; a kind not served or not listable is
told to the inventory, so each workload reading it reports why (not "not found")."""

from __future__ import annotations

from typing import Any

from tests.cli.fake_cluster import FakeAPI, Res
from tests.cluster.test_inventory_references import runtime, trainjob
from workload_map.cluster.feed import InventoryFeed
from workload_map.cluster.inventory import Inventory
from workload_map.kube.errors import Forbidden
from workload_map.model import GVK

TRAINER = "trainer.kubeflow.org"
RESOURCES = (
    Res(TRAINER, "v1alpha1", "TrainJob", "trainjobs"),
    Res(TRAINER, "v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes", namespaced=False),
    Res(TRAINER, "v1alpha1", "TrainingRuntime", "trainingruntimes"),
)


class FakeInformer:
    """What the feed reads of an informer; events are delivered by ``fire``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.handlers: list[Any] = []
        self.last_error: Exception | None = None
        self.synced = True

    def add_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.synced

    def fire(self, event: str, obj: dict[str, Any]) -> None:
        for handler in self.handlers:
            handler(event, obj)


class FakeSource:
    def __init__(self) -> None:
        self.informers: dict[str, FakeInformer] = {}

    def informer(self, path: str, **_: Any) -> FakeInformer:
        return self.informers.setdefault(path, FakeInformer(path))


def _feed(api: FakeAPI, namespaces: tuple[str, ...] = ("ml",)) -> tuple[Inventory, FakeSource]:
    inventory, source = Inventory(), FakeSource()
    feed = InventoryFeed(inventory, api, source, namespaces=namespaces, watch_kartas=False)
    feed.start()
    feed.stop()
    return inventory, source


def _desired(inventory: Inventory) -> tuple[int, list[str | None]]:
    entry = inventory.find(GVK(TRAINER, "v1alpha1", "TrainJob"), "ml", "a")
    assert entry is not None and entry.summary is not None
    return entry.summary.totals.desired, [r.reason for r in entry.references]


def test_runtimes_are_watched_cluster_wide_or_per_namespace_and_feed_the_trainjobs() -> None:
    inventory, source = _feed(FakeAPI().serve(*RESOURCES))
    paths = set(source.informers)
    assert "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes" in paths
    assert "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml/trainingruntimes" in paths
    assert "/apis/trainer.kubeflow.org/v1alpha1/trainingruntimes" not in paths
    source.informers["/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml/trainjobs"].fire(
        "ADDED", trainjob("a", "torch")
    )
    assert _desired(inventory) == (1, ["missing"])
    runtimes = source.informers["/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"]
    runtimes.fire("ADDED", runtime("torch", 3, 2))
    assert _desired(inventory) == (3, [None])
    runtimes.fire("MODIFIED", runtime("torch", 6, 2, version="2"))
    assert _desired(inventory) == (6, [None])


def test_an_unserved_or_forbidden_runtime_kind_is_the_reason_each_trainjob_reports() -> None:
    unserved = FakeAPI().serve(RESOURCES[0])
    inventory, source = _feed(unserved)
    assert not any("runtimes" in p for p in source.informers)
    source.informers["/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml/trainjobs"].fire(
        "ADDED", trainjob("a", "torch")
    )
    assert _desired(inventory) == (1, ["unserved"])

    api = FakeAPI().serve(*RESOURCES)
    inventory, source = Inventory(), FakeSource()
    feed = InventoryFeed(inventory, api, source, namespaces=("ml",), watch_kartas=False).start()
    feed.stop()
    runtimes = source.informers["/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"]
    runtimes.last_error = Forbidden(403, "clustertrainingruntimes is forbidden")
    runtimes.synced = False
    source.informers["/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml/trainjobs"].fire(
        "ADDED", trainjob("a", "torch")
    )
    feed.check()  # what the feed's loop (and wait_synced) run
    assert _desired(inventory) == (1, ["forbidden"])
    runtimes.last_error, runtimes.synced = None, True  # the permission granted later
    feed.check()
    runtimes.fire("ADDED", runtime("torch", 3, 2))
    assert _desired(inventory) == (3, [None])
