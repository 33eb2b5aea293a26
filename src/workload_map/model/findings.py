"""What validation reports: one :class:`Finding` per problem, with a JSON-style field path.

Kept apart from the rules so the schema checker, the CLI and the catalog share one shape.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from workload_map.model.views import View

__all__ = ["ERROR", "WARNING", "Finding", "FindingCode", "Severity"]

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"


class FindingCode(StrEnum):
    """Every finding code (stable for scripts and tests); str-valued, so JSON and text keep the
    code's spelling and callers branch on members, never on text."""

    ACTION_PATH_NOT_WRITABLE = "action-path-not-writable"
    ACTION_VALUE_NOT_JSON = "action-value-not-json"
    BOTH_POD_GROUP_FORMS = "both-pod-group-forms"
    CONDITIONS_WITHOUT_CONDITIONS_DEFINITION = "conditions-without-conditions-definition"
    CONDITIONS_WITHOUT_PATH = "conditions-without-path"
    CRD_INVALID = "crd-invalid"
    CRD_MISMATCH = "crd-mismatch"
    CRD_NO_SCHEMA = "crd-no-schema"
    DUPLICATE_COMPONENT = "duplicate-component"
    DUPLICATE_LIST_KEY = "duplicate-list-key"
    EMPTY_COMPONENT_NAME = "empty-component-name"
    EMPTY_MATCH_LABELS = "empty-match-labels"
    EMPTY_STATUS_MAPPING = "empty-status-mapping"
    EMPTY_STATUS_MATCHER = "empty-status-matcher"
    EXTENSION_COMPONENT = "extension-component"
    EXTENSION_EMPTY = "extension-empty"
    EXTENSION_NO_POD_GROUP = "extension-no-pod-group"
    EXTENSION_UNKNOWN = "extension-unknown"
    INCOMPLETE_KIND = "incomplete-kind"
    INSTANCE_ID_WITHOUT_SELECTOR = "instance-id-without-selector"
    INVALID_LABEL = "invalid-label"
    JQ_FORBIDDEN = "jq-forbidden"
    JQ_PARSE_ERROR = "jq-parse-error"
    KARTA_NIL = "karta-nil"
    METADATA_WITHOUT_POD_SPEC = "metadata-without-pod-spec"
    MISSING_FIELD = "missing-field"
    MISSING_OWNER_REF = "missing-owner-ref"
    MULTIPLE_SPEC_DEFINITIONS = "multiple-spec-definitions"
    NO_STATUS_MAPPINGS = "no-status-mappings"
    NOT_A_KARTA = "not-a-karta"
    OWNERSHIP_CYCLE = "ownership-cycle"
    PHASE_WITHOUT_PHASE_DEFINITION = "phase-without-phase-definition"
    REFERENCE_CYCLE = "reference-cycle"
    REFERENCE_FORBIDDEN_KIND = "reference-forbidden-kind"
    REFERENCE_IN_SELECTOR = "reference-in-selector"
    REFERENCE_INVALID = "reference-invalid"
    ROOT_KIND_INCOMPLETE = "root-kind-incomplete"
    ROOT_NO_STATUS = "root-no-status"
    ROOT_OWNER_REF = "root-owner-ref"
    SCALE_WITHOUT_PODS = "scale-without-pods"
    SCHEMA = "schema"
    SCHEMA_CHECK_SKIPPED = "schema-check-skipped"
    SCHEMA_TYPE_MISMATCH = "schema-type-mismatch"
    SCHEMA_UNKNOWN_FIELD = "schema-unknown-field"
    SELECTOR_NOT_POD_FIELD = "selector-not-pod-field"
    SELECTOR_WITHOUT_INSTANCE_ID = "selector-without-instance-id"
    STATUS_ON_CHILD = "status-on-child"
    SUBGROUP_WITHOUT_SCALE = "subgroup-without-scale"
    TOO_DEEP = "too-deep"
    TOPOLOGY_WITHOUT_LEVEL = "topology-without-level"
    TOPOLOGY_WITHOUT_NAME = "topology-without-name"
    TYPE_SELECTOR_EMPTY = "type-selector-empty"
    UNATTRIBUTABLE_COMPONENT = "unattributable-component"
    UNKNOWN_FIELD = "unknown-field"
    UNKNOWN_OWNER = "unknown-owner"
    UNKNOWN_POD_GROUP_MEMBER = "unknown-pod-group-member"
    UNKNOWN_SUBGROUP_COMPONENT = "unknown-subgroup-component"
    UNKNOWN_VARIABLE = "unknown-variable"
    UNSUPPORTED_VERSION = "unsupported-version"
    VALUE_WITHOUT_KEY_PATH = "value-without-key-path"
    VERSION_NOT_SERVED = "version-not-served"
    WRONG_TYPE = "wrong-type"


class Finding(View):
    """One problem or piece of advice about a definition.

    ``path`` is JSON-style (``spec.structureDefinition.childComponents[2].podSelector``);
    ``code`` is stable for scripts and tests; ``offset`` is the 0-based position of the fault in
    the jq expression at ``path`` when the finding concerns one.
    """

    path: str
    code: FindingCode
    severity: Severity
    message: str
    component: str | None = None
    offset: int | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def __str__(self) -> str:
        where = self.path or "(definition)"
        extra = []
        if self.component is not None:
            extra.append(f"component {self.component!r}")
        if self.offset is not None:
            extra.append(f"at position {self.offset}")
        suffix = f" [{', '.join(extra)}]" if extra else ""
        return f"{where}: {self.message}{suffix} ({self.code})"
