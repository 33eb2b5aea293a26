"""``wlmap serve`` over several clusters (issue 25 item 4): a Cluster column and filter, each
workload page in its own cluster, each cluster's problems apart, a cluster that cannot be
served reported without stopping the others. The clusters here are folders of files, one per
context (the live form runs on two API servers in tests/integration/test_many_clusters.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.conftest import EXAMPLES, Http, make_http
from workload_map.kube import ConnectionOptions
from workload_map.web import FileSource, MultiSource
from workload_map.web.source import SourceError

FOLDERS = {"prod": EXAMPLES / "jobset", "lab": EXAMPLES / "pytorchjob"}


def _opener(options: ConnectionOptions, namespaces: tuple[str, ...], timeout: float) -> Any:
    folder = FOLDERS.get(str(options.context))
    if folder is None:
        raise SourceError(f'context "{options.context}" not found in kubeconfig')
    return FileSource(folder, poll_seconds=0)


@pytest.fixture
def multi() -> Iterator[MultiSource]:
    source = MultiSource(
        {n: ConnectionOptions(context=n) for n in ("prod", "lab", "gone")}, opener=_opener
    )
    yield source
    source.close()


@pytest.fixture
def many(multi: MultiSource) -> Iterator[Http]:
    yield from make_http(multi)


def _rows(body: str) -> list[tuple[str, str]]:
    """(cluster, name) of each listed workload."""
    return re.findall(r'<td class="cluster">([^<]*)</td>\s*<td><a href="[^"]*">([^<]*)</a>', body)


def test_the_list_has_a_cluster_column_and_filter(many: Http) -> None:
    status, _, body = many.get("/")
    assert status == 200
    assert '<a href="?cluster=&amp;namespace=' in body or ">Cluster</a>" in body
    assert sorted(_rows(body)) == [("lab", "resnet-ddp"), ("prod", "llm-pretrain")]
    assert '<option value="prod"' in body and '<option value="lab"' in body
    _, _, body = many.get("/?cluster=lab")
    assert _rows(body) == [("lab", "resnet-ddp")]
    _, _, body = many.get("/?sort=cluster&dir=desc")
    assert [c for c, _ in _rows(body)] == ["prod", "lab"]


def test_a_workload_page_is_read_in_its_own_cluster(many: Http) -> None:
    _, _, body = many.get("/")
    link = re.search(r'href="(/workloads/[^"]*resnet-ddp\?cluster=lab)"', body)
    assert link is not None
    status, _, page = many.get(link.group(1).replace("&amp;", "&"))
    assert status == 200 and "cluster lab" in page and "resnet-ddp" in page
    # the same path in the other cluster: not there
    status, _, _ = many.get(link.group(1).replace("cluster=lab", "cluster=prod"))
    assert status == 404
    status, _, _ = many.get(link.group(1).replace("cluster=lab", "cluster=nowhere"))
    assert status == 404


def test_each_clusters_problems_are_reported_apart(many: Http, multi: MultiSource) -> None:
    problems = multi.problems()
    assert set(problems) == {"gone: connection"}
    assert "not found in kubeconfig" in problems["gone: connection"].message
    _, _, body = many.get("/")
    assert 'data-cluster="gone"' in body and "Cluster gone:" in body


def test_definitions_per_cluster(many: Http) -> None:
    status, _, body = many.get("/definitions?cluster=lab")
    assert status == 200 and '<option value="lab" selected' in body
    status, _, _ = many.get("/definitions?cluster=nowhere")
    assert status == 404


def test_no_cluster_at_all_is_an_error() -> None:
    with pytest.raises(SourceError, match="no context could be served: gone: "):
        MultiSource({"gone": ConnectionOptions(context="gone")}, opener=_opener)


def test_one_cluster_keeps_the_page_as_it_was(http: Http) -> None:
    _, _, body = http.get("/")
    assert 'class="cluster"' not in body and ">Cluster</a>" not in body
