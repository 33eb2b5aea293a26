"""The aiohttp application of ``wlmap serve``: routes, the access guard, server-sent events.

Access: the server answers only requests whose ``Host`` is the loopback name it was opened as
(``127.0.0.1``, ``localhost``, ``[::1]``, or the explicit ``--address``), which defeats DNS
rebinding, and that carry the per-run token: once in the URL printed at start
(``/?token=…``), which sets an HttpOnly, SameSite=Strict cookie and redirects to drop it from
the address bar; no CORS headers are ever sent, so another page the user visits can neither read
a response nor send the cookie. Everything shown is escaped by Jinja2's autoescape.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hmac
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web

from workload_map.engine import Workload
from workload_map.errors import WlmapError
from workload_map.model import GVK
from workload_map.web import views
from workload_map.web.playground import MAX_INPUT, evaluate
from workload_map.web.source import Source

__all__ = ["COOKIE", "WebSettings", "build_app"]

log = logging.getLogger(__name__)  # a package name in a string counts as its import

COOKIE = "wlmap_token"
HERE = Path(__file__).resolve().parent
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")


@dataclass(frozen=True)
class WebSettings:
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    address: str = "127.0.0.1"
    #: a fixed "now" for ages (screenshot tests); None: the clock
    now: dt.datetime | None = None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_SOURCE: web.AppKey[Source] = web.AppKey("source", Source)
_SETTINGS: web.AppKey[WebSettings] = web.AppKey("settings", WebSettings)
_ENV: web.AppKey[jinja2.Environment] = web.AppKey("env", jinja2.Environment)


def _host_allowed(host: str, settings: WebSettings) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if host.startswith("[") and "]:" in host:
        name = host.split("]:", 1)[0] + "]"
    return name in LOOPBACK or name == settings.address


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    settings = request.app[_SETTINGS]
    if not _host_allowed(request.host, settings):
        return _refuse(request, 421, "This server only answers requests addressed to localhost.")
    given = request.query.get("token")
    if given is not None:
        if not hmac.compare_digest(given, settings.token):
            return _refuse(request, 403, "The token in this address is not this server's.")
        # drop the token from the address bar (and from any later Referer)
        query = {k: v for k, v in request.query.items() if k != "token"}
        target = request.rel_url.with_query(query)
        redirect = web.HTTPFound(str(target))
        redirect.set_cookie(COOKIE, settings.token, httponly=True, samesite="Strict", path="/")
        raise redirect
    cookie = request.cookies.get(COOKIE, "")
    bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
    if not (
        hmac.compare_digest(cookie, settings.token) or hmac.compare_digest(bearer, settings.token)
    ):
        return _refuse(
            request, 403, "Open the address `wlmap serve` printed (it carries the access token)."
        )
    response = await handler(request)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )
    return response


def _refuse(request: web.Request, status: int, message: str) -> web.Response:
    if request.path.startswith("/api/"):
        return web.json_response({"error": message}, status=status)
    return web.Response(text=message + "\n", status=status, content_type="text/plain")


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except Exception:  # a bug shows as a message in the page, never a stack trace
        log.exception("request %s failed", request.path)
        return _page(
            request,
            "error.html",
            {"title": "Error", "message": "This page failed to render; see the server's log."},
            status=500,
        )


def _now(request: web.Request) -> dt.datetime:
    return request.app[_SETTINGS].now or dt.datetime.now(dt.UTC)


def _page(
    request: web.Request, template: str, context: dict[str, Any], *, status: int = 200
) -> web.Response:
    env = request.app[_ENV]
    source = request.app[_SOURCE]
    html = env.get_template(template).render(
        mode=source.mode, path=request.path, query=dict(request.query), **context
    )
    return web.Response(text=html, status=status, content_type="text/html", charset="utf-8")


async def _workloads(request: web.Request) -> web.Response:
    source = request.app[_SOURCE]
    filters = views.Filters.parse(request.query)
    listing = await asyncio.to_thread(views.cluster_rows, source.clusters(), filters, _now(request))
    return _page(
        request,
        "workloads.html",
        {
            "title": "Workloads",
            "listing": listing,
            "phases": views.PHASE_ORDER,
            # a kind whose CRD is not installed is normal (the definitions page says so);
            # with several clusters, each cluster's problems apart
            "problem_groups": _problem_groups(source, listing.clusters),
        },
    )


async def _workload(request: web.Request) -> web.Response:
    source = request.app[_SOURCE]
    m = request.match_info
    group = "" if m["group"] == "core" else m["group"]
    namespace = "" if m["namespace"] == "_" else m["namespace"]
    gvk = GVK(group, m["version"], m["kind"])
    cluster = request.query.get("cluster", "")
    inventory = _inventory(source, cluster)
    entry = (
        None
        if inventory is None
        else await asyncio.to_thread(inventory.find, gvk, namespace, m["name"])
    )
    if entry is None:
        return _page(
            request,
            "error.html",
            {
                "title": "Not found",
                "message": f"No {gvk.kind} {namespace}/{m['name']} here"
                + (f" in cluster {cluster}" if cluster else "")
                + " "
                f"({gvk.api_version}): it does not exist, no definition covers it, or it is in "
                "a namespace you cannot read.",
            },
            status=404,
        )
    explain, events, events_note = await asyncio.to_thread(_details, source, entry)
    return _page(
        request,
        "workload.html",
        {
            "title": f"{entry.gvk.kind} {entry.name}",
            "entry": entry,
            "cluster": cluster,
            "phases": views._phases(entry.view),
            "vitals": views.vitals(entry),
            "graph": views.graph(entry),
            "unattributed": views.unattributed(entry),
            "explain": explain,
            "events": views.iter_events(events),
            "events_note": events_note,
            "raw": views.pretty(entry.obj),
            "age": views.age(
                (entry.obj.get("metadata") or {}).get("creationTimestamp"), _now(request)
            ),
        },
    )


_EXPLAINED: dict[str, tuple[Any, list[dict[str, Any]]]] = {}  # uid → (entry, explain)


def _details(
    source: Source, entry: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    memo = _EXPLAINED.get(entry.uid)
    if memo is not None and memo[0] is entry:  # the same evaluation: same explanation
        events, note = source.events(entry)
        return memo[1], events, note
    explain: list[dict[str, Any]] = []
    try:
        wl = Workload(
            entry.definition.karta,
            entry.obj,
            pods=list(entry.pods),
            definition_name=entry.definition.name,
            origin=entry.definition.origin,
            validate=False,
            file_mode=source.mode == "files",
            references=entry.resolution,  # the objects the inventory's evaluation bound
        )
        explain = [e for e in wl.explain() if isinstance(e, dict)]
    except WlmapError as exc:
        explain = [{"step": "error", "detail": str(exc)}]
    if len(_EXPLAINED) > 256:
        _EXPLAINED.clear()
    _EXPLAINED[entry.uid] = (entry, explain)
    events, note = source.events(entry)
    return explain, events, note


def _problem_groups(source: Source, clusters: list[str]) -> list[tuple[str, dict[str, str]]]:
    """(cluster, {what: why}) for each cluster with problems ("" with one cluster)."""
    groups: dict[str, dict[str, str]] = {}
    for key, problem in source.problems().items():
        if problem.cause == "not-served":
            continue
        cluster, _, what = key.partition(": ") if clusters else ("", "", key)
        groups.setdefault(cluster, {})[what] = problem.message
    return sorted(groups.items())


def _inventory(source: Source, cluster: str) -> Any:
    """The inventory of ``cluster`` ("" : the first, the only one with one cluster)."""
    clusters = source.clusters()
    if not cluster:
        return next(iter(clusters.values()))
    return clusters.get(cluster)


async def _definitions(request: web.Request) -> web.Response:
    source = request.app[_SOURCE]
    clusters = [c for c in source.clusters() if c]
    cluster = request.query.get("cluster", "") or (clusters[0] if clusters else "")
    inventory = _inventory(source, cluster)
    if inventory is None:
        return _page(
            request,
            "error.html",
            {"title": "Not found", "message": f"No cluster {cluster} is served."},
            status=404,
        )
    problems = source.problems()
    if cluster:  # that cluster's own, without its name in front
        problems = {
            k.removeprefix(f"{cluster}: "): v
            for k, v in problems.items()
            if k.startswith(f"{cluster}: ")
        }
    rows = await asyncio.to_thread(views.definition_rows, inventory, problems)
    return _page(
        request,
        "definitions.html",
        {"title": "Definitions", "rows": rows, "clusters": clusters, "cluster": cluster},
    )


def _generation(source: Source) -> int:
    return sum(inventory.generation for inventory in source.clusters().values())


async def _playground(request: web.Request) -> web.Response:
    return _page(request, "playground.html", {"title": "Playground", "limit": MAX_INPUT})


async def _playground_api(request: web.Request) -> web.Response:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        return web.json_response({"error": "the request body is not JSON"}, status=400)
    if not isinstance(body, dict):
        return web.json_response({"error": "expected a JSON object"}, status=400)
    fields = {k: body.get(k) or "" for k in ("workload", "pods", "karta")}
    if not all(isinstance(v, str) for v in fields.values()):
        return web.json_response({"error": "workload, pods and karta are text"}, status=400)
    result = await asyncio.to_thread(evaluate, fields["workload"], fields["pods"], fields["karta"])
    return web.json_response(result)


async def _events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: one ``change`` whenever the inventory changes (at most 2/s)."""
    source = request.app[_SOURCE]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    seen = _generation(source)
    await response.write(b"retry: 2000\n\n")
    try:
        while True:
            await asyncio.sleep(0.5)
            current = _generation(source)
            if current != seen:
                seen = current
                await response.write(f"event: change\ndata: {current}\n\n".encode())
            else:
                await response.write(b": keep-alive\n\n")
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    return response


async def _healthz(request: web.Request) -> web.Response:
    return web.Response(text="ok\n")


async def _not_found(request: web.Request) -> web.Response:
    return _page(
        request, "error.html", {"title": "Not found", "message": "No such page."}, status=404
    )


def build_app(source: Source, settings: WebSettings | None = None) -> web.Application:
    settings = settings or WebSettings()
    app = web.Application(middlewares=[_guard, _errors], client_max_size=MAX_INPUT * 4)
    app[_SOURCE] = source
    app[_SETTINGS] = settings
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.ChainableUndefined,  # data may lack any key
    )
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, sort_keys=True, default=str)
    app[_ENV] = env
    app.router.add_get("/", _workloads)
    app.router.add_get("/workloads", _workloads)
    app.router.add_get("/workloads/{group}/{version}/{kind}/{namespace}/{name}", _workload)
    app.router.add_get("/definitions", _definitions)
    app.router.add_get("/playground", _playground)
    app.router.add_post("/api/playground", _playground_api)
    app.router.add_get("/events", _events)
    app.router.add_get("/healthz", _healthz)
    app.router.add_static("/static", HERE / "static", show_index=False)
    app.router.add_route("*", "/{tail:.*}", _not_found)
    return app
