"""Free TCP ports on 127.0.0.1 for servers the tests start as child processes: the harness's
``hack.localkube.ports`` (where the reasoning is), under the name the tests import."""

from __future__ import annotations

from hack.localkube.ports import free_port

__all__ = ["free_port"]
