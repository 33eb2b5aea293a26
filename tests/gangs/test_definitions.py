"""The gang room's definition index follows the CLI's one resolver (``cluster.resolve_gvk``):
cluster Kartas over the catalog, other versions as a fallback, and never an invalid or an
ambiguous definition."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.gangs import custom
from workload_map.catalog import catalog
from workload_map.catalog.definitions import Definitions
from workload_map.catalog.resolution import resolve_gvk
from workload_map.gangs.definitions import KartaIndex
from workload_map.model import GVK

API = f"{custom.GROUP}/v1"
LWS = ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")


def _catalog_copy(api_version: str, kind: str, name: str) -> dict[str, Any]:
    """A cluster Karta overriding the catalog's definition of ``kind`` (a user's own copy)."""
    from workload_map.model import dump_karta

    found = catalog.resolve(api_version, kind)
    assert found is not None
    obj = copy.deepcopy(dump_karta(found[0]))
    obj["metadata"] = {"name": name}
    return obj


def test_the_catalog_answers_without_cluster_kartas() -> None:
    index = KartaIndex()
    karta = index.resolve(*LWS)
    assert karta is not None and karta.name == "leaderworkerset-x-k8s-io-leaderworkerset-v1"
    assert index.resolve(API, custom.KIND) is None
    index.apply("ADDED", custom.karta())  # an event: a new generation of definitions
    assert index.resolve(*LWS) is karta  # one Karta object per built-in across events
    assert KartaIndex(catalog=False).resolve(*LWS) is None


def test_a_cluster_karta_is_used_until_it_is_deleted() -> None:
    index = KartaIndex()
    obj = custom.karta()
    index.apply("ADDED", obj)
    karta = index.resolve(API, custom.KIND)
    assert karta is not None and karta.name == obj["metadata"]["name"]
    assert index.resolve(API, custom.KIND) is karta  # one Karta object per kind
    # another version of the kind falls back to it, as `wlmap describe` does
    assert index.resolve(f"{custom.GROUP}/v2", custom.KIND) is karta
    generation = index.generation
    index.apply("DELETED", obj)
    assert index.generation == generation + 1
    assert index.resolve(API, custom.KIND) is None


def test_a_cluster_copy_replaces_the_catalogs_definition() -> None:
    index = KartaIndex()
    index.apply("ADDED", _catalog_copy(*LWS, name="my-lws"))
    karta = index.resolve(*LWS)
    assert karta is not None and karta.name == "my-lws"
    assert [k.name for k in index.kartas()].count("my-lws") == 1
    assert LWS[1] in {k.root_gvk.kind for k in index.kartas() if k.root_gvk}


def test_an_invalid_cluster_karta_is_never_used() -> None:
    index = KartaIndex()
    broken = _catalog_copy(*LWS, name="broken-lws")
    broken["spec"]["structureDefinition"]["childComponents"][0]["ownerRef"] = "nowhere"
    index.apply("ADDED", broken)
    karta = index.resolve(*LWS)
    assert karta is not None and karta.name != "broken-lws"  # the catalog's stands in
    assert "broken-lws" in index.errors
    own = custom.karta(name="broken-partsets")
    own["spec"]["structureDefinition"]["childComponents"][0]["ownerRef"] = "nowhere"
    index.apply("ADDED", own)
    assert index.resolve(API, custom.KIND) is None  # no catalog definition to stand in
    assert "broken-partsets" in index.errors


def test_two_cluster_kartas_claiming_one_kind_resolve_to_none_with_an_error() -> None:
    index = KartaIndex()
    index.apply("ADDED", custom.karta(name="a"))
    index.apply("ADDED", custom.karta(name="b"))
    assert index.resolve(API, custom.KIND) is None
    assert any("delete all but one" in message for message in index.errors.values())
    index.apply("DELETED", custom.karta(name="b"))
    karta = index.resolve(API, custom.KIND)
    assert karta is not None and karta.name == "a"


def test_the_index_answers_what_the_cli_resolver_answers() -> None:
    objs = [custom.karta(), _catalog_copy(*LWS, name="my-lws")]
    index = KartaIndex()
    for obj in objs:
        index.apply("ADDED", obj)
    definitions = Definitions.from_objects(objs)
    for api_version, kind in [LWS, (API, custom.KIND), ("jobset.x-k8s.io/v1alpha2", "JobSet")]:
        resolution = resolve_gvk(GVK.from_api_version(api_version, kind), definitions)
        assert resolution is not None
        found = index.resolve(api_version, kind)
        assert found is not None and found.name == resolution.definition.karta.name


def test_each_event_parses_only_the_changed_karta(monkeypatch: pytest.MonkeyPatch) -> None:
    import workload_map.model
    from workload_map.catalog import definitions as definitions_module

    loaded: list[str] = []
    validated: list[str] = []
    real_load, real_validate = definitions_module.load_karta, workload_map.model.validate

    def load(obj: Any) -> Any:
        loaded.append(str(obj["metadata"]["name"]))
        return real_load(obj)

    def validate(karta: Any) -> Any:
        validated.append(str(karta.name))
        return real_validate(karta)

    monkeypatch.setattr(definitions_module, "load_karta", load)
    # the parser imports the validator from the package when it first needs it
    monkeypatch.setattr(workload_map.model, "validate", validate)
    index = KartaIndex()
    objs = [custom.karta(name=f"k{i}") for i in range(40)]
    for i, obj in enumerate(objs):
        obj["spec"]["structureDefinition"]["rootComponent"]["kind"]["kind"] = f"Kind{i}"
    for obj in objs:
        index.apply("ADDED", obj)
    # 40 events, 40 loads and validations (each of the new Karta), not 40 x 41 / 2: counted,
    # not timed (issue 26)
    names = [f"k{i}" for i in range(40)]
    assert loaded == names and validated == names
    assert all(index.resolve(API, f"Kind{i}") is not None for i in range(40))
    index.apply("MODIFIED", objs[7])
    assert loaded[40:] == ["k7"] and validated[40:] == ["k7"]


def test_with_gangs_answers_resolve_when_it_has_gangs_and_follows_events() -> None:
    index = KartaIndex()
    jobset = ("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert index.with_gangs(*jobset) is index.resolve(*jobset)
    assert index.covers(*jobset) and index.with_gangs(*jobset) is not None
    assert index.with_gangs(API, custom.KIND) is None and not index.covers(API, custom.KIND)
    obj = custom.karta()
    index.apply("ADDED", obj)  # a remembered "no gangs" does not outlive the event
    karta = index.with_gangs(API, custom.KIND)
    assert karta is not None and karta is index.resolve(API, custom.KIND)
    assert index.covers(API, custom.KIND)
    without = copy.deepcopy(obj)
    del without["spec"]["optimizationInstructions"]
    index.apply("MODIFIED", without)  # nor a remembered Karta with gangs
    assert index.resolve(API, custom.KIND) is not None
    assert index.with_gangs(API, custom.KIND) is None and not index.covers(API, custom.KIND)
    index.apply("DELETED", without)
    assert index.with_gangs(API, custom.KIND) is None
