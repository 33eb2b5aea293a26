"""``wlmap describe`` (live) shows the workload's events and its objects' warnings, the one that
explains a stuck gang first; ``--show-events=false`` and ``-f`` show none (issue 25 item 3)."""

from __future__ import annotations

import json

from tests.cli.fake_cluster import EVENT, JOBSET, FakeAPI, event, obj, owner_ref, pod
from tests.cli.test_describe import _jobset_api

METADATA = "PartialObjectMetadataList"


def _objects(api: FakeAPI, kind: str, name: str) -> dict:
    return next(o for o in api.objects if o["kind"] == kind and o["metadata"]["name"] == name)


def _stuck_gang() -> FakeAPI:
    """The JobSet of test_describe with one worker unschedulable, a second Job refused its pods
    by a quota (it has no pod, so only its owner chain ties it to the JobSet) and noise from a
    pod the JobSet does not own."""
    api = _jobset_api().serve(EVENT)
    js = _objects(api, "JobSet", "train")
    job = _objects(api, "Job", "train-workers-0")
    refused = obj("batch/v1", "Job", "train-workers-1", "ml", owner=owner_ref(js))
    api.add(refused)
    api.add(
        event(
            js,
            "SuccessfulCreate",
            "Created job train-workers-0",
            type="Normal",
            component="jobset-controller",
            first="2026-11-01T00:00:01Z",
            last="2026-11-01T00:00:01Z",
        ),
        event(
            js,
            "SuccessfulCreate",
            "Created job train-workers-1",
            type="Normal",
            component="jobset-controller",
            first="2026-11-01T00:00:02Z",
            last="2026-11-01T00:00:02Z",
            name="train.create-1",
        ),
        event(
            _objects(api, "Pod", "train-workers-0-1"),
            "FailedScheduling",
            "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
            count=7,
            first="2026-11-01T00:01:00Z",
            last="2026-11-01T00:05:00Z",
        ),
        event(
            refused,
            "FailedCreate",
            'Error creating: pods "train-workers-1-0" is forbidden: exceeded quota: gpus',
            count=3,
            component="job-controller",
            last="2026-11-01T00:04:00Z",
        ),
        event(
            job,
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
            component="job-controller",
            last="2026-11-01T00:06:00Z",
        ),
        event(
            _objects(api, "Pod", "stranger"),
            "BackOff",
            "Back-off restarting failed container",
            component="kubelet",
            last="2026-11-01T00:07:00Z",
        ),
    )
    return api


def test_json_events_key_orders_the_gangs_scheduling_first(wlmap) -> None:
    r = wlmap(["describe", "jobset/train", "-n", "ml", "-o", "json"], api=_stuck_gang())
    assert r.code == 0, r.err
    events = json.loads(r.out)["events"]
    assert [(e["type"], e["reason"], e["message"]) for e in events["items"]] == [
        ("Normal", "SuccessfulCreate", "Created job train-workers-0"),
        ("Normal", "SuccessfulCreate", "Created job train-workers-1"),
    ]
    assert events["items"][0]["source"] == "jobset-controller"
    assert [
        (w["rank"], w["reason"], w["kind"], w["objects"], w["count"]) for w in events["warnings"]
    ] == [
        ("gangScheduling", "FailedScheduling", "Pod", ["train-workers-0-1"], 7),
        ("create", "FailedCreate", "Job", ["train-workers-1"], 3),
        ("other", "BackoffLimitExceeded", "Job", ["train-workers-0"], 1),
    ]  # the stranger's BackOff is not the JobSet's
    assert "note" not in events


def test_table_prints_events_last_as_kubectl_does(wlmap) -> None:
    r = wlmap(["describe", "jobset/train", "-n", "ml"], api=_stuck_gang())
    assert r.code == 0, r.err
    out = r.out
    assert out.index("Gangs:") < out.index("\nEvents:\n")
    section = out[out.index("\nEvents:\n") :].splitlines()
    assert section[2].split()[:5] == ["TYPE", "REASON", "AGE", "FROM", "MESSAGE"]
    assert "SuccessfulCreate" in section[3] and "jobset-controller" in section[3]
    warnings = section[
        section.index("Warnings of its objects and pods (a gang's scheduling first):") + 1 :
    ]
    assert warnings[0].split()[:5] == ["REASON", "OBJECTS", "COUNT", "LAST", "MESSAGE"]
    assert warnings[1].split()[:4] == ["FailedScheduling", "Pod", "train-workers-0-1", "[gang]"]
    assert "0/2 nodes are available" in warnings[1]
    assert warnings[2].split()[:3] == ["FailedCreate", "Job", "train-workers-1"]
    assert warnings[3].split()[0] == "BackoffLimitExceeded"
    assert "stranger" not in "\n".join(section)


def test_repeated_event_age_reads_like_kubectl(wlmap) -> None:
    api = _jobset_api().serve(EVENT)
    js = _objects(api, "JobSet", "train")
    api.add(
        event(
            js,
            "Unhealthy",
            "probe failed",
            count=5,
            first="2026-11-01T00:00:00Z",
            last="2026-11-01T00:10:00Z",
        )
    )
    r = wlmap(["describe", "jobset/train", "-n", "ml"], api=api)
    line = next(x for x in r.out.splitlines() if "Unhealthy" in x)
    assert "(x5 over " in line


def test_show_events_false_and_files_have_no_section(wlmap, tmp_path) -> None:
    api = _stuck_gang()
    for flag in (["--show-events=false"], ["--show-events", "false"]):
        r = wlmap(["describe", "jobset/train", "-n", "ml", "-o", "json", *flag], api=api)
        assert r.code == 0, r.err
        assert "events" not in json.loads(r.out)
        r = wlmap(["describe", "jobset/train", "-n", "ml", *flag], api=api)
        assert "Events:" not in r.out
    listed = [p for p in api.requests if "/events" in p]
    assert listed == []  # not even read
    r = wlmap(["describe", "jobset/train", "-n", "ml", "--show-events=maybe"], api=api)
    assert r.code == 2 and "expected true or false" in r.err
    path = tmp_path / "js.json"
    path.write_text(json.dumps(_objects(api, "JobSet", "train")))
    r = wlmap(["describe", "-f", str(path), "-o", "json"])
    assert r.code == 0, r.err
    assert "events" not in json.loads(r.out)
    assert "Events" not in wlmap(["describe", "-f", str(path)]).out


def test_events_that_cannot_be_read_are_a_note_not_a_failure(wlmap) -> None:
    api = _stuck_gang()
    api.forbidden.add("/api/v1/namespaces/ml/events")
    r = wlmap(["describe", "jobset/train", "-n", "ml", "-o", "json"], api=api)
    assert r.code == 0, r.err
    events = json.loads(r.out)["events"]
    assert events["items"] == [] and events["warnings"] == []
    assert "events could not be read" in events["note"] and "forbidden" in events["note"]
    r = wlmap(["describe", "jobset/train", "-n", "ml"], api=api)
    assert "Events:  <none>" in r.out and "(events could not be read" in r.out


def test_each_list_is_narrowed_by_the_server(wlmap) -> None:
    api = _stuck_gang()
    wlmap(["describe", "jobset/train", "-n", "ml", "-o", "json"], api=api)
    assert [p for p in api.requests if p.endswith("/events")] == [
        "/api/v1/namespaces/ml/events",
        "/api/v1/namespaces/ml/events",
    ]  # one for the workload's own (involvedObject.uid), one for the namespace's warnings


def test_the_events_key_validates_against_the_describe_schema(wlmap) -> None:
    import jsonschema

    from workload_map.cli.schemas import SCHEMAS

    schema = next(s for s in SCHEMAS if s.file == "describe.schema.json").document()
    validator = jsonschema.validators.validator_for(schema)(schema)
    for api in (_stuck_gang(), _jobset_api()):  # with events; with none served (a note)
        r = wlmap(["describe", "jobset/train", "-n", "ml", "-o", "json"], api=api)
        view = json.loads(r.out)
        assert "events" in view
        validator.validate(view)
        bad = json.loads(r.out)
        bad["events"]["surprise"] = 1
        assert not validator.is_valid(bad)


def _job_of(js: dict, index: int) -> tuple[dict, dict]:
    """A Job of ``js`` as the API server completes it (its selector, its template's labels)
    and its pod, pending, labelled as the Job controller labels it."""
    name = f"{js['metadata']['name']}-workers-{index}"
    uid = f"uid-job-{name}"
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name}
    spec = {"selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}}
    spec["template"] = {"metadata": {"labels": labels}, "spec": {"containers": []}}
    job = obj("batch/v1", "Job", name, "ml", uid=uid, owner=owner_ref(js), spec=spec)
    return job, pod(f"{name}-0", job, namespace="ml", phase="Pending", node=None, labels=labels)


def _busy_namespace(others: int, *, warned: bool = True) -> FakeAPI:
    """A JobSet's Job with a pending pod, and ``others`` more JobSets alike: in a busy
    namespace every pending pod has the scheduler's warning."""
    api = FakeAPI().serve(JOBSET, EVENT)
    for i in range(others + 1):
        js = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train" if i == 0 else f"other-{i}", "ml")
        job, waiting = _job_of(js, 0)
        api.add(js, job, waiting)
        if warned:
            api.add(event(waiting, "FailedScheduling", "0/2 nodes are available."))
    return api


def _by_name(api: FakeAPI) -> list[str]:
    """The objects the fake answered a GET by name for (discovery's paths are shorter)."""
    return [p.rsplit("/", 1)[-1] for p, q, _ in api.calls if not q and p.count("/") >= 6]


def test_a_busy_namespaces_warnings_are_placed_by_lists_not_a_get_each(wlmap) -> None:
    """The warnings of a namespace are placed by their objects' owner chains, read a level at
    a time: the 12 warned pods of other JobSets, their Jobs and their JobSets are a list of
    each kind (metadata only), not 36 GETs; the member's warnings are the same as alone."""
    argv = ["describe", "job/train-workers-0", "-n", "ml", "-o", "json"]
    alone = json.loads(wlmap(argv, api=_busy_namespace(0)).out)["events"]
    api = _busy_namespace(12)
    r = wlmap(argv, api=api)
    assert r.code == 0, r.err
    events = json.loads(r.out)["events"]
    assert events == alone
    assert [w["objects"] for w in events["warnings"]] == [["train-workers-0-0"]]
    assert _by_name(api) == ["train-workers-0"]  # the Job described, nothing else
    # each kind counted first (a one-object list: 13 of each, few enough to list), then listed
    listed = [(p.rsplit("/", 1)[-1], q["limit"]) for p, q, a in api.calls if a and METADATA in a]
    assert listed == [(kind, n) for kind in ("pods", "jobs", "jobsets") for n in ("1", "500")]


def test_a_few_warned_objects_are_a_get_each(wlmap) -> None:
    api = _busy_namespace(2)
    r = wlmap(["describe", "job/train-workers-0", "-n", "ml", "-o", "json"], api=api)
    assert r.code == 0, r.err
    assert sorted(_by_name(api)) == [
        "other-1",
        "other-1-workers-0",
        "other-1-workers-0-0",
        "other-2",
        "other-2-workers-0",
        "other-2-workers-0-0",
        "train-workers-0",
    ]  # as before: each warned pod, its Job and its JobSet once
    assert not [p for p, _, accept in api.calls if accept and METADATA in accept]


def test_describe_type_places_the_warnings_of_all_its_workloads_with_one_reader(wlmap) -> None:
    """``describe TYPE``: the workloads share the namespace's reads: each kind listed once
    for all of them, not a GET per warned pod and per Job of each workload."""
    api = _busy_namespace(12)
    r = wlmap(["describe", "jobsets", "-n", "ml", "-o", "json"], api=api)
    assert r.code == 0, r.err
    items = json.loads(r.out)["items"]
    # each JobSet has its own pod's warning, and no other
    assert sorted(o for i in items for w in i["events"]["warnings"] for o in w["objects"]) == [
        f"{name}-workers-0-0" for name in sorted([*(f"other-{i}" for i in range(1, 13)), "train"])
    ]
    assert all(len(i["events"]["warnings"]) == 1 for i in items)
    assert [n for n in _by_name(api) if "/pods/" in n] == []
    assert len(_by_name(api)) <= 8  # was a pod and a Job per JobSet (26)


def test_without_warnings_no_chain_is_walked(wlmap) -> None:
    """A namespace without warnings has none to place: describe TYPE reads no owner of its
    workloads' pods (it read a GET of each JobSet's Job, then their list, for nothing)."""
    api = _busy_namespace(12, warned=False)
    r = wlmap(["describe", "jobsets", "-n", "ml", "-o", "json"], api=api)
    assert r.code == 0, r.err
    assert all(i["events"]["warnings"] == [] for i in json.loads(r.out)["items"])
    assert _by_name(api) == []
