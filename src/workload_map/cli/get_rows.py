"""One row of ``wlmap get``: what the list and the watch both print (its own module so that
:mod:`~workload_map.cli.get_watch` does not import the command it serves)."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["Row"]


class Row(msgspec.Struct):
    view: dict[str, Any]
    type_label: str
    created: str
    obj: dict[str, Any] | None = None
    #: the kubeconfig context the row was read through (``get`` over several clusters)
    cluster: str | None = None

    @property
    def sort_key(self) -> tuple[str, str, str, str]:
        return (
            self.cluster or "",
            str(self.view.get("namespace") or ""),
            str(self.view["name"]),
            self.type_label,
        )

    @property
    def key(self) -> str:
        meta = self.view.get("metadata") or {}
        return str(meta.get("uid") or f"{self.type_label}/{self.sort_key}")
