"""Kubernetes label syntax (keys are qualified names, values are ≤63-character names).

Written after ``k8s.io/apimachinery/pkg/util/validation`` so that a ``matchLabels`` the validator
accepts is one an API server and a label selector accept too.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workload_map.model.findings import Finding

__all__ = ["label_key_errors", "label_value_errors", "match_label_findings"]

# patterns, not compiled ones: ``re.fullmatch`` compiles each on first use (and keeps it), so a
# command that validates no label does not pay their compilation (2M instructions at import)
_NAME_FMT = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_MAX = 63
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*"
_DNS1123_SUBDOMAIN_MAX = 253
_VALUE = rf"({_NAME_FMT})?"

_NAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    f"alphanumeric character (regex used for validation is '{_NAME_FMT}')"
)
_PREFIX_RULE = (
    "must be a lowercase RFC 1123 subdomain: lowercase alphanumeric characters, '-' or '.', "
    "starting and ending with an alphanumeric character"
)


def label_key_errors(key: str) -> list[str]:
    """Why ``key`` is not a valid label key (a qualified name); empty when valid."""
    errors: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            if len(prefix) > _DNS1123_SUBDOMAIN_MAX:
                errors.append(
                    f"prefix part must be no more than {_DNS1123_SUBDOMAIN_MAX} characters"
                )
            if not re.fullmatch(_DNS1123_SUBDOMAIN, prefix):
                errors.append(f"prefix part {_PREFIX_RULE}")
    else:
        return [
            "a qualified name must consist of an optional DNS subdomain prefix and '/' "
            "followed by a name (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    else:
        if len(name) > _NAME_MAX:
            errors.append(f"name part must be no more than {_NAME_MAX} characters")
        if not re.fullmatch(_NAME_FMT, name):
            errors.append(f"name part {_NAME_RULE}")
    return errors


def label_value_errors(value: str) -> list[str]:
    """Why ``value`` is not a valid label value; empty when valid (the empty value is valid)."""
    errors: list[str] = []
    if len(value) > _NAME_MAX:
        errors.append(f"must be no more than {_NAME_MAX} characters")
    if not re.fullmatch(_VALUE, value):
        errors.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', "
            f"'_' or '.', and must start and end with an alphanumeric character (regex used for "
            f"validation is '({_NAME_FMT})?')"
        )
    return errors


def match_label_findings(
    path: str, key: str, value: str, component: str | None = None
) -> list[Finding]:
    """The INVALID_LABEL findings of one ``matchLabels`` entry at ``path`` (a component's
    selector and a reference's list say the same)."""
    from workload_map.model.findings import ERROR, Finding, FindingCode

    out = [
        Finding(
            path,
            FindingCode.INVALID_LABEL,
            ERROR,
            f"matchLabels key: Invalid value: {json.dumps(key)}: {why}",
            component,
        )
        for why in label_key_errors(key)
    ]
    out.extend(
        Finding(
            path,
            FindingCode.INVALID_LABEL,
            ERROR,
            f"matchLabels value: Invalid value: {json.dumps(value)}: {why}",
            component,
        )
        for why in label_value_errors(value)
    )
    return out
