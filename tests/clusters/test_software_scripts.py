"""The stack's scripts run for real (bash) with the node's system commands stubbed (tests/clusters/script_sandbox.py).

pyxis: the plugin stack is written before slurmd is restarted, and ParallelCluster runs the script at OnNodeStart on
compute nodes (before slurmd starts). NCCL: the instance type's settings reach the profile every job sources.
"""
from __future__ import annotations

from clusters.blueprints import pcluster_config
from clusters.software import release
from tests.clusters.script_sandbox import Sandbox


def test_pyxis_is_in_the_plugin_stack_before_slurmd_restarts(tmp_path):
    box = Sandbox(tmp_path)
    env = {"ENROOT_CONF_DIR": str(tmp_path / "enroot"), "PYXIS_LIB_DIR": str(tmp_path / "pyxis"),
           "PYXIS_RUNTIME_DIR": str(tmp_path / "run-pyxis"), "SLURMD_ACTIVE": "0"}
    result = box.run("install_pyxis.sh", env=env)
    assert result.returncode == 0, result.stderr
    calls = box.calls()
    restart = calls.index("systemctl restart slurmd")
    assert calls[restart + 1] == f"plugstack at restart: required {tmp_path / 'pyxis'}/spank_pyxis.so"
    assert calls.index("git clone --depth 1 --branch v0.20.0 https://github.com/NVIDIA/pyxis.git "
                       f"{calls[[c.startswith('git clone') for c in calls].index(True)].split()[-1]}") < restart
    plugstack = (tmp_path / "slurm" / "etc" / "plugstack.conf").read_text()
    assert plugstack == f"include {tmp_path / 'slurm'}/etc/plugstack.conf.d/*\n"
    conf = (tmp_path / "enroot" / "enroot.conf").read_text()
    assert "ENROOT_SQUASH_OPTIONS -comp lzo -noI -noD -noF -noX -no-duplicates\n" in conf
    assert "ENROOT_MOUNT_HOME no\n" in conf and "ENROOT_RESTRICT_DEV no\n" in conf
    # Run again (a rebooted node): the include is not added twice.
    assert box.run("install_pyxis.sh", env=env).returncode == 0
    assert (tmp_path / "slurm" / "etc" / "plugstack.conf").read_text() == plugstack


def test_without_a_running_slurmd_nothing_is_restarted(tmp_path):
    """ParallelCluster's OnNodeStart: slurmd starts after the script, with the plugin stack already complete."""
    box = Sandbox(tmp_path)
    env = {"ENROOT_CONF_DIR": str(tmp_path / "enroot"), "PYXIS_LIB_DIR": str(tmp_path / "pyxis"),
           "PYXIS_RUNTIME_DIR": str(tmp_path / "run-pyxis"), "SLURMD_ACTIVE": "3"}
    assert box.run("install_pyxis.sh", env=env).returncode == 0
    assert not any(c.startswith("systemctl restart") for c in box.calls())
    assert (tmp_path / "slurm" / "etc" / "plugstack.conf.d" / "pyxis.conf").is_file()
    printed = pcluster_config.build("ap-northeast-1", {"ClusterName": "c1", "BucketName": "b1"}, {})
    queue = printed["Scheduling"]["SlurmQueues"][0]["CustomActions"]
    assert [a["Script"] for a in queue["OnNodeStart"]["Sequence"]] == [
        "s3://b1/geniac/c1/software/configure_lustre_efa.sh", "s3://b1/geniac/c1/software/install_pyxis.sh"]
    assert not any("install_pyxis" in a["Script"] for a in queue["OnNodeConfigured"]["Sequence"])


def _nccl_profile(tmp_path, instance_type):
    box = Sandbox(tmp_path, present=("nvidia-smi",), instance_type=instance_type)
    tar = box.bin / "tar"  # the release tarball: a configure script in its directory
    ofi = release.manifest()["components"]["aws_ofi_nccl"]["version"].removeprefix("v")
    tar.write_text(f'#!/bin/bash\nmkdir -p "${{@: -1}}/aws-ofi-nccl-{ofi}"\n'
                   f'printf "#!/bin/bash\\nexit 0\\n" > "${{@: -1}}/aws-ofi-nccl-{ofi}/configure"\n'
                   f'chmod +x "${{@: -1}}/aws-ofi-nccl-{ofi}/configure"\n')
    profile = tmp_path / "geniac-nccl.sh"
    result = box.run("install_nccl.sh", env={"NCCL_PROFILE": str(profile)})
    assert result.returncode == 0, result.stderr
    return profile.read_text()


def test_p5_nodes_get_the_references_nccl_settings_and_others_keep_the_defaults(tmp_path):
    p5 = _nccl_profile(tmp_path / "p5", "p5.48xlarge")
    for line in ("export FI_EFA_FORK_SAFE=1", "export NCCL_BUFFSIZE=8388608", "export NCCL_P2P_NET_CHUNKSIZE=524288",
                 "export FI_PROVIDER=efa"):
        assert line + "\n" in p5
    p4 = _nccl_profile(tmp_path / "p4", "p4d.24xlarge")
    assert "NCCL_BUFFSIZE" not in p4 and "FI_EFA_FORK_SAFE" not in p4 and "export FI_PROVIDER=efa\n" in p4
    env = release.stack_env(cluster_name="c", region="us-east-1", instance_type="ml.p5.48xlarge", cluster_id=7)
    assert "NCCL_OFI_TUNER='1'" in env and "PORTAL_CLUSTER_ID='7'" in env
    assert "NCCL_OFI_TUNER='0'" in release.stack_env(cluster_name="c", region="us-east-1", instance_type="trn1.32xlarge")
