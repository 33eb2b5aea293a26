"""Runs a command from an unpacked image's root file system the way the chart runs the pod.

The root is the image's own tree, bind-mounted read-only in a private mount namespace, with a
writable /tmp (the chart's emptyDir), /proc and the host's /dev; the process is chrooted there
and runs as uid/gid 65532 with no supplementary groups, an empty capability bounding set, no
inheritable capabilities and no_new_privs (``capabilities: drop: [ALL]``,
``allowPrivilegeEscalation: false``). The network namespace is the host's, so the process
reaches the harness API server on loopback. Root only: chroot and mounts need it.
"""

from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path

__all__ = ["UID", "box_argv", "unpack"]

UID = 65532

# run by the host's interpreter as root inside the new mount namespace: chroot, drop every
# capability from the bounding set, no_new_privs, then become 65532 and exec the image's file
_LAUNCH = """
import ctypes, os, sys
root, uid, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
libc = ctypes.CDLL(None, use_errno=True)
os.chroot(root)
os.chdir("/")
cap = 0
while libc.prctl(24, cap, 0, 0, 0) == 0:  # PR_CAPBSET_DROP until past the last capability
    cap += 1
if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
    raise SystemExit("no_new_privs refused")
os.setgroups([])
os.setgid(uid)
os.setuid(uid)
env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
       "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
os.execve(argv[0], argv, env)
"""

_MOUNTS = (
    'set -e; R="$1"; T="$2"; shift 2; mount --make-rprivate /; '
    'mount --bind "$R" "$R"; mount -o remount,bind,ro "$R"; '
    'mount --bind "$T" "$R/tmp"; mount -t proc proc "$R/proc"; mount --rbind /dev "$R/dev"; '
    'exec "$@"'
)


def box_argv(rootfs: Path, tmp: Path, argv: list[str]) -> list[str]:
    """The command line running ``argv`` (paths inside the image) from ``rootfs``, with the
    host directory ``tmp`` (owned by 65532) as its /tmp."""
    return [
        "unshare",
        "--mount",  # no --fork: every step execs, so the caller's signals reach the process
        "sh",
        "-c",
        _MOUNTS,
        "sh",
        str(rootfs),
        str(tmp),
        sys.executable,
        "-c",
        _LAUNCH,
        str(rootfs),
        str(UID),
        *argv,
    ]


def unpack(layout: Path, rootfs: Path) -> None:
    """The image's layers, in order, into ``rootfs`` (Docker's manifest.json names them)."""
    [entry] = json.loads((layout / "manifest.json").read_text())
    for layer in entry["Layers"]:
        with tarfile.open(layout / layer) as tar:
            tar.extractall(rootfs, filter="fully_trusted")
