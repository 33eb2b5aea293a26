"""The watch cache's own additions around the library informer, without a server: backoff
between failed calls, the dict-only list/watch function and keys."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map.kube.cache import Informer, _Backoff, object_key


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


class _DownClient:
    """An ApiClient whose every request fails as when the API server is gone."""

    def __init__(self) -> None:
        self.calls = 0

    def param_serialize(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return ("GET", "https://127.0.0.1:1/x", {}, None, None)

    def call_api(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise ConnectionRefusedError("connection refused")


def test_failures_count_towards_backoff_and_a_success_resets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = _DownClient()
    informer = Informer(client, "/api/v1/configmaps", kind="ConfigMap", api_version="v1")
    waits: list[float] = []
    monkeypatch.setattr(informer.stopping, "wait", lambda t: waits.append(t) or False)
    for _ in range(3):
        with pytest.raises(ConnectionRefusedError):
            informer._list_or_watch()
    assert client.calls == 3 and informer._backoff.failures == 3
    assert waits[0] > 0 and waits[1] > waits[0] / 2  # the 2nd and 3rd call waited first
    monkeypatch.setattr(informer, "_paged_list", lambda: "listed")
    assert informer._list_or_watch() == "listed"
    assert informer._backoff.failures == 0
