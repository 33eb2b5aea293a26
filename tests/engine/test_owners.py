"""Owner chains, live and offline (``--pods`` files)."""

from __future__ import annotations

from typing import Any

from workload_map.engine.owners import OwnerRef, controller_ref, top_owner, walk_chain
from workload_map.engine.partition import is_owned_by, partition_pods


def _obj(
    kind: str,
    name: str,
    uid: str,
    owner: tuple[str, str, str, str] | None = None,
    api_version: str = "v1",
    controller: bool = True,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid}
    if owner:
        meta["ownerReferences"] = [
            {
                "apiVersion": owner[0],
                "kind": owner[1],
                "name": owner[2],
                "uid": owner[3],
                "controller": controller,
            }
        ]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


WL = _obj("JobSet", "train", "u-train", api_version="jobset.x-k8s.io/v1alpha2")


def test_controller_ref_prefers_the_controller() -> None:
    obj = {
        "metadata": {
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1"},
                {"apiVersion": "apps/v1", "kind": "B", "name": "b", "uid": "2", "controller": True},
            ]
        }
    }
    ref = controller_ref(obj)
    assert ref is not None and (ref.kind, ref.group) == ("B", "apps")
    assert controller_ref({"metadata": {}}) is None


def test_walk_chain_uses_fetch_and_stops_on_unknown_and_cycles() -> None:
    job = _obj(
        "Job", "j", "u-j", ("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "u-train"), "batch/v1"
    )
    pod = _obj("Pod", "p", "u-p", ("batch/v1", "Job", "j", "u-j"))
    seen: list[OwnerRef] = []

    def fetch(ref: OwnerRef) -> dict[str, Any] | None:
        seen.append(ref)
        return job if ref.name == "j" else None

    chain = walk_chain(pod, fetch)
    assert [r.kind for r in chain.refs] == ["Job", "JobSet"]
    assert chain.broken and chain.missing is not None and chain.missing.name == "train"
    assert chain.uids == ("u-j", "u-train") and [o["kind"] for o in chain.owners] == ["Job"]
    # a cycle ends the walk at the first owner already on it; the object itself never is one
    a = _obj("X", "a", "1", ("v1", "X", "b", "2"))
    b = _obj("X", "b", "2", ("v1", "X", "a", "1"))
    looped = walk_chain(a, lambda r: b if r.name == "b" else a)
    assert [r.name for r in looped.refs] == ["b"] and looped.end == "cycle"
    assert not looped.broken


def test_partition_keeps_own_pods_and_drops_other_owners() -> None:
    mine_job = _obj(
        "Job",
        "train-w-0",
        "u-j1",
        ("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "u-train"),
        "batch/v1",
    )
    other_job = _obj(
        "Job",
        "other-w-0",
        "u-j2",
        ("jobset.x-k8s.io/v1alpha2", "JobSet", "other", "u-other"),
        "batch/v1",
    )
    orphan_rs = _obj("ReplicaSet", "rs", "u-rs", api_version="apps/v1")
    pods = [
        _obj("Pod", "mine", "p1", ("batch/v1", "Job", "train-w-0", "u-j1")),
        _obj("Pod", "other", "p2", ("batch/v1", "Job", "other-w-0", "u-j2")),
        _obj("Pod", "unknown-owner", "p3", ("batch/v1", "Job", "not-in-file", "u-x")),
        _obj("Pod", "bare", "p4"),
        _obj("Pod", "rs-pod", "p5", ("apps/v1", "ReplicaSet", "rs", "u-rs")),
        _obj("Pod", "direct", "p6", ("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "u-train")),
        _obj("Pod", "sibling", "p7", ("jobset.x-k8s.io/v1alpha2", "JobSet", "train2", "u-train2")),
    ]
    candidates, excluded = partition_pods(WL, [mine_job, other_job, orphan_rs, *pods])
    assert [p["metadata"]["name"] for p in candidates] == [
        "mine",
        "unknown-owner",
        "bare",
        "direct",
    ]
    reasons = {p["metadata"]["name"]: r for p, r in excluded}
    assert set(reasons) == {"other", "rs-pod", "sibling"}
    assert "other" in reasons["other"] and "ReplicaSet/rs" in reasons["rs-pod"]


def test_partition_matches_by_name_when_uids_are_absent() -> None:
    wl = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
    pod = _obj("Pod", "p", "p1", ("example.com/v1", "Thing", "t", ""))
    pod["metadata"]["ownerReferences"][0].pop("uid")
    candidates, excluded = partition_pods(wl, [pod])
    assert len(candidates) == 1 and not excluded


def test_live_helpers_cache_fetches_and_find_the_top_owner() -> None:
    job = _obj(
        "Job", "j", "u-j", ("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "u-train"), "batch/v1"
    )
    calls: list[str] = []

    def fetch(ref: OwnerRef) -> dict[str, Any] | None:
        calls.append(ref.name)
        return job if ref.name == "j" else None

    cache: dict[OwnerRef, Any] = {}
    pods = [_obj("Pod", f"p{i}", f"u{i}", ("batch/v1", "Job", "j", "u-j")) for i in range(3)]
    assert all(is_owned_by(p, WL, fetch, cache=cache) for p in pods)
    assert calls == ["j", "train"]
    assert top_owner(pods[0], fetch, cache=cache).name == "train"
    assert top_owner(WL, fetch).kind == "JobSet"
    stranger = _obj("Pod", "s", "us", ("batch/v1", "Job", "k", "u-k"))
    assert not is_owned_by(stranger, WL, fetch, cache=cache)


def test_walk_chain_reads_owners_from_a_dict_by_uid_as_from_a_fetch() -> None:
    job = _obj(
        "Job", "j", "u-j", ("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "u-train"), "batch/v1"
    )
    pod = _obj("Pod", "p", "u-p", ("batch/v1", "Job", "j", "u-j"))
    by_uid = {"u-j": job, "u-train": WL}
    chain = walk_chain(pod, by_uid)
    assert [r.name for r in chain.refs] == ["j", "train"] and chain.end == "top"
    assert chain == walk_chain(pod, lambda r: by_uid.get(r.uid or ""))
    cache: dict[OwnerRef, Any] = {}
    assert walk_chain(pod, by_uid, cache=cache) == chain and len(cache) == 2
    # a namesake of another uid is not the owner: the chain breaks there
    renamed = {"u-j": {**job, "metadata": {**job["metadata"], "uid": "u-j2"}}}
    broken = walk_chain(pod, lambda r: renamed["u-j"])
    assert broken.broken and broken.missing is not None and broken.missing.name == "j"
    assert not broken.owners
