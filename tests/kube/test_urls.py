"""kube.urls answers what urllib.parse answers, errors included, on generated text (the server
URL a command connects to and the request targets it sends are built from these)."""

from __future__ import annotations

from urllib.parse import quote, urlencode, urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.kube.answers import outcome
from workload_map.kube import urls

#: URL text made of what urlsplit's rules are about: scheme and netloc delimiters, userinfo,
#: ports, brackets, zones, controls and spaces, case, and a little non-ASCII
PIECES = st.sampled_from(
    [
        "https",
        "HTTP",
        "h+t.p-s",
        "1x",
        ":",
        "//",
        "/",
        "?",
        "#",
        "@",
        "[",
        "]",
        "::1",
        "%eth0",
        "%25",
        "Host.Example",
        "127.0.0.1",
        "6443",
        "99999",
        "-1",
        "٣",
        "é",
        " ",
        "\t",
        "\n",
        "\x00",
        "a b",
        "~",
        ";",
    ]
)
URLS = st.lists(PIECES, max_size=10).map("".join)


def _theirs(url: str) -> object:
    parts = urlsplit(url)
    port = outcome(getattr, parts, "port")
    return (parts.scheme, parts.netloc, parts.path), parts.hostname, port


def _ours(url: str) -> object:
    scheme, netloc, path = urls.split_url(url)
    return (scheme, netloc, path), urls.hostname_of(netloc), outcome(urls.port_of, netloc)


@settings(max_examples=2000)
@given(URLS)
def test_split_url_is_urlsplit(url: str) -> None:
    assert outcome(_ours, url) == outcome(_theirs, url)


def test_split_url_of_the_usual_servers() -> None:
    for url in (
        "https://127.0.0.1:6443",
        "https://api.cluster.example.com",
        "http://LOCALHOST:8080/prefix/",
        "https://user:pw@host:443/a?b#c",
        "https://[fe80::1%25eTh0]:6443",
        " https://host:0",
        "https://host:65536",
        "https://host:x",
        "https://[::1",
    ):
        assert outcome(_ours, url) == outcome(_theirs, url), url


TEXT = st.text(
    st.sampled_from(
        ["a", "Z", "0", "/", " ", "+", "%", "&", "=", "?", "~", "é", "😀", "\x7f", ":"]
    ),
    max_size=12,
)


@settings(max_examples=1000)
@given(TEXT, st.sampled_from(["", "/", "/:@!$&'()*+,;=-._~%", "é/"]))
def test_quote_is_urllib_quote(text: str, safe: str) -> None:
    assert urls.quote(text, safe) == quote(text, safe)


@settings(max_examples=1000)
@given(st.lists(st.tuples(TEXT, TEXT), max_size=4))
def test_encode_query_is_urlencode(pairs: list[tuple[str, str]]) -> None:
    assert urls.encode_query(pairs) == urlencode(pairs)


def test_what_is_not_pairs_of_strings_is_urllibs_to_encode() -> None:
    for query in ([("limit", 500)], [("a", "b", "c")], ["ab"], [(b"k", "v")]):
        assert outcome(urls.encode_query, query) == outcome(urlencode, query)
    assert outcome(urls.quote, "\ud800")[0] == "UnicodeEncodeError"
