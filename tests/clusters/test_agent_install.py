"""The controller agent as the software stack ships it: standard-library Python, a systemd unit that systemd reads
without complaint, installed on HyperPod controllers by the lifecycle scripts, and building every command from an
item's payload without a shell."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys

import pytest

from clusters.software import release
from sandbox.aws import moto_agent

SCRIPTS = release.SOFTWARE_DIR / release.CURRENT_VERSION / "scripts"


def test_the_agent_is_standard_library_python_only():
    tree = ast.parse((SCRIPTS / "geniac_agent.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported - set(sys.stdlib_module_names)
    result = subprocess.run([sys.executable, "-I", "-c", f"import runpy; runpy.run_path({str(SCRIPTS / 'geniac_agent.py')!r})"],
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=30)
    assert result.returncode == 0, result.stderr  # loads in an isolated interpreter (main() not run: not __main__)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_the_unit_file_passes_systemd_analyze_verify(tmp_path):
    unit = (SCRIPTS / "geniac-agent.service").read_text()
    assert "ExecStart=/usr/bin/python3 /opt/geniac/agent/geniac_agent.py" in unit
    (tmp_path / "geniac-agent.service").write_text(unit)
    result = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "geniac-agent.service")],
                            capture_output=True, text=True, timeout=60)
    complaints = [line for line in (result.stdout + result.stderr).splitlines()
                  if "geniac-agent.service" in line and "agent.env" not in line and "geniac_agent.py" not in line]
    assert complaints == []


def test_hyperpod_controllers_install_it_and_the_bundle_carries_it():
    manifest = release.manifest()
    assert manifest["hyperpod"]["controller"][-1] == "install_agent.sh"
    assert {"geniac_agent.py", "geniac-agent.service"} <= set(manifest["files"])
    objects = release.bundle("hyperpod", {"ClusterName": "hp1", "WorkerInstanceType": "ml.p5.48xlarge",
                                          "LustreDnsName": "fs.example", "LustreMountName": "abc"},
                             region="ap-northeast-1", cluster_id=7)
    for name in ("install_agent.sh", "geniac_agent.py", "geniac-agent.service"):
        assert f"geniac/hp1/lifecycle/{name}" in objects
    env = objects["geniac/hp1/lifecycle/stack.env"].decode()
    assert "PORTAL_CLUSTER_ID='7'" in env and "AGENT_TOKEN_PARAMETER='/geniac/hp1/agent-token'" in env


@pytest.mark.parametrize("item, argv, stdin", [
    ({"kind": "nodes"}, ["sinfo", "--Node", "--noheader", "--format=%N %n %o"], ""),
    ({"kind": "validation", "payload": {"action": "sbatch", "script": "#!/bin/bash\necho hi\n", "nodelist": ["a-1", "b-2"]}},
     ["sbatch", "--parsable", "--nodes=2", "--nodelist=a-1,b-2"], "#!/bin/bash\necho hi\n"),
    ({"kind": "validation", "payload": {"action": "scancel", "job": "1001"}}, ["scancel", "1001"], ""),
    ({"kind": "validation", "payload": {"action": "sacct", "job": "1001"}},
     ["sacct", "-j", "1001", "-X", "-n", "-P", "-o", "JobID,State,ExitCode,Reason"], ""),
    ({"kind": "scontrol", "payload": {"action": "resume", "nodes": ["ip-10-1-1-10"]}},
     ["scontrol", "update", "nodename=ip-10-1-1-10", "state=RESUME"], ""),
    ({"kind": "scontrol", "payload": {"action": "reboot", "nodes": ["n1", "n2"], "reason": "XID\n79"}},
     ["scontrol", "reboot", "ASAP", "nextstate=RESUME", "reason=portal remediation: XID 79", "n1,n2"], ""),
])
def test_each_kind_is_a_fixed_command_built_from_its_payload(item, argv, stdin):
    assert moto_agent.program().command(item) == (argv, stdin)


@pytest.mark.parametrize("item", [
    {"kind": "shell", "payload": {"line": "rm -rf /"}},
    {"kind": "validation", "payload": {"action": "scancel", "job": "1; reboot"}},
    {"kind": "validation", "payload": {"action": "sbatch", "script": "rm -rf /"}},
    {"kind": "validation", "payload": {"action": "sbatch", "script": "#!/bin/bash\n", "nodelist": ["a b"]}},
    {"kind": "scontrol", "payload": {"action": "drain", "nodes": ["n1;reboot"]}},
    {"kind": "scontrol", "payload": {"action": "power_down", "nodes": ["n1"]}},
    {"kind": "scontrol", "payload": {"action": "drain", "nodes": []}},
])
def test_an_item_it_cannot_build_a_safe_command_from_is_refused(item):
    program = moto_agent.program()
    with pytest.raises(program.Refused):
        program.command(item)
