"""The web view in a real headless Chromium: navigation, filters, the workload graph and gangs,
a live update, the playground, keyboard-only use, an XSS attempt, refusals, screenshots."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.web.browser import VIEWPORT, browser, compare_screenshot, serving
from tests.web.conftest import EXAMPLES, TOKEN
from workload_map.kube import ConnectionOptions
from workload_map.web import FileSource, MultiSource

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as b:
        yield b


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    folder = tmp_path / "workloads"
    shutil.copytree(EXAMPLES, folder)
    source = FileSource(folder, poll_seconds=0.3)
    with serving(source) as url:
        yield url, folder
    source.close()


@pytest.fixture
def page(chromium: Any, site: tuple[str, Path]) -> Iterator[Any]:
    context = chromium.new_context(viewport=VIEWPORT, reduced_motion="reduce")
    p = context.new_page()
    p.goto(f"{site[0]}/?token={TOKEN}")
    yield p
    context.close()


def test_navigation_graph_and_gangs(page: Any) -> None:
    assert page.title() == "Workloads · wlmap"
    page.get_by_role("link", name="llm-pretrain").click()
    page.wait_for_url("**/JobSet/ml-team/llm-pretrain")
    assert page.locator("svg.graph g.node-pod").count() == 5
    gang = page.locator("tr.gang-row")
    assert gang.count() == 1
    assert "short of the minimum" in gang.inner_text()
    assert page.locator("svg.graph g.gang").count() == 5  # every member highlighted
    page.get_by_role("link", name="Definitions").click()
    page.wait_for_url("**/definitions")
    assert page.get_by_role("cell", name="jobset-x-k8s-io-jobset-v1alpha2").count() == 1


def test_filters(page: Any) -> None:
    page.get_by_label("Kind").select_option("PyTorchJob")
    page.wait_for_url("**kind=PyTorchJob**")
    rows = page.locator("table.workloads tbody tr")
    assert rows.count() == 1 and "resnet-ddp" in rows.inner_text()
    page.get_by_role("searchbox", name="Search").fill("nothing-like-this")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**q=nothing-like-this**")
    assert "No workloads match." in page.locator("table.workloads").inner_text()


def test_live_update_when_a_pod_becomes_ready(page: Any, site: tuple[str, Path]) -> None:
    page.get_by_role("link", name="llm-pretrain").click()
    page.wait_for_url("**/llm-pretrain")
    from playwright.sync_api import expect

    pending = page.locator("svg.graph g.state-pending")  # pods not Ready (one is Pending)
    assert pending.count() == 2
    assert "short of the minimum" in page.locator("tr.gang-row").inner_text()
    pods_file = site[1] / "jobset/pods.yaml"
    doc = yaml.safe_load(pods_file.read_text())
    for item in doc["items"]:
        if item["kind"] == "Pod":
            item["status"] = {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}],
            }
            item["spec"].setdefault("nodeName", "gpu-node-9")
    pods_file.write_text(yaml.safe_dump(doc))
    # no reload: the server pushes a change event and the page swaps its content
    expect(pending).to_have_count(0, timeout=15000)
    expect(page.locator("tr.gang-row")).not_to_contain_text("short of the minimum")


def test_playground(page: Any) -> None:
    page.get_by_role("link", name="Playground").click()
    page.wait_for_url("**/playground")
    page.get_by_label("Workload (YAML or JSON)").fill((EXAMPLES / "jobset/jobset.yaml").read_text())
    page.get_by_label("Pods (optional").fill((EXAMPLES / "jobset/pods.yaml").read_text())
    from playwright.sync_api import expect

    expect(page.locator("#pg-status")).to_have_text(re.compile("^OK"), timeout=15000)
    assert '"desired": 5' in page.locator("#pg-view").inner_text()
    page.get_by_label("Workload (YAML or JSON)").fill("a: [unclosed")
    expect(page.locator("#pg-status")).to_contain_text("not valid YAML", timeout=15000)


def test_keyboard_only(page: Any) -> None:
    page.keyboard.press("Tab")  # the skip link
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "llm-pretrain":
            break
    else:
        pytest.fail("the first workload link is not reachable with Tab")
    page.keyboard.press("Enter")
    page.wait_for_url("**/llm-pretrain")
    assert page.get_by_role("heading", level=1).inner_text().startswith("JobSet")


def test_markup_in_a_label_stays_text(chromium: Any, tmp_path: Path) -> None:
    jobset = yaml.safe_load((EXAMPLES / "jobset/jobset.yaml").read_text())
    jobset["metadata"]["name"] = "xss"
    jobset["metadata"]["labels"] = {"evil": "<img src=x onerror=window.__pwned=1>"}
    (tmp_path / "js.yaml").write_text(yaml.safe_dump(jobset))
    source = FileSource(tmp_path, poll_seconds=0)
    with serving(source) as url:
        context = chromium.new_context(viewport=VIEWPORT)
        p = context.new_page()
        dialogs: list[str] = []
        p.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        p.goto(f"{url}/?token={TOKEN}")
        p.get_by_role("link", name="xss").click()
        p.wait_for_url("**/xss")
        p.get_by_text("Show the object as stored").click()
        assert "<img src=x onerror" in p.locator("pre.raw").inner_text()
        assert p.evaluate("window.__pwned === undefined")
        assert p.locator("main img").count() == 0 and not dialogs
        context.close()


def test_without_the_token_the_page_is_refused(chromium: Any, site: tuple[str, Path]) -> None:
    context = chromium.new_context()
    p = context.new_page()
    response = p.goto(f"{site[0]}/definitions")
    assert response is not None and response.status == 403
    assert "access token" in p.content()
    context.close()


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("workloads", "/"),
        ("workload-jobset", "/workloads/jobset.x-k8s.io/v1alpha2/JobSet/ml-team/llm-pretrain"),
        ("definitions", "/definitions"),
    ],
)
def test_screenshots_match_the_goldens(
    page: Any, site: tuple[str, Path], name: str, path: str, update_golden: bool
) -> None:
    page.goto(site[0] + path)
    page.wait_for_load_state("networkidle")
    # the fonts loaded (the document's own promise, not a sleep that a loaded machine outruns)
    assert page.evaluate("document.fonts.ready.then(() => document.fonts.status)") == "loaded"
    png = page.screenshot(full_page=False)
    compare_screenshot(png, GOLDEN / f"{name}.png", update_golden)


def test_several_clusters_have_a_cluster_column_and_filter(chromium: Any) -> None:
    """``wlmap serve --context prod --context lab``: the Cluster column, its filter and the link
    to a workload's page in its own cluster (each cluster a folder here)."""
    folders = {"prod": EXAMPLES / "jobset", "lab": EXAMPLES / "pytorchjob"}
    source = MultiSource(
        {name: ConnectionOptions(context=name) for name in folders},
        opener=lambda options, _ns, _timeout: FileSource(
            folders[str(options.context)], poll_seconds=0
        ),
    )
    try:
        with serving(source) as url:
            context = chromium.new_context(viewport=VIEWPORT, reduced_motion="reduce")
            page = context.new_page()
            page.goto(f"{url}/?token={TOKEN}")
            header = page.locator("table.workloads thead th").first
            assert header.inner_text().strip() == "Cluster"
            cells = page.locator("table.workloads tbody td.cluster")
            assert sorted(cells.all_inner_texts()) == ["lab", "prod"]
            page.get_by_label("Cluster").select_option("lab")
            page.get_by_role("button", name="Filter").click()
            page.wait_for_url("**cluster=lab**")
            rows = page.locator("table.workloads tbody tr")
            assert rows.count() == 1 and "resnet-ddp" in rows.inner_text()
            page.get_by_role("link", name="resnet-ddp").click()
            page.wait_for_url("**/resnet-ddp?cluster=lab")
            assert "cluster lab" in page.locator("p.meta").inner_text()
            context.close()
    finally:
        source.close()
