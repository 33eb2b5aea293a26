"""The describe table: header, component/pod tree, phase, resources, gangs, leftover pods,
and the errors the engine met (a bad quantity or expression must not pass unseen).

Input is the ``Workload.describe()`` dict (INTERFACES.md shape) so the table can never say
something the JSON does not. Tree lines use ``|-- `` / backtick ``-- `` like the reference;
columns after the tree are aligned; long pod lists are cut with unhealthy pods kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from workload_map.cli.humanize import cpu, memory_column
from workload_map.cli.render import Styler, format_table

__all__ = ["RenderOptions", "render_describe"]


class RenderOptions(msgspec.Struct, frozen=True):
    pod_limit: int = 20  # 0 = all
    component_limit: int = 0  # 0 = all
    age: str | None = None
    style: Styler = msgspec.field(default_factory=lambda: Styler(False))


def _int(value: Any) -> int:
    """A count of the describe view (schemas/describe.schema.json: an integer or null)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _pod_unhealthy(pod: dict[str, Any]) -> bool:
    return not pod.get("ready") and pod.get("phase") != "Succeeded"


def _subtree_pods(comp: dict[str, Any]) -> list[dict[str, Any]]:
    pods = list(comp.get("pods") or [])
    for child in comp.get("children") or []:
        pods.extend(_subtree_pods(child))
    return pods


_MESSAGE_WIDTH = 160


def _pending_message(pod: dict[str, Any]) -> str | None:
    """Why a Pending pod waits (e.g. "0/16 nodes are available: 16 Insufficient
    nvidia.com/gpu"), cut to one readable line; None for other pods."""
    message = pod.get("message")
    if pod.get("phase") != "Pending" or not isinstance(message, str) or not message.strip():
        return None
    text = " ".join(message.split())
    return text if len(text) <= _MESSAGE_WIDTH else text[: _MESSAGE_WIDTH - 3] + "..."


def _component_rank(comp: dict[str, Any], file_mode: bool) -> int:
    """0: has unhealthy pods, 1: pods missing, 2: fine (the order kept under a limit)."""
    if any(_pod_unhealthy(p) for p in _subtree_pods(comp)):
        return 0
    replicas = comp.get("replicas") or {}
    current = replicas.get("current")
    if not file_mode and current is not None and _int(current) < _int(replicas.get("desired")):
        return 1
    return 2


def _limit(items: list[Any], limit: int, rank: Any) -> tuple[list[Any], list[Any]]:
    if limit <= 0 or len(items) <= limit:
        return items, []
    order = sorted(range(len(items)), key=lambda i: (rank(items[i]), i))
    keep = set(order[:limit])
    return [x for i, x in enumerate(items) if i in keep], [
        x for i, x in enumerate(items) if i not in keep
    ]


class _Tree:
    def __init__(self, view: dict[str, Any], opts: RenderOptions) -> None:
        self.view = view
        self.opts = opts
        # Without known pods there are no live counts to show, only the spec's replicas.
        self.file_mode = (view.get("pods") or {}).get("current") is None
        self.rows: list[tuple[str, list[str]]] = []  # (tree label, columns)

    def add_components(self, comps: Sequence[dict[str, Any]], indent: str) -> None:
        shown, hidden = _limit(
            list(comps), self.opts.component_limit, lambda c: _component_rank(c, self.file_mode)
        )
        entries: list[tuple[str, Any]] = [("component", c) for c in shown]
        if hidden:
            entries.append(("more-components", hidden))
        for index, (what, item) in enumerate(entries):
            last = index == len(entries) - 1
            branch = "`-- " if last else "|-- "
            child_indent = indent + ("    " if last else "|   ")
            if what == "component":
                self.rows.append((indent + branch + self._label(item), self._columns(item)))
                self.add_children(item, child_indent)
            else:
                bad = sum(1 for c in item if _component_rank(c, self.file_mode) < 2)
                note = f" ({bad} with problems)" if bad else ""
                self.rows.append((f"{indent}{branch}... and {len(item)} more components{note}", []))

    def add_children(self, comp: dict[str, Any], indent: str) -> None:
        """The component's pods (cut to the pod limit), then its sub-components."""
        pods = list(comp.get("pods") or [])
        children = list(comp.get("children") or [])
        shown, hidden = _limit(pods, self.opts.pod_limit, lambda p: 0 if _pod_unhealthy(p) else 1)
        lines: list[tuple[str, list[str], str | None]] = [
            (str(p.get("name")), self._pod_columns(p), _pending_message(p)) for p in shown
        ]
        if hidden:
            shown_bad = sum(1 for p in shown if _pod_unhealthy(p))
            all_bad = shown_bad + sum(1 for p in hidden if _pod_unhealthy(p))
            if all_bad == shown_bad:
                note = f"{shown_bad} unhealthy shown"
            else:
                note = f"{shown_bad} of {all_bad} unhealthy shown"
            lines.append((f"... and {len(hidden)} more ({note})", [], None))
        for index, (text, columns, message) in enumerate(lines):
            last = index == len(lines) - 1 and not children
            self.rows.append((indent + ("`-- " if last else "|-- ") + text, columns))
            if message:  # the scheduler's words, under the pod they are about
                under = indent + ("    " if last else "|   ")
                self.rows.append((f"{under}  {self.opts.style(message, 'dim')}", []))
        if children:
            self.add_components(children, indent)

    def _label(self, comp: dict[str, Any]) -> str:
        name = str(comp.get("name") or comp.get("component") or "?")
        component = comp.get("component")
        kind = comp.get("kind") or {}
        detail = []
        if component and component != name:
            detail.append(str(component))
        if isinstance(kind, dict) and kind.get("kind"):
            detail.append(str(kind["kind"]))
        label = self.opts.style(name, "bold")
        return f"{label} ({', '.join(detail)})" if detail else label

    def _columns(self, comp: dict[str, Any]) -> list[str]:
        replicas = comp.get("replicas") or {}
        desired = _int(replicas.get("desired"))
        if self.file_mode:
            state = f"replicas: {desired}"
        else:
            ready = _int(replicas.get("ready"))
            current = replicas.get("current")
            state = f"{ready}/{desired} ready"
            if current is not None and _int(current) != ready:
                state += f", {_int(current)} pod{'' if _int(current) == 1 else 's'}"
            if ready < desired:
                state = self.opts.style(state, "yellow")
        gpus = _int((comp.get("resources") or {}).get("gpus"))
        nodes = comp.get("nodes")
        if nodes is None:
            nodes = sorted({str(p["node"]) for p in comp.get("pods") or [] if p.get("node")})
        return [state, f"gpu: {gpus}" if gpus else "", _nodes(nodes)]

    def _pod_columns(self, pod: dict[str, Any]) -> list[str]:
        phase = str(pod.get("phase") or "Unknown")
        reason = pod.get("reason")
        state = phase
        if not pod.get("ready") and phase == "Running":
            state = "Running, not ready"
        if reason:
            state += f" ({reason})"
        styled = (
            self.opts.style.phase(state)
            if not _pod_unhealthy(pod)
            else self.opts.style(state, "red" if phase in ("Failed", "Unknown") else "yellow")
        )
        gpus = _int(pod.get("gpus"))
        node = pod.get("node")
        return [styled, f"gpu: {gpus}" if gpus else "", str(node) if node else "<none>"]

    def lines(self) -> list[str]:
        table = [[label, *cols] for label, cols in self.rows]
        width = max((len(r) for r in table), default=1)
        padded = [r + [""] * (width - len(r)) for r in table]
        if not padded:
            return []
        # a row with no columns (a "... and N more" note) must not widen the first column
        notes = {i for i, (_, cols) in enumerate(self.rows) if not cols}
        aligned = format_table([""] * width, [r for i, r in enumerate(padded) if i not in notes])
        out, it = [], iter(aligned[1:])
        for i, (label, _) in enumerate(self.rows):
            out.append(label if i in notes else next(it))
        return out


def _nodes(nodes: Sequence[str]) -> str:
    if not nodes:
        return ""
    shown = list(nodes)[:3]
    extra = len(nodes) - len(shown)
    return "nodes: " + ",".join(shown) + (f",+{extra} more" if extra else "")


def _own(comp: dict[str, Any]) -> dict[str, int]:
    """A component's own request: its total minus its children's (a grouping row is skipped)."""
    res = comp.get("resources") or {}
    own = {k: _int(res.get(k)) for k in ("gpus", "cpuMillis", "memoryBytes")}
    kids = [c.get("resources") or {} for c in comp.get("children") or []]
    if kids:
        less = {k: own[k] - sum(_int(r.get(k)) for r in kids) for k in own}
        if all(v >= 0 for v in less.values()):
            return less
    return own


def _resource_rows(
    comps: Sequence[dict[str, Any]],
    depth: int,
    rows: list[list[str]],
    mem: list[int],
    prefix: str = "",
) -> None:
    """One row per component (memory kept apart: the column is formatted in one unit)."""
    for comp in comps:
        children = comp.get("children") or []
        name = prefix + str(comp.get("name"))
        grouping = not comp.get("kind") and not comp.get("pods") and children
        if grouping:
            # a grouping row has no request of its own: name its children through it
            _resource_rows(children, depth, rows, mem, f"{name}/")
            continue
        own = _own(comp)
        replicas = _int((comp.get("replicas") or {}).get("desired"))
        below = sum(_int((c.get("replicas") or {}).get("desired")) for c in children)
        if children and replicas - below >= 0:
            replicas -= below  # children's pods are counted on their own rows
        rows.append(
            [
                "  " * depth + name,
                str(replicas),
                str(own["gpus"]),
                cpu(own["cpuMillis"]),
            ]
        )
        mem.append(own["memoryBytes"])
        _resource_rows(children, depth + 1, rows, mem)


def _pod_group_lines(groups: Sequence[dict[str, Any]], style: Styler) -> list[str]:
    rows: list[list[str]] = []

    def add(group: dict[str, Any], prefix: str) -> None:
        pods = [
            str(p) if not isinstance(p, dict) else str(p.get("name"))
            for p in group.get("pods") or []
        ]
        min_member = group.get("minMember")
        members = ", ".join(pods[:2]) + (f", +{len(pods) - 2} more" if len(pods) > 2 else "")
        rows.append(
            [
                prefix + str(group.get("name")),
                "-" if min_member is None else str(min_member),
                str(len(pods)),
                members or "<none>",
            ]
        )
        for sub in group.get("subGroups") or []:
            add(sub, prefix + "  ")

    for group in groups:
        add(group, "")
    return format_table(["POD GROUP", "MIN MEMBERS", "PODS", "MEMBERS"], rows)


def render_describe(view: dict[str, Any], opts: RenderOptions) -> str:
    """The whole table view as text (newline-terminated)."""
    style = opts.style
    file_mode = bool(view.get("fileMode"))
    name = f"{view.get('kind')}/{view.get('name')}"
    header = [style(name, "bold")]
    if view.get("namespace"):
        header.append(f"namespace: {view['namespace']}")
    definition = view.get("definition") or {}
    if definition:
        header.append(
            f"definition: {definition.get('name') or '<unnamed>'} ({definition.get('origin')})"
        )
    if opts.age and not file_mode:
        header.append(f"age: {opts.age}")
    lines = ["   ".join(header)]
    if file_mode:
        lines.append(
            (
                "(file mode: no live status)"
                if [str(p) for p in view.get("phases") or []] in ([], ["Undefined"])
                else "(file mode: status from the file, no pods)"
            )
            if view.get("pods", {}).get("current") is None
            else "(file mode: pods from a file)"
        )
    tree = _Tree(view, opts)
    tree.add_components(view.get("components") or [], "")
    lines.extend(tree.lines())
    phases = [str(p) for p in view.get("phases") or []]
    if phases and (not file_mode or phases != ["Undefined"]):
        lines.append("")
        lines.append(f"Phase: {style.phase(','.join(phases))}")
    pods = view.get("pods") or {}
    if pods.get("current") is not None:
        # current counts active pods only; finished or terminating ones are listed but said apart
        states: dict[str, int] = {}
        for comp in view.get("components") or []:
            for pod in _subtree_pods(comp):
                state = pod.get("state")
                if state in ("Succeeded", "Failed"):
                    states["finished"] = states.get("finished", 0) + 1
                elif state == "Terminating":
                    states["terminating"] = states.get("terminating", 0) + 1
        extra = "".join(f", {n} {what}" for what, n in states.items())
        lines.append(
            f"Pods: {_int(pods.get('ready'))}/{_int(pods.get('desired'))} ready, "
            f"{_int(pods.get('current'))} active{extra}; "
            f"{_int(pods.get('pending'))} pending, {_int(pods.get('held'))} held"
        )
    rows: list[list[str]] = []
    mem: list[int] = []
    _resource_rows(view.get("components") or [], 0, rows, mem)
    total = view.get("resources") or {}
    rows.append(
        [
            "TOTAL",
            str(_int(pods.get("desired"))),
            str(_int(total.get("gpus"))),
            cpu(_int(total.get("cpuMillis"))),
        ]
    )
    mem.append(_int(total.get("memoryBytes")))
    # one unit for the whole column, so TOTAL never reads 2Ti under rows of 2056Gi
    for row, text in zip(rows, memory_column(mem), strict=True):
        row.append(text)
    lines.append("")
    lines.append("Resources:")
    lines.extend(
        "  " + line
        for line in format_table(["COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY"], rows)
    )
    extended = {
        k: v for k, v in (total.get("byResource") or {}).items() if k != "nvidia.com/gpu" and v
    }
    if extended:
        lines.append("  other: " + ", ".join(f"{k}={v}" for k, v in sorted(extended.items())))
    if pods.get("current") is not None:
        lines.append("")
        lines.extend("  " + line for line in _usage_lines(view, pods, total))
    groups = view.get("podGroups") or []
    if groups:
        lines.append("")
        lines.append("Gangs:")
        lines.extend("  " + line for line in _pod_group_lines(groups, style))
    references = [r for r in view.get("references") or [] if isinstance(r, dict)]
    if references:
        lines.append("")
        lines.append("References:")
        lines.extend(
            "  " + line
            for line in format_table(
                ["NAME", "OBJECT", "FOUND"],
                [
                    [
                        f"${r.get('name')}",
                        _reference_object(r),
                        str(r.get("found"))
                        if not r.get("problem")
                        else f"{r.get('found')} ({r.get('reason')})",
                    ]
                    for r in references
                ],
            )
        )
    leftover = view.get("unattributedPods") or []
    reasons = view.get("unattributedReasons")
    reasons = reasons if isinstance(reasons, dict) else {}
    if leftover:
        lines.append("")
        lines.append(
            f"Unattributed pods ({len(leftover)}): candidates this workload does not claim"
        )
        for pod in leftover:
            entry = pod if isinstance(pod, dict) else {"name": pod, "reason": reasons.get(str(pod))}
            reason = entry.get("reason")
            lines.append(f"  {entry.get('name')}" + (f"  ({reason})" if reason else ""))
    errors = [str(e) for e in view.get("errors") or []]
    if errors:
        lines.append("")
        lines.append(style(f"Errors ({len(errors)}):", "red", "bold") + " what could not be read")
        lines.extend(f"  {message}" for message in errors)
    return "\n".join(lines) + "\n"


def _reference_object(ref: dict[str, Any]) -> str:
    """``Kind/name`` (``in ns``) of a reference's view, ``<none>`` when nothing was asked."""
    kind = str(ref.get("kind") or "").rpartition(" ")[2]
    if not kind:
        return "<none>"
    name = ref.get("objectName")
    where = f" in {ref['namespace']}" if ref.get("namespace") else ""
    return (f"{kind}/{name}" if name else f"{kind} (list)") + where


def _usage_lines(
    view: Mapping[str, Any], pods: Mapping[str, Any], requested: Mapping[str, Any]
) -> list[str]:
    """Requested, pending and held side by side (engine/summary.py's vocabulary): pods, GPUs,
    CPU and memory, in the numbers the exporter and the web view show."""
    pending = view.get("pendingResources") or {}
    held = view.get("heldResources") or {}
    sides = (requested, pending, held)
    mem = memory_column([_int(s.get("memoryBytes")) for s in sides])
    rows = [
        [
            "pods",
            str(_int(pods.get("desired"))),
            str(_int(pods.get("pending"))),
            str(_int(pods.get("held"))),
        ],
        ["GPU", *(str(_int(s.get("gpus"))) for s in sides)],
        ["CPU", *(cpu(_int(s.get("cpuMillis"))) for s in sides)],
        ["MEMORY", *mem],
    ]
    return format_table(["USAGE", "REQUESTED", "PENDING", "HELD"], rows)
