"""``urllib.parse``'s answers for the server URL and the request targets of a command.

A live command splits its server's URL once and quotes each request's path and query.
``urllib.parse`` (its named tuples, and the ``ipaddress`` it imports) is about 4M instructions
of a live ``get`` (callgrind, docs/cli.md) for that. These functions answer exactly what
``urlsplit``, ``quote`` and ``urlencode`` answer (``tests/kube/test_urls.py`` compares them on
generated text), by the same steps; what they do not cover (a non-ASCII or bracketed URL, a
query that is not pairs of strings) is handed to ``urllib.parse`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["encode_query", "hostname_of", "port_of", "quote", "split_url"]

_ALWAYS_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
#: what ``urlsplit`` strips from the front (C0 controls and space) and removes everywhere
_C0_OR_SPACE = "".join(map(chr, range(33)))
_UNSAFE = ("\t", "\r", "\n")


def split_url(url: str) -> tuple[str, str, str]:
    """``urlsplit(url)``'s scheme, netloc and path."""
    if not url.isascii() or "[" in url or "]" in url:  # IPv6 hosts, IDNA checks: urllib's
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        return parts.scheme, parts.netloc, parts.path
    url = url.lstrip(_C0_OR_SPACE)
    for unsafe in _UNSAFE:
        url = url.replace(unsafe, "")
    scheme = netloc = ""
    i = url.find(":")
    if i > 0 and url[0].isalpha() and _SCHEME_CHARS.issuperset(url[:i]):
        scheme, url = url[:i].lower(), url[i + 1 :]
    if url[:2] == "//":
        ends = [e for e in (url.find(c, 2) for c in "/?#") if e >= 0]
        end = min(ends) if ends else len(url)
        netloc, url = url[2:end], url[end:]
    url = url.partition("#")[0]
    return scheme, netloc, url.partition("?")[0]


def hostname_of(netloc: str) -> str | None:
    """``SplitResult.hostname`` of a netloc :func:`split_url` gave."""
    hostinfo = netloc.rpartition("@")[2]
    _, bracket, inside = hostinfo.partition("[")
    host = inside.partition("]")[0] if bracket else hostinfo.partition(":")[0]
    if not host:
        return None
    name, percent, zone = host.partition("%")  # an IPv6 zone keeps its case
    return name.lower() + percent + zone


def port_of(netloc: str) -> int | None:
    """``SplitResult.port`` of a netloc :func:`split_url` gave (raises ``ValueError`` as it)."""
    hostinfo = netloc.rpartition("@")[2]
    _, bracket, inside = hostinfo.partition("[")
    port = inside.partition("]")[2].partition(":")[2] if bracket else hostinfo.partition(":")[2]
    if not port:
        return None
    if not (port.isdigit() and port.isascii()):
        raise ValueError(f"Port could not be cast to integer value as {port!r}")
    number = int(port)
    if not 0 <= number <= 65535:
        raise ValueError("Port out of range 0-65535")
    return number


def quote(text: str, safe: str = "/") -> str:
    """``urllib.parse.quote(text, safe)``: UTF-8 bytes outside the safe set as ``%XX``."""
    data = text.encode("utf-8")  # strict: a lone surrogate raises, as in quote
    keep = _ALWAYS_SAFE.union(safe.encode("ascii", "ignore"))
    if keep.issuperset(data):
        return text
    return "".join(chr(b) if b in keep else f"%{b:02X}" for b in data)


def _quote_plus(text: str) -> str:
    if " " not in text:
        return quote(text, "")
    return quote(text, " ").replace(" ", "+")


def encode_query(query: Sequence[tuple[str, str]]) -> str:
    """``urllib.parse.urlencode(list(query))``."""
    pairs = list(query)
    if not all(type(p) is tuple and len(p) == 2 and type(p[0]) is type(p[1]) is str for p in pairs):
        from urllib.parse import urlencode

        return urlencode(pairs)
    return "&".join(f"{_quote_plus(k)}={_quote_plus(v)}" for k, v in pairs)
