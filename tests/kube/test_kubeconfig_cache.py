"""A kubeconfig's parse kept between commands (kube.kubeconfig_cache): the second resolution
of an unchanged file needs no PyYAML and gives the same configuration; the cache holds no value
of the file; a changed file, a broken cache file or a document the skeleton cannot hold is
parsed with PyYAML, as before."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.kube import kubeconfig_cache
from workload_map.kube.kubeconfig import kubeconfig_needs_yaml, resolve
from workload_map.kube.options import ConnectionOptions

SECRET = "s3cr3t-token-value"
KEY = base64.b64encode(b"-----BEGIN PRIVATE KEY-----\nprivate\n").decode()

# as kubectl writes one (go-yaml), with quoting, an empty value and a comment added by hand
KUBECONFIG = f"""\
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {base64.b64encode(b"ca").decode()}
    server: "https://k.example:6443"
    insecure-skip-tls-verify: false
  name: prod
- cluster: {{server: 'https://dev.example', tls-server-name: dev}}
  name: dev
contexts:
- context:
    cluster: prod
    namespace: team-a   # the team's namespace
    user: admin
  name: prod
- context: {{cluster: dev, user: admin}}
  name: dev
current-context: prod
kind: Config
preferences: {{}}
users:
- name: admin
  user:
    client-key-data: {KEY}
    token: {SECRET}
    as-groups: [ops, "dev ops"]
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: get-token
      args: ["--cluster", prod]
      env: null
      interactiveMode: Never
      provideClusterInfo: true
      installHint: 3
"""


def _options(path: Path, root: Path, **kw: Any) -> ConnectionOptions:
    return ConnectionOptions(kubeconfig=str(path), cache_dir=str(root), environ={}, **kw)


@pytest.fixture
def no_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML cannot be imported (``import yaml`` raises ImportError)."""
    monkeypatch.setitem(sys.modules, "yaml", None)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_second_resolution_needs_no_yaml_and_agrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kc = _write(tmp_path / "config", KUBECONFIG)
    root = tmp_path / "cache"
    assert kubeconfig_needs_yaml(_options(kc, root))
    first = resolve(_options(kc, root))
    assert not kubeconfig_needs_yaml(_options(kc, root))
    monkeypatch.setitem(sys.modules, "yaml", None)  # PyYAML is not touched any more
    for context in (None, "dev"):
        again = resolve(_options(kc, root, context=context))
        monkeypatch.delitem(sys.modules, "yaml")
        parsed = resolve(_options(kc, tmp_path / ("plain" + str(context)), context=context))
        monkeypatch.setitem(sys.modules, "yaml", None)
        assert again == parsed
    assert resolve(_options(kc, root)) == first
    assert first.token == SECRET and first.namespace == "team-a"
    assert first.impersonation.groups == ("ops", "dev ops")


def test_the_cache_holds_no_value_of_the_file(tmp_path: Path) -> None:
    kc = _write(tmp_path / "config", KUBECONFIG)
    root = tmp_path / "cache"
    resolve(_options(kc, root))
    (kept,) = (root / "kubeconfig").iterdir()
    text = kept.read_text()
    for value in (SECRET, KEY, "k.example", "admin", "get-token", "team-a"):
        assert value not in text
    assert oct(kept.stat().st_mode & 0o777) == oct(0o600)


def test_a_changed_file_is_parsed_again(tmp_path: Path, no_yaml: None) -> None:
    kc = _write(tmp_path / "config", KUBECONFIG)
    root = tmp_path / "cache"
    with pytest.raises(ImportError):  # no PyYAML: the first parse needs it
        resolve(_options(kc, root))
    del sys.modules["yaml"]
    resolve(_options(kc, root))
    # the same size, another token: the file's CRC-32 tells it apart
    _write(kc, KUBECONFIG.replace(SECRET, SECRET.upper()))
    assert kubeconfig_needs_yaml(_options(kc, root))
    assert resolve(_options(kc, root)).token == SECRET.upper()
    assert not kubeconfig_needs_yaml(_options(kc, root))


@pytest.mark.parametrize(
    "document",
    [
        'apiVersion: "v\\u0031"\n',  # an escape: the value is not its text
        "apiVersion: >\n  folded\n  text\n",
        "expiry: 2026-12-01T00:00:00Z\n",  # a timestamp JSON cannot hold
        "a: 1\na: 2\n",  # a duplicate key
        "x: .nan\n",
    ],
)
def test_a_document_the_skeleton_cannot_hold_is_not_kept(tmp_path: Path, document: str) -> None:
    root = tmp_path / "cache"
    kc = _write(tmp_path / "config", document)
    data = kc.read_bytes()
    loader = yaml.CSafeLoader(document)
    node = loader.get_single_node()
    value = loader.construct_document(node)
    assert kubeconfig_cache.skeleton(node, value, document) is None
    kubeconfig_cache.store(root, kc, data, None)
    assert kubeconfig_cache.load(root, kc, data, document) is None  # None is stored as is


@pytest.mark.parametrize(
    "document",
    [
        KUBECONFIG,
        "a: [1, -2, 3.5, true, null, ~, 'q', \"d\", 'it''s']\nb: {c: {d: [[], {}]}}\n",
        "é: ünïcödé\nlist:\n- 'ß'\n- \"日本\"\n",
        "1: one\nyes: on\n",
        "base: &b {server: x}\nother:\n  <<: *b\n  name: o\n",  # merged, then kept
        "---\n# only a comment\n",
    ],
)
def test_a_skeleton_rebuilds_the_document(tmp_path: Path, document: str) -> None:
    root = tmp_path / "cache"
    kc = _write(tmp_path / "config", document)
    data = kc.read_bytes()
    expected = yaml.load(document, Loader=yaml.CSafeLoader)
    loader = yaml.CSafeLoader(document)
    node = loader.get_single_node()
    if node is None:
        assert expected is None
        return
    kept = kubeconfig_cache.skeleton(node, loader.construct_document(node), document)
    if kept is None:  # some documents are not kept; never a wrong one
        return
    kubeconfig_cache.store(root, kc, data, kept)
    assert kubeconfig_cache.load(root, kc, data, document) == expected


def test_a_broken_cache_file_is_ignored_and_rewritten(tmp_path: Path) -> None:
    kc = _write(tmp_path / "config", KUBECONFIG)
    root = tmp_path / "cache"
    expected = resolve(_options(kc, root))
    (kept,) = (root / "kubeconfig").iterdir()
    for broken in (b"{not json", b'{"format": 1, "key": 3}', b"[]", b'{"format": 99}'):
        kept.write_bytes(broken)
        assert kubeconfig_needs_yaml(_options(kc, root))
        assert resolve(_options(kc, root)) == expected
    assert not kubeconfig_needs_yaml(_options(kc, root))


def test_no_cache_folder_no_cache(tmp_path: Path) -> None:
    kc = _write(tmp_path / "config", KUBECONFIG)
    options = ConnectionOptions(kubeconfig=str(kc), cache_dir="", environ={})
    resolve(options)
    assert kubeconfig_needs_yaml(options)
    assert os.listdir(tmp_path) == ["config"]
