"""The describe table renderer on hand-built views (independent of the engine's numbers)."""

from __future__ import annotations

from workload_map.cli.describe_view import RenderOptions, render_describe
from workload_map.cli.humanize import age, cpu, human_duration, memory
from workload_map.cli.render import Styler, format_table, visible_len, wants_color


def _pod(
    name: str,
    ready: bool = True,
    phase: str = "Running",
    node: str | None = "n1",
    gpus: int = 8,
    reason: str | None = None,
) -> dict:
    out = {"name": name, "phase": phase, "ready": ready, "node": node, "gpus": gpus}
    if reason:
        out["reason"] = reason
    return out


def _view(pods: list[dict], file_mode: bool = False) -> dict:
    workers = {
        "name": "workers",
        "component": "replicatedjob",
        "instance": "workers",
        "kind": {"group": "batch", "version": "v1", "kind": "Job"},
        "replicas": {
            "desired": len(pods),
            "current": None if file_mode else len(pods),
            "ready": None if file_mode else sum(p["ready"] for p in pods),
            "min": None,
            "max": None,
        },
        "resources": {
            "gpus": 8 * len(pods),
            "cpuMillis": 4000 * len(pods),
            "memoryBytes": 2**30 * len(pods),
        },
        "pods": [] if file_mode else pods,
        "children": [],
    }
    driver = {
        "name": "driver",
        "component": "replicatedjob",
        "instance": "driver",
        "kind": {"group": "batch", "version": "v1", "kind": "Job"},
        "replicas": {
            "desired": 1,
            "current": None if file_mode else 1,
            "ready": None if file_mode else 1,
        },
        "resources": {"gpus": 0, "cpuMillis": 500, "memoryBytes": 1500 * 10**6},
        "pods": [] if file_mode else [_pod("d-0", gpus=0)],
        "children": [],
    }
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "name": "train",
        "namespace": "ml",
        "uid": "u",
        "definition": {"name": "jobset-x-k8s-io-jobset-v1alpha2", "origin": "catalog"},
        "fileMode": file_mode,
        "phases": ["Running"],
        "pods": {
            "desired": len(pods) + 1,
            "current": None if file_mode else len(pods) + 1,
            "ready": None if file_mode else sum(p["ready"] for p in pods) + 1,
        },
        "resources": {
            "gpus": 8 * len(pods),
            "cpuMillis": 4000 * len(pods) + 500,
            "memoryBytes": 2**30 * len(pods) + 1500 * 10**6,
            "byResource": {"nvidia.com/gpu": 8 * len(pods), "example.com/fpga": 2},
        },
        "components": [driver, workers],
        "podGroups": [
            {
                "name": "pg-u",
                "minMember": len(pods) + 1,
                "pods": [p["name"] for p in pods] + ["d-0"],
                "subGroups": [],
            }
        ],
        "unattributedPods": ["stray-0"],
    }


def test_tree_layout() -> None:
    pods = [
        _pod("w-0"),
        _pod("w-1", ready=False, phase="Pending", node=None, reason="Unschedulable"),
    ]
    text = render_describe(_view(pods), RenderOptions(age="5m"))
    lines = text.splitlines()
    assert lines[0] == (
        "JobSet/train   namespace: ml   definition: "
        "jobset-x-k8s-io-jobset-v1alpha2 (catalog)   age: 5m"
    )
    assert lines[1].startswith("|-- driver (replicatedjob, Job)")
    assert lines[2].startswith("|   `-- d-0")
    assert lines[3].startswith("`-- workers (replicatedjob, Job)")
    assert "1/2 ready" in lines[3] and "gpu: 16" in lines[3] and "nodes: n1" in lines[3]
    assert lines[4].startswith("    |-- w-0") and "gpu: 8" in lines[4]
    assert lines[5].startswith("    `-- w-1") and "Pending (Unschedulable)" in lines[5]
    assert lines[5].rstrip().endswith("<none>")
    # the columns after the tree line up
    assert lines[1].index("1/1 ready") == lines[3].index("1/2 ready")
    assert "Phase: Running" in text
    assert "Pods: 2/3 ready, 3 active" in text
    assert "example.com/fpga=2" in text
    assert "stray-0" in text and "Gangs:" in text and "pg-u" in text
    assert "\x1b[" not in text


def test_resources_table() -> None:
    text = render_describe(_view([_pod("w-0"), _pod("w-1")]), RenderOptions())
    table = text[text.index("Resources:") :].splitlines()
    assert table[1].split() == ["COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY"]
    assert table[2].split() == ["driver", "1", "0", "500m", "1500M"]
    assert table[3].split() == ["workers", "2", "16", "8", "2Gi"]
    assert table[4].split()[:3] == ["TOTAL", "3", "16"]


def test_file_mode() -> None:
    view = _view([_pod("w-0")], file_mode=True)
    text = render_describe(view, RenderOptions(age="5m"))
    # the phase came from the file: only the pods are unknown
    assert "(file mode: status from the file, no pods)" in text
    undefined = render_describe({**view, "phases": ["Undefined"]}, RenderOptions())
    assert "(file mode: no live status)" in undefined
    assert "age:" not in text
    assert "replicas: 1" in text


def test_pod_limit_keeps_unhealthy_first() -> None:
    pods = [_pod(f"w-{i}") for i in range(6)] + [_pod("bad", ready=False, phase="Failed")]
    text = render_describe(_view(pods), RenderOptions(pod_limit=2))
    assert "bad" in text
    assert "... and 5 more (1 unhealthy shown)" in text
    pods = [_pod(f"x-{i}", ready=False, phase="Pending") for i in range(4)]
    text = render_describe(_view(pods), RenderOptions(pod_limit=2))
    assert "... and 2 more (2 of 4 unhealthy shown)" in text


def test_component_limit_keeps_problems() -> None:
    pods = [_pod("w-0", ready=False, phase="Pending")]
    text = render_describe(_view(pods), RenderOptions(component_limit=1))
    assert "workers" in text and "|-- driver" not in text
    assert "... and 1 more components" in text


def test_colour_only_when_asked() -> None:
    text = render_describe(_view([_pod("w-0")]), RenderOptions(style=Styler(True)))
    assert "\x1b[1m" in text


class _Tty:
    def isatty(self) -> bool:
        return True


def test_wants_color() -> None:
    assert wants_color(_Tty(), {})  # type: ignore[arg-type]
    assert not wants_color(_Tty(), {"NO_COLOR": ""})  # type: ignore[arg-type]
    assert not wants_color(_Tty(), {"TERM": "dumb"})  # type: ignore[arg-type]


def test_humanize() -> None:
    assert [
        human_duration(s)
        for s in (
            5,
            150,
            3600 * 5 + 60 * 12,
            3600 * 30,
            86400 * 3 + 3600 * 4,
            86400 * 400,
            86400 * 365 * 3 + 86400 * 3,
        )
    ] == ["5s", "2m30s", "5h12m", "30h", "3d4h", "400d", "3y3d"]
    assert age(None) == "<unknown>" and age("garbage") == "<unknown>"
    assert (cpu(0), cpu(500), cpu(2000), cpu(1500)) == ("0", "500m", "2", "1500m")
    assert (memory(2**30), memory(512 * 2**20), memory(1500 * 10**6), memory(1001)) == (
        "1Gi",
        "512Mi",
        "1500M",
        "1001",
    )


def test_format_table() -> None:
    assert format_table(["A", "BB"], [["xxx", "1"], ["y", "22"]]) == [
        "A     BB",
        "xxx   1",
        "y     22",
    ]


def test_pending_pod_shows_the_schedulers_message() -> None:
    pending = _pod("w-1", ready=False, phase="Pending", node=None, reason="Unschedulable")
    pending["message"] = "0/16 nodes are available:\n 16 Insufficient nvidia.com/gpu."
    text = render_describe(_view([_pod("w-0"), pending]), RenderOptions())
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "w-1" in line)
    assert "Pending (Unschedulable)" in lines[at]
    # on the next line, under the pod, flattened to one line
    assert lines[at + 1].strip() == "0/16 nodes are available: 16 Insufficient nvidia.com/gpu."
    running = _pod("w-2")
    running["message"] = "not shown for a running pod"
    assert "not shown" not in render_describe(_view([running]), RenderOptions())


def test_a_cell_s_width_is_its_visible_text_with_or_without_colour() -> None:
    # plain cells are measured without the colour pattern (every cell of a table)
    assert visible_len("Running") == 7
    assert visible_len("\x1b[32mRunning\x1b[0m") == 7
    assert visible_len("\x1b[1;31mFailed\x1b[0m x") == 8
    coloured = format_table(["A", "B"], [["\x1b[32mok\x1b[0m", "1"], ["longer", "2"]])
    plain = format_table(["A", "B"], [["ok", "1"], ["longer", "2"]])
    assert [line.replace("\x1b[32m", "").replace("\x1b[0m", "") for line in coloured] == plain
