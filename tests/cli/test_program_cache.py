"""The definitions' jq programs are kept between commands (``cli.context``, ``jq.trees``): a
second command rebuilds them instead of parsing them and answers the same; a damaged or
foreign cache file is only a miss; ``--cache-dir ""`` keeps nothing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from tests.cli.http_fake import serve, write_kubeconfig
from tests.fresh import fresh_python

# the command in a fresh interpreter, counting the programs the jq parser parses
_RUN = """
import io, json, sys
from workload_map.jq import parser
parsed = []
real = parser._Parser.__init__
def spy(self, source, *args):
    parsed.append(source)
    real(self, source, *args)
parser._Parser.__init__ = spy
from workload_map.cli.main import main
out = io.StringIO()
code = main(sys.argv[1:], stdout=out, stderr=io.StringIO())
print(json.dumps([code, out.getvalue(), len(parsed)]))
"""


def _get(home: Path, *args: str) -> tuple[int, str, int]:
    done = fresh_python(_RUN, *args, home=home, check=True)
    code, output, parsed = json.loads(done.stdout.splitlines()[-1])
    return code, output, parsed


def _api() -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    return api


def test_a_second_command_rebuilds_the_programs_the_first_parsed(tmp_path: Path) -> None:
    with serve(_api()) as (server, _):
        kubeconfig = str(write_kubeconfig(tmp_path / "kc", server, namespace="ml"))
        first = _get(tmp_path, "get", "jobsets", "--kubeconfig", kubeconfig)
        kept = tmp_path / ".cache" / "workload-map" / "jq-programs.marshal"
        assert kept.is_file()
        second = _get(tmp_path, "get", "jobsets", "--kubeconfig", kubeconfig)
        kept.write_bytes(b"not marshal data")
        damaged = _get(tmp_path, "get", "jobsets", "--kubeconfig", kubeconfig)
        kept.unlink()
        off = _get(tmp_path, "get", "jobsets", "--kubeconfig", kubeconfig, "--cache-dir", "")
    assert first[0] == 0 and "train" in first[1], first
    assert first[2] > 0
    assert second == (first[0], first[1], 0)  # the same answer, nothing parsed
    assert damaged == first  # a miss: parsed again
    assert off == first and not kept.exists()  # no cache folder: nothing kept
