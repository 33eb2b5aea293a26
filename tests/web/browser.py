"""A real Chromium (Debian's package) driven by Playwright against a running ``wlmap serve`` app.

Playwright's own browser download cannot work here; Debian's ``chromium`` is installed by
hack/install-chromium.sh (``make chromium``). Screenshots are compared with reviewed goldens at a
fixed viewport, with the server's clock frozen, animations off and the project's fonts (DejaVu,
installed with chromium's dependencies); ``pytest tests/web --update-golden`` rewrites them after
a Chromium update.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port
from tests.web.conftest import NOW, TOKEN
from workload_map.web import WebSettings, build_app

CHROMIUM = os.environ.get("WLMAP_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--font-render-hinting=none",
    "--force-color-profile=srgb",
]
VIEWPORT = {"width": 1280, "height": 800}
#: a pixel counts as different when a channel differs by more than this …
CHANNEL_TOLERANCE = 24
#: … and a screenshot matches its golden while at most this share of pixels differ
PIXEL_TOLERANCE = 0.01


def chromium_or_fail() -> str:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"the browser tests need Chromium at {CHROMIUM}: run `make chromium` "
            "(hack/install-chromium.sh: apt as root) or set WLMAP_CHROMIUM",
            pytrace=False,
        )
    return CHROMIUM


@contextmanager
def serving(source: Any) -> Iterator[str]:
    """The web app on 127.0.0.1 in a thread; yields its base URL."""
    from aiohttp import web

    port = free_port()
    loop = asyncio.new_event_loop()
    started = threading.Event()
    runner = web.AppRunner(build_app(source, WebSettings(token=TOKEN, now=NOW)))

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(30)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = chromium_or_fail()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def compare_screenshot(png: bytes, golden: Path, update: bool) -> None:
    """Fails when more than PIXEL_TOLERANCE of the pixels differ from the golden."""
    import io

    from PIL import Image, ImageChops

    if update or not golden.exists():
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(png)
        if not update:
            pytest.fail(f"{golden} did not exist: written, review and commit it", pytrace=False)
        return
    got = Image.open(io.BytesIO(png)).convert("RGB")
    want = Image.open(golden).convert("RGB")
    if got.size != want.size:
        failed = golden.with_suffix(".actual.png")
        failed.write_bytes(png)
        pytest.fail(f"{golden.name}: size {got.size} != golden {want.size} (see {failed})")
    diff = (
        ImageChops.difference(got, want)
        .convert("L")
        .point(lambda v: 255 if v > CHANNEL_TOLERANCE else 0)
    )
    changed = diff.histogram()[255]  # the image is 0 (same) or 255 (changed) per pixel
    share = changed / (got.size[0] * got.size[1])
    if share > PIXEL_TOLERANCE:
        failed = golden.with_suffix(".actual.png")
        failed.write_bytes(png)
        pytest.fail(
            f"{golden.name}: {share:.2%} of pixels differ (tolerance {PIXEL_TOLERANCE:.0%}); "
            f"the new screenshot is {failed}; `pytest tests/web --update-golden` accepts it"
        )


def have_chromium() -> bool:
    return Path(CHROMIUM).is_file() or shutil.which("chromium") is not None
