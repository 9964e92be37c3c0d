"""Run a software-stack script for real with bash, in a temporary directory, with the node's system commands stubbed.

What cannot run here (package managers, Docker, systemd, the AWS CLI, git clones, builds) is replaced by small
scripts on ``PATH`` that record each call (``calls()``); everything else (bash, coreutils, grep, install) is the
real thing. ``aws s3 cp`` copies from the cluster's bundle, as the node would download it. ``systemctl restart
slurmd`` also records the pyxis plugin-stack line present at that moment, so a test can show the order.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from clusters.software import release

STUBS = {
    "aws": r'''if [[ "$1 $2" == "s3 cp" ]]; then cp "$BUNDLE/$(basename "$3")" "$4"; fi
if [[ "$1 $2" == "ecr get-login-password" ]]; then echo token; fi''',
    "systemctl": r'''if [[ "$1" == is-active ]]; then exit "${SLURMD_ACTIVE:-1}"; fi
if [[ "$1 $2" == "restart slurmd" ]]; then
    echo "plugstack at restart: $(cat "$SLURM_PREFIX/etc/plugstack.conf.d/pyxis.conf" 2>/dev/null)" >> "$CALLS"
fi''',
    "dpkg": 'echo amd64',
    "curl": r'''for arg in "$@"; do last="$arg"; done
case " $* " in *" -fsSLO "*) touch "$(basename "$last")" ;; esac''',
    "enroot": 'exit 0',
}
PLAIN = ("apt-get", "docker", "git", "make", "tar")


class Sandbox:
    def __init__(self, root: Path, *, present: tuple[str, ...] = (), with_files: bool = True,
                 instance_type: str = "p5.48xlarge") -> None:
        self.root = root
        self.bin, self.node, self.bundle = root / "bin", root / "lifecycle", root / "bundle"
        for path in (self.bin, self.node, self.bundle, root / "slurm" / "etc"):
            path.mkdir(parents=True, exist_ok=True)
        self.log = root / "calls.log"
        self.log.touch()
        objects = release.bundle("parallelcluster", {"ClusterName": "c1", "ComputeInstanceType": instance_type},
                                  region="ap-northeast-1")
        for key, body in objects.items():
            name = key.rsplit("/", 1)[-1]
            (self.bundle / name).write_bytes(body)
            if name.endswith(".sh") or with_files:
                (self.node / name).write_bytes(body)
        for name in (*PLAIN, *STUBS, *present):
            body = STUBS.get(name, "")
            stub = self.bin / name
            stub.write_text(f'#!/bin/bash\necho "{name} $*" >> "$CALLS"\n{body}\nexit 0\n')
            stub.chmod(0o755)

    def run(self, script: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        environment = {"PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(self.root), "CALLS": str(self.log),
                       "BUNDLE": str(self.bundle), "SLURM_PREFIX": str(self.root / "slurm"),
                       "TMPDIR": str(self.root), **(env or {})}
        return subprocess.run(["bash", str(self.node / script), *args], capture_output=True, text=True,
                              env=environment, cwd=self.root, timeout=60)

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines()

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
