#!/usr/bin/env python3
"""Builds the operator image as an OCI archive without a container daemon (`make image`).

Inputs, all pinned: the Debian packages of image/debian.lock (the runtime of Debian 12's
python3.11, unpacked from their .debs: no maintainer scripts run, no shell or package manager
in the image), the wheels of image/requirements.lock (pip --require-hashes) and the project's
own wheel, built from this tree. Downloads are cached under $WLMAP_CACHE/image.

Three layers (Debian, locked wheels, our wheel) so a code change rebuilds and pushes only the
last. Every tar entry has uid/gid 0, SOURCE_DATE_EPOCH as mtime and a sorted place; gzip
carries no name or time; Python files are byte-compiled by the image's own interpreter in
`unchecked-hash` mode (no source mtimes in the .pyc), so two builds of the same inputs give
the same digest.

The archive is an OCI image layout (oci-layout, index.json, blobs/) that also carries Docker's
manifest.json, so `docker load`, `podman load`, `skopeo copy oci-archive:…` and
`ctr images import` all read it. Beside it: NAME.sbom.json, the list of what is inside (also
in the image at /usr/share/doc/workload-map/sbom.json).

Usage: hack/build-image.py [--out dist] [--name localhost/workload-map-operator] [--tag VER]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("WLMAP_CACHE") or Path.home() / ".cache/workload-map") / "image"
SITE = "usr/local/lib/python3.11/dist-packages"
UID = 65532
PIP_PLATFORM = [
    "--only-binary=:all:", "--implementation", "cp", "--python-version", "3.11", "--abi", "cp311",
    "--platform", "manylinux_2_36_x86_64", "--platform", "manylinux_2_28_x86_64",
    "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64",
    "--platform", "any",
]  # fmt: skip
# what only a package manager or a reader of manuals uses (copyright files stay)
DROPPED = ("usr/share/man/", "usr/share/info/", "usr/share/lintian/", "usr/share/doc-base/")


def log(message: str) -> None:
    print(f"build-image: {message}", file=sys.stderr, flush=True)


def fail(message: str) -> None:
    raise SystemExit(f"build-image: {message}")


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("timeout", 1200)
    kwargs.setdefault("text", True)
    done = subprocess.run(argv, capture_output=True, **kwargs)
    if done.returncode != 0:
        err = done.stderr if isinstance(done.stderr, str) else done.stderr.decode(errors="replace")
        fail(f"{' '.join(argv[:4])} … failed ({done.returncode}):\n{err[-3000:]}")
    return done


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_debian_lock() -> list[tuple[str, str, str]]:
    pins = []
    for line in (ROOT / "image/debian.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version, digest = line.split()
            pins.append((name, version, digest))
    return pins


def fetch_debs(pins: list[tuple[str, str, str]]) -> list[Path]:
    """The pinned .debs, from the cache or `apt-get download`, each checked against its hash."""
    store = CACHE / "debs"
    store.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, version, digest in pins:
        path = store / f"{name}_{version.replace(':', '%3a')}.deb"
        if not path.exists():
            with tempfile.TemporaryDirectory(dir=store) as tmp:
                got = subprocess.run(
                    ["apt-get", "download", f"{name}={version}"],
                    cwd=tmp, capture_output=True, text=True, timeout=300,
                )  # fmt: skip
                if got.returncode != 0:
                    fail(
                        f"Debian package {name}={version} of image/debian.lock cannot be "
                        f"downloaded ({got.stderr.strip()[-300:]}); the mirror keeps only current "
                        "versions: run `make image-lock` to pin the current ones (and "
                        "`apt-get update` first if apt's lists are old)"
                    )
                [deb] = Path(tmp).glob("*.deb")
                deb.rename(path)
        if sha256(path) != digest:
            path.unlink()
            fail(f"{path.name}: SHA256 differs from image/debian.lock; removed it, run again")
        paths.append(path)
    return paths


def fetch_wheels() -> Path:
    """The locked wheels in the cache (pip downloads only the missing ones, hash-checked)."""
    store = CACHE / "wheels"
    store.mkdir(parents=True, exist_ok=True)
    run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes",
         "-d", str(store), *PIP_PLATFORM, "-r", str(ROOT / "image/requirements.lock")],
        env=clean_env(),
    )  # fmt: skip
    return store


def clean_env(**extra: str) -> dict[str, str]:
    # a PYTHONPATH naming a source tree with its egg-info makes pip skip installs
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def build_wheel(work: Path, epoch: int) -> Path:
    out = work / "wheel"
    run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        env=clean_env(SOURCE_DATE_EPOCH=str(epoch)),
    )
    [wheel] = out.glob("workload_map-*.whl")
    return wheel


def unpack_debs(debs: list[Path], rootfs: Path) -> None:
    for deb in debs:
        data = run(["dpkg-deb", "--fsys-tarfile", str(deb)], text=False).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            # the data tars of Debian's own packages: owned by root, paths under ./
            tar.extractall(rootfs, filter="fully_trusted")


def base_files(rootfs: Path) -> None:
    """What the packages' maintainer scripts and base-files would have made, minimally."""
    etc = rootfs / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"nonroot:x:{UID}:{UID}:nonroot:/home/nonroot:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text(f"root:x:0:\nnonroot:x:{UID}:\n")
    (etc / "nsswitch.conf").write_text("passwd: files\ngroup: files\nhosts: files dns\n")
    (etc / "os-release").write_text(
        'PRETTY_NAME="workload-map operator (Debian 12 packages)"\nID=debian\nVERSION_ID="12"\n'
    )
    (etc / "ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    (rootfs / "home/nonroot").mkdir(parents=True, exist_ok=True)
    (rootfs / "home/nonroot").chmod(0o755)
    os.chown(rootfs / "home/nonroot", UID, UID)
    # mount points the container runtime fills
    for point in ("proc", "sys", "dev"):
        (rootfs / point).mkdir(exist_ok=True)
        (rootfs / point).chmod(0o755)
    for tmp in ("tmp", "var/tmp"):
        (rootfs / tmp).mkdir(parents=True, exist_ok=True)
        (rootfs / tmp).chmod(0o1777)
    for dropped in DROPPED:
        shutil.rmtree(rootfs / dropped, ignore_errors=True)
    docs = rootfs / "usr/share/doc"
    for path in sorted(docs.rglob("*"), reverse=True) if docs.exists() else []:
        if path.is_file() and path.name != "copyright":
            path.unlink()
    # the dynamic linker's cache of the multiarch library directories
    run(["ldconfig", "-r", str(rootfs)])


def pip_target(target: Path, *args: str) -> None:
    run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile",
         "--target", str(target), *PIP_PLATFORM, *args],
        env=clean_env(),
    )  # fmt: skip
    # the scripts pip wrote name the build machine's interpreter; ours are written below
    shutil.rmtree(target / "bin", ignore_errors=True)
    for record in target.glob("*.dist-info/RECORD"):
        lines = record.read_text().splitlines()
        keep = [ln for ln in lines if not ln.startswith(("../", "bin/")) and "direct_url" not in ln]
        record.write_text("\n".join(keep) + "\n")
    for direct in target.glob("*.dist-info/direct_url.json"):
        direct.unlink()


def console_scripts(rootfs: Path, wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        text = next(zf.read(n).decode() for n in zf.namelist() if n.endswith("entry_points.txt"))
    scripts, section = [], ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[console_scripts]" and "=" in line:
            name, target = (part.strip() for part in line.split("=", 1))
            module, func = target.split(":")
            path = rootfs / "usr/local/bin" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                "#!/usr/bin/python3.11\nimport sys\n"
                f"from {module} import {func}\nsys.exit({func}())\n"
            )
            path.chmod(0o755)
            scripts.append(name)
    return scripts


def byte_compile(rootfs: Path) -> None:
    """The image's own python3.11 compiles its files, chrooted (no .pyc can be written later:
    the root file system is read-only)."""
    argv = [
        shutil.which("chroot") or "/usr/sbin/chroot", str(rootfs), "/usr/bin/python3.11", "-m", "compileall", "-q", "-j", "1",
        "--invalidation-mode", "unchecked-hash", "/usr/lib/python3.11", f"/{SITE}",
    ]  # fmt: skip
    if os.geteuid() != 0:
        argv = ["unshare", "--user", "--map-root-user", *argv]
    run(argv, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"})


def snapshot(rootfs: Path) -> set[str]:
    return {str(p.relative_to(rootfs)) for p in rootfs.rglob("*")}


def layer_tar(rootfs: Path, paths: list[str], epoch: int) -> bytes:
    """A deterministic tar of the given paths (sorted, root-owned, one mtime)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for rel in sorted(paths):
            path = rootfs / rel
            info = tar.gettarinfo(str(path), arcname=rel)
            info.uid = info.gid = 0
            if rel == "home/nonroot":
                info.uid = info.gid = UID
            info.uname = info.gname = ""
            info.mtime = epoch
            if info.islnk():  # a hard link inside one package: stored as a file of its own
                info.type = tarfile.REGTYPE
                info.linkname = ""
            if info.isreg():
                info.size = path.stat().st_size
                with path.open("rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    return buf.getvalue()


def gz(data: bytes) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=6, mtime=0) as f:
        f.write(data)
    return out.getvalue()


def blob(blobs: dict[str, bytes], data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    blobs[digest] = data
    return digest


def git_revision() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30
    )
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def default_epoch() -> int:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    return int(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--name", default="localhost/workload-map-operator")
    parser.add_argument("--tag", default=project["version"])
    args = parser.parse_args()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or default_epoch())
    started = time.monotonic()
    pins = read_debian_lock()
    debs = fetch_debs(pins)
    wheels = fetch_wheels()
    log(f"inputs ready: {len(debs)} .debs, locked wheels ({time.monotonic() - started:.0f} s)")
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=CACHE) as tmp:
        work = Path(tmp)
        wheel = build_wheel(work, epoch)
        rootfs = work / "rootfs"
        rootfs.mkdir()
        unpack_debs(debs, rootfs)
        base_files(rootfs)
        base = snapshot(rootfs)
        locked = [
            line.split()[0]
            for line in (ROOT / "image/requirements.lock").read_text().splitlines()
            if line.strip() and not line.startswith("#")
        ]
        pip_target(
            rootfs / SITE, "--find-links", str(wheels), "--require-hashes",
            "-r", str(ROOT / "image/requirements.lock"),
        )  # fmt: skip
        deps = snapshot(rootfs) - base
        with tempfile.TemporaryDirectory(dir=work) as app_tmp:
            # a separate target, then moved in: pip --target will not add to an existing tree
            pip_target(Path(app_tmp), str(wheel))
            for entry in sorted(Path(app_tmp).iterdir()):
                shutil.move(str(entry), rootfs / SITE / entry.name)
        scripts = console_scripts(rootfs, wheel)
        sbom = {
            "image": f"{args.name}:{args.tag}",
            "revision": git_revision(),
            "sourceDateEpoch": epoch,
            "entrypoints": sorted(scripts),
            "debian": [{"name": n, "version": v, "sha256": d} for n, v, d in pins],
            "python": [{"requirement": r} for r in locked],
            "workload-map": {"version": project["version"], "wheel": wheel.name},
        }
        sbom_text = json.dumps(sbom, indent=2, sort_keys=True) + "\n"
        doc = rootfs / "usr/share/doc/workload-map"
        doc.mkdir(parents=True, exist_ok=True)
        (doc / "sbom.json").write_text(sbom_text)
        byte_compile(rootfs)
        everything = snapshot(rootfs)
        layers_of: dict[str, list[str]] = {"base": [], "deps": [], "app": []}
        for rel in everything:
            source = rel
            if "/__pycache__" in rel:  # a .pyc goes with its source file's layer
                head, _, name = rel.partition("/__pycache__")
                source = head + "/" + name.lstrip("/").split(".")[0] + ".py" if name else head
            layers_of["base" if source in base else "deps" if source in deps else "app"].append(rel)
        # directories a later layer writes into are repeated in it (as docker build does)
        for name in ("deps", "app"):
            parents = {str(Path(r).parent) for r in layers_of[name]} - {"."}
            extra = set()
            for parent in parents:
                while parent not in (".", ""):
                    extra.add(parent)
                    parent = str(Path(parent).parent)
            layers_of[name] = sorted(set(layers_of[name]) | extra)
        blobs: dict[str, bytes] = {}
        diff_ids, layer_descs = [], []
        for name in ("base", "deps", "app"):
            raw = layer_tar(rootfs, layers_of[name], epoch)
            diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
            packed = gz(raw)
            layer_descs.append(
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": "sha256:" + blob(blobs, packed),
                    "size": len(packed),
                }
            )
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    labels = {
        "org.opencontainers.image.title": "workload-map-operator",
        "org.opencontainers.image.version": args.tag,
        "org.opencontainers.image.revision": sbom["revision"],
        "org.opencontainers.image.licenses": project.get("license", ""),
        "org.opencontainers.image.created": created,
    }
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {
            "User": f"{UID}:{UID}",
            "Entrypoint": ["workload-map-operator"],
            "Env": [
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "PYTHONDONTWRITEBYTECODE=1",
                "PYTHONUNBUFFERED=1",
                "LANG=C.UTF-8",
                "HOME=/tmp",
            ],
            "WorkingDir": "/",
            "ExposedPorts": {"8080/tcp": {}, "8081/tcp": {}, "9443/tcp": {}},
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [
            {"created": created, "created_by": f"hack/build-image.py: {what}"}
            for what in (
                "Debian packages (image/debian.lock)",
                "wheels (image/requirements.lock)",
                f"workload-map {project['version']}",
            )
        ],
    }
    config_bytes = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    config_digest = blob(blobs, config_bytes)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": "sha256:" + config_digest,
            "size": len(config_bytes),
        },
        "layers": layer_descs,
        "annotations": {k: v for k, v in labels.items() if k != "org.opencontainers.image.title"},
    }
    manifest_bytes = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    manifest_digest = blob(blobs, manifest_bytes)
    ref = f"{args.name}:{args.tag}"
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": "sha256:" + manifest_digest,
                "size": len(manifest_bytes),
                "annotations": {
                    "io.containerd.image.name": ref,
                    "org.opencontainers.image.ref.name": args.tag,
                },
            }
        ],
    }
    docker_manifest = [
        {
            "Config": f"blobs/sha256/{config_digest}",
            "RepoTags": [ref],
            "Layers": [f"blobs/sha256/{d['digest'].split(':')[1]}" for d in layer_descs],
        }
    ]
    files = {
        "oci-layout": json.dumps({"imageLayoutVersion": "1.0.0"}).encode(),
        "index.json": json.dumps(index, sort_keys=True, indent=2).encode(),
        "manifest.json": json.dumps(docker_manifest, indent=2).encode(),
        **{f"blobs/sha256/{d}": data for d, data in blobs.items()},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    base_name = f"workload-map-operator-{args.tag}"
    archive = args.out / f"{base_name}.oci.tar"
    with tarfile.open(archive.with_suffix(".tmp"), "w", format=tarfile.GNU_FORMAT) as tar:
        for directory in ("blobs", "blobs/sha256"):
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, epoch
            tar.addfile(info)
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(files[name]), 0o644, epoch
            tar.addfile(info, io.BytesIO(files[name]))
    archive.with_suffix(".tmp").rename(archive)
    (args.out / f"{base_name}.sbom.json").write_text(sbom_text)
    size = sum(d["size"] for d in layer_descs)
    unpacked = sum(len(layers_of[n]) for n in layers_of)
    print(f"image:   {ref}")
    print(f"digest:  sha256:{manifest_digest}")
    print(f"archive: {archive} ({archive.stat().st_size / 1e6:.1f} MB; layers {size / 1e6:.1f} MB "
          f"compressed, {unpacked} entries)")  # fmt: skip
    print(f"sbom:    {args.out / (base_name + '.sbom.json')}")
    log(f"done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
