"""A kind's watch problem reaches the web view as data (cause, status), and the definitions page
decides no-permission / CRD-missing on that, never on the error's text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubernetes.client.exceptions import ApiException

from tests.web.conftest import EXAMPLES, make_http
from workload_map.cluster.feed import NOT_SERVED, FeedProblem
from workload_map.cluster.inventory import Inventory
from workload_map.kube.errors import ApiError, Unreachable, api_error
from workload_map.web import FileSource
from workload_map.web.views import definition_rows, problem_state

JOBSET = "jobset.x-k8s.io/v1alpha2, Kind=JobSet"
PATH = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-403/jobsets"


def test_the_cause_comes_from_the_errors_type_and_status() -> None:
    forbidden = FeedProblem.of(api_error(403, b"", PATH))
    assert (forbidden.cause, forbidden.status) == ("forbidden", 403)
    gone = FeedProblem.of(api_error(404, b"", PATH))
    assert (gone.cause, gone.status) == ("not-found", 404)
    assert FeedProblem.of(api_error(401, b"", PATH)).cause == "unauthorized"
    assert FeedProblem.of(api_error(500, b"", PATH)).cause == "error"
    # the client's own exception, not yet turned into ours: its status still decides
    assert FeedProblem.of(ApiException(status=403, reason="Forbidden")).cause == "forbidden"
    assert FeedProblem.of(Unreachable("cannot reach the cluster")).status is None


def test_text_that_reads_like_a_status_decides_nothing() -> None:
    # the failure that made CI red elsewhere: a namespace, a path, a timestamp ",403" in a text
    misleading = [
        ApiError(500, f"the API server answered 500 for {PATH}"),
        Unreachable("watch of /apis/x/v1/widgets at 14:26:23,403: forbidden-words 404"),
        RuntimeError("not allowed to guess: 403 404 not served"),
    ]
    for err in misleading:
        problem = FeedProblem.of(err)
        assert problem.cause == "error" and problem_state(problem) == "error", err
        assert problem.message == str(err)  # the text is kept for people, unread by code
    # and a refusal whose text says nothing of permissions is still one (its status decides)
    assert problem_state(FeedProblem.of(ApiError(403, "the watch ended"))) == "no-permission"
    assert problem_state(FeedProblem.of(ApiError(404, "the watch ended"))) == "crd-missing"


def test_each_cause_has_its_state() -> None:
    assert problem_state(None) == "ok"
    assert problem_state(NOT_SERVED) == "crd-missing"
    assert problem_state(FeedProblem("gone", "not-found", 404)) == "crd-missing"
    assert problem_state(FeedProblem("no", "forbidden", 403)) == "no-permission"
    assert problem_state(FeedProblem("who?", "unauthorized", 401)) == "error"
    assert problem_state(FeedProblem("boom", "error", 500)) == "error"


def _row(rows: list[dict[str, Any]], gvk: str) -> dict[str, Any]:
    return next(r for r in rows if r["in_force"] and str(r["gvk"]) == gvk)


def test_definition_rows_carry_the_state_and_the_message() -> None:
    inventory = Inventory()
    rows = definition_rows(inventory, {JOBSET: FeedProblem.of(api_error(403, b"", PATH))})
    row = _row(rows, JOBSET)
    assert row["state"] == "no-permission"
    assert row["problem"] == f"forbidden: cannot read {PATH}"
    others = [r for r in rows if r["in_force"] and str(r["gvk"]) != JOBSET]
    assert others and all(r["state"] == "ok" and r["problem"] is None for r in others)
    rows = definition_rows(inventory, {JOBSET: NOT_SERVED})
    assert _row(rows, JOBSET)["state"] == "crd-missing"


class _Problems(FileSource):
    def __init__(self, problems: dict[str, FeedProblem]) -> None:
        super().__init__(EXAMPLES, poll_seconds=0)
        self._given = problems

    def problems(self) -> dict[str, FeedProblem]:
        return dict(self._given)


def _pages(problems: dict[str, FeedProblem]) -> Iterator[tuple[str, str]]:
    source = _Problems(problems)
    try:
        for http in make_http(source):
            yield http.get("/")[2], http.get("/definitions")[2]
    finally:
        source.close()


def test_the_pages_show_messages_and_leave_out_kinds_not_served() -> None:
    problems = {
        JOBSET: FeedProblem.of(api_error(403, b"", PATH)),
        "kubeflow.org/v1, Kind=PyTorchJob": NOT_SERVED,
    }
    for listing, definitions in _pages(problems):
        # the workloads page: the refusal, not the kind the cluster simply does not serve
        assert "1 kinds or files could not be read" in listing
        assert f"forbidden: cannot read {PATH}" in listing
        assert "not served by the cluster" not in listing
        assert "no permission" in definitions and "CRD missing" in definitions
