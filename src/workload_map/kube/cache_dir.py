"""The folder a command keeps what it remembers between runs (discovery, kubeconfig parses).

Its own module: the kubeconfig reader and the discovery cache both use it, and the discovery
cache sits above the request path, which the kubeconfig reader is below.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["cache_root"]


def cache_root(cache_dir: str | None, environ: Mapping[str, str]) -> Path | None:
    """The cache folder: ``--cache-dir`` (an empty value turns the cache off: None), else
    ``$XDG_CACHE_HOME/workload-map``, else ``$HOME/.cache/workload-map``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser() if cache_dir else None
    xdg = environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "workload-map"
    home = environ.get("HOME") or os.path.expanduser("~")
    if not home or home == "~":
        return None
    return Path(home) / ".cache" / "workload-map"
