"""What a call answers, its value or its error, so that a stand-in written for the start-up
path (kube.paths, kube.urls, the kubeconfig's base64) is compared with the standard library's
function on both."""

from __future__ import annotations

from collections.abc import Callable


def outcome(call: Callable[..., object], *args: object) -> tuple[str, object]:
    """What ``call(*args)`` answers: ``("value", value)``, or its error's type and message."""
    try:
        return "value", call(*args)
    except Exception as exc:  # the error itself is part of the answer
        return type(exc).__name__, str(exc)


__all__ = ["outcome"]
