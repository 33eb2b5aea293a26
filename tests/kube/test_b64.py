"""The kubeconfig's base64 fields are decoded as ``base64.b64decode(text, validate=False)``
decodes them (kube.kubeconfig decodes with binascii, without importing base64): the same bytes,
the same errors, on generated text."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.kube.answers import outcome
from workload_map.kube.kubeconfig import _b64decode

TEXT = st.text(
    st.sampled_from(["Q", "U", "J", "D", "z", "9", "+", "/", "=", "-", "_", " ", "\n", "é"])
)


@settings(max_examples=2000)
@given(TEXT)
def test_b64decode_is_base64s(text: str) -> None:
    assert outcome(_b64decode, text) == outcome(base64.b64decode, text)


def test_a_certificate_decodes() -> None:
    data = bytes(range(256)) * 3
    assert _b64decode(base64.b64encode(data).decode()) == data
