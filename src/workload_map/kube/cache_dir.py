"""The folder a command keeps what it remembers between runs (discovery, kubeconfig parses).

Its own module: the kubeconfig reader and the discovery cache both use it, and the discovery
cache sits above the request path, which the kubeconfig reader is below.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from workload_map.kube.paths import expand, join

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["cache_folder", "cache_root"]


def cache_folder(cache_dir: str | None, environ: Mapping[str, str]) -> str | None:
    """The cache folder: ``--cache-dir`` (an empty value turns the cache off: None), else
    ``$XDG_CACHE_HOME/workload-map``, else ``$HOME/.cache/workload-map`` (as ``str`` of the
    ``Path`` :func:`cache_root` answers: a command does not import pathlib for it)."""
    if cache_dir is not None:
        return expand(cache_dir) if cache_dir else None
    xdg = environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return join(xdg, "workload-map")
    home = environ.get("HOME") or os.path.expanduser("~")
    if not home or home == "~":
        return None
    return join(home, ".cache", "workload-map")


def cache_root(cache_dir: str | None, environ: Mapping[str, str]) -> Path | None:
    """:func:`cache_folder` as a ``Path``."""
    from pathlib import Path

    folder = cache_folder(cache_dir, environ)
    return None if folder is None else Path(folder)
