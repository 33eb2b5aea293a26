"""The watch cache without a server: backoff between failed calls (counted, not timed) and
keys."""

from __future__ import annotations

from typing import Any

from workload_map.kube.cache import Informer, _Backoff, object_key
from workload_map.kube.errors import ApiError, Forbidden, Unauthorized, Unreachable


def test_backoff_grows_exponentially_with_jitter_and_caps() -> None:
    b = _Backoff(base=0.5, cap=4.0)
    assert b.delay() == 0.0
    seen = []
    for failures in range(1, 8):
        b.failures = failures
        d = b.delay()
        raw = min(4.0, 0.5 * 2 ** (failures - 1))
        assert raw / 2 <= d <= raw
        seen.append(d)
    assert max(seen) <= 4.0


def test_object_key() -> None:
    assert object_key({"metadata": {"name": "a", "namespace": "n"}}) == "n/a"
    assert object_key({"metadata": {"name": "a"}}) == "a"


class _DownSource:
    """A request path whose every request fails as when the API server is gone."""

    def __init__(self) -> None:
        self.calls = 0

    def get(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise Unreachable("cannot reach the cluster at https://127.0.0.1:1: connection refused")

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise Unreachable("cannot reach the cluster at https://127.0.0.1:1: connection refused")


def test_failures_count_towards_backoff_and_a_success_resets() -> None:
    source = _DownSource()
    informer = Informer(source, "/api/v1/configmaps", kind="ConfigMap", api_version="v1")
    waits: list[float] = []

    def wait(timeout: float) -> bool:  # the backoff's sleep, counted instead of slept
        waits.append(timeout)
        return len(waits) >= 3  # then stop

    informer.stopping.wait = wait  # type: ignore[method-assign]
    informer._run()
    assert source.calls == 3 and informer._backoff.failures == 3
    assert isinstance(informer.last_error, Unreachable) and not informer.synced
    assert waits[0] > 0 and waits[1] > waits[0] / 2  # the 2nd and 3rd try waited first
    # a list that works resets the count (and the error)
    source.get = lambda *a, **k: {"metadata": {"resourceVersion": "5"}, "items": []}  # type: ignore[method-assign]
    informer._list()
    assert informer._backoff.failures == 0 and informer.last_error is None and informer.synced


def test_watches_that_end_at_once_back_off_instead_of_spinning() -> None:
    class Quiet:
        def __init__(self) -> None:
            self.watches = 0

        def get(self, *args: Any, **kwargs: Any) -> Any:
            return {"metadata": {"resourceVersion": "5"}, "items": []}

        def stream(self, *args: Any, **kwargs: Any) -> Any:
            self.watches += 1
            return iter(())  # the server ends the watch before any event

    source = Quiet()
    informer = Informer(source, "/api/v1/configmaps")
    waits: list[float] = []

    def wait(timeout: float) -> bool:
        waits.append(timeout)
        return len(waits) >= 4

    informer.stopping.wait = wait  # type: ignore[method-assign]
    informer._run()
    assert informer.lists == 1 and source.watches == 4  # listed once, then only watched
    assert all(w > 0 for w in waits) and informer._backoff.failures == 4


class _RefusingSource:
    """A request path whose every list is answered with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def get(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error


def _one_round(informer: Informer) -> None:
    """One try of the informer's loop, then stop (its backoff's sleep counted, not slept)."""
    informer.stopping.wait = lambda timeout: True  # type: ignore[method-assign]
    informer._run()


def test_a_refused_list_is_an_answer_an_unreachable_server_is_not() -> None:
    """wait_answered is what a caller waiting for several caches uses so that one cache the
    server refuses for good (401, 403, 404) does not hold it until its timeout, while a
    server that cannot be reached (or fails, 5xx) may still come back within it."""
    for error, answered in (
        (Unauthorized(401, "Unauthorized"), True),
        (Forbidden(403, "pods is forbidden"), True),
        (ApiError(404, "the server could not find the requested resource"), True),
        (ApiError(503, "the server is shutting down"), False),
        (Unreachable("cannot reach the cluster at https://127.0.0.1:1: refused"), False),
    ):
        informer = Informer(_RefusingSource(error), "/api/v1/pods", kind="Pod", api_version="v1")
        assert not informer.wait_answered(0)
        _one_round(informer)
        assert informer.wait_answered(0) is answered, error
        assert not informer.synced and isinstance(informer.last_error, type(error))
    # a list that works answers too
    good = Informer(_RefusingSource(Unreachable("x")), "/api/v1/pods")
    good.source.get = lambda *a, **k: {"metadata": {"resourceVersion": "5"}, "items": []}  # type: ignore[method-assign]
    good._list()
    assert good.wait_answered(0) and good.synced
