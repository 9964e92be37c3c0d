"""The HyperPod lifecycle and node scripts run for real with bash, system commands stubbed (as script_sandbox):
configless Slurm with the other daemon masked, the FSx mount retried after Lustre's modules, and the AMI's
EFA and NCCL used instead of reinstalled or rebuilt on every node."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from clusters.software import release
from tests.clusters.script_sandbox import Sandbox

CONTROLLER_IP, WORKER_IP = "10.1.0.10", "10.1.0.21"


class Node:
    """One HyperPod node's lifecycle prefix, with stubbed system commands that log their calls."""

    def __init__(self, root: Path, address: str, *, mount_failures: int = 0) -> None:
        self.root, self.bin, self.lifecycle = root, root / "bin", root / "lifecycle"
        for folder in (self.bin, self.lifecycle, root / "systemd", root / "log"):
            folder.mkdir(parents=True, exist_ok=True)
        self.calls = root / "calls.log"
        self.calls.touch()
        objects = release.bundle("hyperpod", {"ClusterName": "hp", "WorkerInstanceType": "ml.p5.48xlarge",
                                               "LustreDnsName": "fs-1.fsx", "LustreMountName": "abc"},
                                  region="ap-northeast-1")
        for key, body in objects.items():
            (self.lifecycle / key.rsplit("/", 1)[-1]).write_bytes(body)
        env = self.lifecycle / "stack.env"  # the group's install scripts are tested on their own
        env.write_text("\n".join(line for line in env.read_text().splitlines()
                                 if not line.startswith(("HYPERPOD_CONTROLLER_SCRIPTS", "HYPERPOD_WORKER_SCRIPTS")))
                       + "\nHYPERPOD_CONTROLLER_SCRIPTS=''\nHYPERPOD_WORKER_SCRIPTS=''\n")
        groups = [{"Name": release.CONTROLLER_GROUP, "Instances": [{"CustomerIpAddress": CONTROLLER_IP}]},
                  {"Name": release.WORKER_GROUP, "Instances": [{"CustomerIpAddress": WORKER_IP},
                                                                {"CustomerIpAddress": "10.1.0.22"}]}]
        self.resource_config = root / "resource_config.json"
        self.resource_config.write_text(json.dumps({"InstanceGroups": groups}))
        self.slurm_conf = root / "slurm.conf"
        self.slurm_conf.write_text("ClusterName=hp\nSlurmctldParameters=cloud_dns\n")
        stubs = {
            "hostname": f'echo "{address} 172.17.0.1"',
            "mount": f'n=$(grep -c "^mount " "$CALLS"); [[ $n -gt {mount_failures} ]]',
            "mountpoint": "exit 1",
            "sleep": "exit 0",
        }
        for name in ("systemctl", "modprobe", "chmod", *stubs):
            stub = self.bin / name
            stub.write_text(f'#!/bin/bash\necho "{name} $*" >> "$CALLS"\n{stubs.get(name, "")}\n')
            stub.chmod(0o755)

    def run(self, script: str = "on_create.sh", *args: str) -> subprocess.CompletedProcess:
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(self.root), "CALLS": str(self.calls),
               "SAGEMAKER_RESOURCE_CONFIG_PATH": str(self.resource_config), "SLURM_CONF": str(self.slurm_conf),
               "SYSTEMD_DIR": str(self.root / "systemd"), "PROVISION_LOG_DIR": str(self.root / "log"),
               "FSTAB": str(self.root / "fstab"), "FSX_MOUNT_POINT": str(self.root / "fsx")}
        return subprocess.run(["bash", str(self.lifecycle / script), *args], capture_output=True, text=True,
                              env=env, cwd=self.root, timeout=60)

    def log(self) -> list[str]:
        return self.calls.read_text().splitlines()


def test_a_worker_starts_slurmd_configless_from_the_controller_and_masks_slurmctld(tmp_path):
    node = Node(tmp_path, WORKER_IP)
    result = node.run()
    assert result.returncode == 0, result.stdout + result.stderr
    dropin = tmp_path / "systemd" / "slurmd.service.d" / "geniac-configless.conf"
    assert dropin.read_text() == f'[Service]\nEnvironment="SLURMD_OPTIONS=--conf-server {CONTROLLER_IP}"\n'
    calls = node.log()
    assert calls.index("systemctl mask slurmctld") < calls.index("systemctl enable --now slurmd")
    assert "systemctl daemon-reload" in calls and not any("enable --now slurmctld" in c for c in calls)


def test_the_controller_serves_its_configuration_and_masks_slurmd(tmp_path):
    node = Node(tmp_path, CONTROLLER_IP)
    result = node.run()
    assert result.returncode == 0, result.stdout + result.stderr
    calls = node.log()
    assert calls.index("systemctl mask slurmd") < calls.index("systemctl enable --now slurmctld")
    assert not any(c.endswith("enable --now slurmd") for c in calls)
    assert "SlurmctldParameters=cloud_dns,enable_configless" in node.slurm_conf.read_text()
    assert node.run().returncode == 0  # run again (a replaced node): the parameter is not added twice
    assert node.slurm_conf.read_text().count("enable_configless") == 1


def test_the_lustre_mount_loads_its_modules_then_retries_with_a_growing_wait(tmp_path):
    node = Node(tmp_path, WORKER_IP, mount_failures=2)
    result = node.run("mount_fsx.sh", "fs-1.fsx", "abc", str(tmp_path / "fsx"))
    assert result.returncode == 0, result.stdout + result.stderr
    calls = node.log()
    assert calls[:2] == ["modprobe lnet", "modprobe lustre"]
    assert [c for c in calls if c.startswith(("mount ", "sleep "))] == [
        f"mount {tmp_path / 'fsx'}", "sleep 5", f"mount {tmp_path / 'fsx'}", "sleep 10", f"mount {tmp_path / 'fsx'}"]
    assert "mounted at" in result.stdout and "(attempt 3)" in result.stdout
    assert (tmp_path / "fstab").read_text().startswith("fs-1.fsx@tcp:/abc ")


def test_a_mount_that_never_succeeds_fails_the_node_after_its_attempts(tmp_path):
    node = Node(tmp_path, WORKER_IP, mount_failures=99)
    result = node.run("mount_fsx.sh", "fs-1.fsx", "abc", str(tmp_path / "fsx"))
    assert result.returncode == 1
    assert sum(c.startswith("mount ") for c in node.log()) == 6 and "after 6 attempts" in result.stdout


@pytest.fixture
def ami(tmp_path):
    """What the AMIs ship: the EFA installer's package list, NCCL with CUDA, aws-ofi-nccl under /opt/amazon."""
    (tmp_path / "efa_installed_packages").write_text("# EFA installer version: 1.43.1\n# Debug packages installed: no\n")
    cuda, ofi = tmp_path / "cuda", tmp_path / "ofi-nccl"
    (cuda / "lib64").mkdir(parents=True)
    (cuda / "lib64" / "libnccl.so.2").touch()
    (ofi / "lib").mkdir(parents=True)
    (ofi / "lib" / "libnccl-net.so").touch()
    return {"EFA_INSTALLED_PACKAGES": str(tmp_path / "efa_installed_packages"), "CUDA_HOME": str(cuda),
            "AMI_OFI_NCCL_PREFIX": str(ofi)}


def test_the_amis_efa_and_nccl_are_used_not_reinstalled_or_rebuilt(tmp_path, ami):
    box = Sandbox(tmp_path / "box", present=("nvidia-smi",))
    profile = tmp_path / "profile.sh"
    efa = box.run("install_efa.sh", env=ami)
    nccl = box.run("install_nccl.sh", env={**ami, "NCCL_PROFILE": str(profile)})
    assert efa.returncode == nccl.returncode == 0, efa.stderr + nccl.stderr
    assert "EFA installer 1.43.1 shipped with the AMI: kept" in efa.stdout
    assert "shipped with the AMI: used, nothing built" in nccl.stdout
    assert not [c for c in box.calls() if c.split()[0] in ("curl", "git", "make", "tar")]
    assert f"export LD_LIBRARY_PATH={ami['CUDA_HOME']}/lib64:{ami['AMI_OFI_NCCL_PREFIX']}/lib:" in profile.read_text()


def test_without_efa_on_the_ami_the_pinned_installer_is_fetched(tmp_path):
    box = Sandbox(tmp_path / "box")
    result = box.run("install_efa.sh", env={"EFA_INSTALLED_PACKAGES": str(tmp_path / "absent")})
    pinned = release.manifest()["components"]["efa_installer"]["version"]
    assert f"aws-efa-installer-{pinned}.tar.gz" in " ".join(box.calls()), result.stdout + result.stderr
