"""Lustre over EFA: the storage stack's choice reaches the file system and every cluster's nodes, and the node
script sets up LNet on the EFA devices AWS's FSx guide names before the mount, or stays on TCP and says why.

The scripts run for real with bash; the node's system commands (modprobe, lnetctl, modinfo, ip, systemctl,
mount) are stubs that log their calls, and the EFA devices are a folder laid out as /sys/class/infiniband is.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clusters.blueprints import catalog, cfn_resolve, pcluster_config
from clusters.software import release

EFA_STORAGE = {"ClusterName": "c1", "LustreEfaEnabled": "true", "LustreDnsName": "fs-1.fsx", "BucketName": "b1",
               "LustreFileSystemId": "fs-0123456789abcdef0",
               "LustreMountName": "abc", "ComputeInstanceType": "p5.48xlarge", "WorkerInstanceType": "ml.p5.48xlarge"}


class EfaNode:
    """A node's software folder, its EFA devices and stubbed system commands."""

    def __init__(self, root: Path, *, kind: str = "hyperpod", efa: str = "true", devices: int = 32,
                 driver: str = "2.13.0g", kefalnd: bool = True, configured: bool = False) -> None:
        self.root, self.bin, self.node = root, root / "bin", root / "node"
        self.devices = root / "infiniband"
        for folder in (self.bin, self.node, self.devices, root / "efa-driver" / "efa"):
            folder.mkdir(parents=True, exist_ok=True)
        self.calls = root / "calls.log"
        self.calls.touch()
        inputs = {**EFA_STORAGE, "LustreEfaEnabled": efa}
        for key, body in release.bundle(kind, inputs, region="ap-northeast-1").items():
            (self.node / key.rsplit("/", 1)[-1]).write_bytes(body)
        for index in range(devices):
            # As on a p5: rdmap<bus>s0, with the device's driver a link to a folder named efa.
            device = self.devices / f"rdmap{79 + 17 * index}s0" / "device"
            device.mkdir(parents=True)
            (device / "driver").symlink_to(root / "efa-driver" / "efa")
        stubs = {
            "modinfo": f'echo "{driver}"',
            "modprobe": "exit 1" if not kefalnd else "exit 0",
            "lnetctl": ('[[ "$1 $2" == "net show" ]] && echo "    - nid: 10.1.0.21@efa"; exit 0' if configured
                        else 'exit 0'),
            "ip": 'echo "default via 10.1.0.1 dev ens32 proto dhcp src 10.1.0.21 metric 512"',
            "mount": "exit 0", "mountpoint": "exit 1", "systemctl": "exit 0", "sleep": "exit 0",
            "curl": "exit 7",
        }
        if not kefalnd:
            stubs["modprobe"] = '[[ "$1" == kefalnd ]] && exit 1; exit 0'
        for name, body in stubs.items():
            stub = self.bin / name
            stub.write_text(f'#!/bin/bash\necho "{name} $*" >> "$CALLS"\n{body}\n')
            stub.chmod(0o755)

    def run(self, script: str, *args: str, instance_type: str = "p5.48xlarge") -> subprocess.CompletedProcess:
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(self.root), "CALLS": str(self.calls),
               "EFA_DEVICES_DIR": str(self.devices), "INSTANCE_TYPE": instance_type,
               "LUSTRE_EFA_MODPROBE_CONF": str(self.root / "modprobe.d" / "lustre-efa.conf"),
               "LNET_CONF": str(self.root / "lnet.conf"), "FSTAB": str(self.root / "fstab")}
        return subprocess.run(["bash", str(self.node / script), *args], capture_output=True, text=True, env=env,
                              cwd=self.root, timeout=60)

    def log(self) -> list[str]:
        return self.calls.read_text().splitlines()

    def efa_interfaces(self) -> list[str]:
        return [c.split("--if ")[1].split()[0] for c in self.log() if c.startswith("lnetctl net add --net efa")]


def _devices(count: int) -> list[str]:
    return sorted(f"rdmap{79 + 17 * i}s0" for i in range(count))


def test_a_p5_node_puts_every_fourth_of_its_32_efa_devices_on_lnet_before_lustre_loads(tmp_path):
    node = EfaNode(tmp_path)
    result = node.run("configure_lustre_efa.sh")
    assert result.returncode == 0, result.stdout + result.stderr
    assert node.efa_interfaces() == _devices(32)[::4] and len(node.efa_interfaces()) == 8
    calls = [c for c in node.log() if c.startswith(("modprobe", "lnetctl")) and c != "lnetctl net show --net efa"]
    assert calls[:6] == ["modprobe lnet", "modprobe kefalnd ipif_name=ens32", "modprobe ksocklnd",
                         "lnetctl lnet configure", "lnetctl net del --net tcp", "lnetctl net add --net tcp --if ens32"]
    assert all(c.endswith("--peer-credits 32") for c in calls if "--net efa" in c)
    assert calls[-4:-1] == ["lnetctl set discovery 1", "lnetctl udsp add --src efa --priority 0", "modprobe lustre"]
    assert (tmp_path / "modprobe.d" / "lustre-efa.conf").read_text() == "options kefalnd ipif_name=ens32\n"
    assert "lnetctl export --backup" in node.log()
    assert "8 of 32 EFA devices" in result.stdout


@pytest.mark.parametrize("instance_type,devices,expected", [
    ("trn1.32xlarge", 8, [0, 7]), ("ml.p4d.24xlarge", 4, [0, 3]), ("c6gn.16xlarge", 1, [0])])
def test_other_instances_use_their_first_and_last_efa_device(tmp_path, instance_type, devices, expected):
    node = EfaNode(tmp_path, devices=devices)
    result = node.run("configure_lustre_efa.sh", instance_type=instance_type)
    assert result.returncode == 0, result.stdout + result.stderr
    assert node.efa_interfaces() == [_devices(devices)[i] for i in expected]


@pytest.mark.parametrize("case,kwargs,says", [
    ("not EFA-enabled", {"efa": "false"}, "not EFA-enabled"),
    ("no EFA device (a head node)", {"devices": 0}, "no EFA device"),
    ("driver too old", {"driver": "2.10.0g"}, "older than 2.12.1"),
    ("Lustre client without kefalnd", {"kefalnd": False}, "no EFA network driver"),
    ("already configured", {"configured": True}, "already configured"),
])
def test_a_node_that_cannot_or_need_not_use_efa_stays_on_tcp_and_says_why(tmp_path, case, kwargs, says):
    node = EfaNode(tmp_path, **kwargs)
    result = node.run("configure_lustre_efa.sh")
    assert result.returncode == 0, result.stdout + result.stderr
    assert says in result.stdout, case
    assert node.efa_interfaces() == []
    assert not (tmp_path / "modprobe.d").exists()


def test_hyperpod_mounts_lustre_only_after_lnet_is_on_efa(tmp_path):
    node = EfaNode(tmp_path)
    result = node.run("mount_fsx.sh", "fs-1.fsx", "abc", str(tmp_path / "fsx"))
    assert result.returncode == 0, result.stdout + result.stderr
    calls = node.log()
    last_efa = max(i for i, c in enumerate(calls) if c.startswith("lnetctl net add --net efa"))
    assert last_efa < calls.index(f"mount {tmp_path / 'fsx'}")
    assert len(node.efa_interfaces()) == 8


def test_hyperpod_eks_nodes_set_up_lnet_on_efa_for_the_csi_driver(tmp_path):
    node = EfaNode(tmp_path, kind="hyperpod-eks")
    result = node.run("on_create_eks.sh")
    assert "8 of 32 EFA devices" in result.stdout, result.stdout + result.stderr


def test_the_choice_reaches_the_file_system_and_each_cluster_stack():
    storage = catalog.template("storage")
    lustre = storage["Resources"]["LustreFileSystem"]["Properties"]
    defaults = {name: str(spec.get("Default", "")) for name, spec in storage["Parameters"].items()}
    pseudo = {"Region": "ap-northeast-1", "StackName": "org-storage"}
    on = cfn_resolve.resolve(storage, lustre, {**defaults, "LustreEfaEnabled": "true"}, pseudo=pseudo)
    off = cfn_resolve.resolve(storage, lustre, defaults, pseudo=pseudo)
    assert on["LustreConfiguration"]["EfaEnabled"] is True
    assert on["LustreConfiguration"]["DeploymentType"] == "PERSISTENT_2"
    assert "Mode" in on["LustreConfiguration"]["MetadataConfiguration"]
    assert "EfaEnabled" not in off["LustreConfiguration"]
    assert storage["Parameters"]["LustreEfaEnabled"]["Default"] == "false"
    assert "LustreEfaEnabled" in storage["Outputs"]
    # Each cluster blueprint takes the storage stack's output by name (the pipeline wires outputs to parameters).
    for slug in ("parallelcluster", "hyperpod", "hyperpod-eks"):
        assert "LustreEfaEnabled" in {p.name for p in catalog.entry(slug).parameters}, slug


@pytest.mark.parametrize("value,expected", [("true", "true"), ("false", "false"), (None, "false")])
def test_the_bundle_tells_the_nodes(value, expected):
    inputs = {k: v for k, v in {**EFA_STORAGE, "LustreEfaEnabled": value}.items() if v is not None}
    for kind in ("parallelcluster", "hyperpod", "hyperpod-eks"):
        env = next(body for key, body in release.bundle(kind, inputs, region="ap-northeast-1").items()
                   if key.endswith("stack.env"))
        assert f"FSX_EFA_ENABLED='{expected}'" in env.decode(), kind


def test_parallelcluster_sets_up_lnet_at_node_start_before_its_own_mount():
    printed = pcluster_config.build("ap-northeast-1", {"ClusterName": "c1", "BucketName": "b1"}, {})
    start = printed["Scheduling"]["SlurmQueues"][0]["CustomActions"]["OnNodeStart"]["Sequence"]
    assert start[0]["Script"] == "s3://b1/geniac/c1/software/configure_lustre_efa.sh"
    assert start[0]["Args"] == ["s3://b1/geniac/c1/software/"]
