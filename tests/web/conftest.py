"""Fixtures of the web view: an app over the bundled examples, and an HTTP client for it."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from workload_map.web import FileSource, WebSettings, build_app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TOKEN = "test-token-0123456789"
NOW = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)


class Http:
    """A synchronous face on aiohttp's test client (the tests stay plain functions)."""

    def __init__(self, client: TestClient, loop: asyncio.AbstractEventLoop) -> None:
        self.client = client
        self.loop = loop

    def request(self, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, str], str]:
        async def go() -> tuple[int, dict[str, str], str]:
            async with self.client.request(method, path, allow_redirects=False, **kwargs) as r:
                return r.status, dict(r.headers), await r.text()

        return self.loop.run_until_complete(go())

    def get(self, path: str, **kwargs: Any) -> tuple[int, dict[str, str], str]:
        return self.request("GET", path, **kwargs)


def make_http(source: Any) -> Iterator[Http]:
    loop = asyncio.new_event_loop()
    app = build_app(source, WebSettings(token=TOKEN, now=NOW))
    client = TestClient(TestServer(app, host="127.0.0.1"), loop=loop)
    loop.run_until_complete(client.start_server())
    client.session.cookie_jar.update_cookies({"wlmap_token": TOKEN})
    try:
        yield Http(client, loop)
    finally:
        loop.run_until_complete(client.close())
        loop.close()


@pytest.fixture
def examples_source() -> Iterator[FileSource]:
    source = FileSource(EXAMPLES, poll_seconds=0)
    yield source
    source.close()


@pytest.fixture
def http(examples_source: FileSource) -> Iterator[Http]:
    yield from make_http(examples_source)
