"""The parse_nccl and parse_dcgm management commands, run as a person would run them."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

DATA = Path(__file__).resolve().parents[1] / "data"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_parse_nccl_json():
    data = json.loads(run("parse_nccl", str(DATA / "nccl_allreduce_2xp5_efa_srun.txt"),
                          "--instance-type", "p5.48xlarge", "--json"))
    assert (data["collective"], data["ranks"], data["nodes"], data["transport"]) == ("all_reduce", 16, 2, "efa")
    assert (data["peak_busbw"], data["avg_busbw"], data["expected_busbw"]) == (487.01, 248.741, 487.0)
    assert len(data["rows"]) == 15 and data["verdict"] == "pass"


def test_parse_nccl_text_report_for_socket_run():
    text = run("parse_nccl", str(DATA / "nccl_allreduce_2xp5_socket_srun.txt"), "--instance-type", "p5.48xlarge")
    assert "transport socket" in text
    assert "verdict: FAIL: NCCL used TCP sockets instead of EFA" in text


def test_parse_nccl_collective_option():
    data = json.loads(run("parse_nccl", str(DATA / "nccl_alltoall_2xp5_efa.txt"), "--collective", "alltoall_perf",
                          "--nodes", "2", "--json"))
    assert (data["collective"], data["peak_busbw"]) == ("alltoall", 47.76)


def test_parse_nccl_bad_input():
    with pytest.raises(CommandError, match="truncated"):
        run("parse_nccl", str(DATA / "nccl_allreduce_truncated.txt"))
    with pytest.raises(CommandError, match="cannot read"):
        run("parse_nccl", str(DATA / "no_such_file.txt"))


def test_parse_dcgm_json():
    data = json.loads(run("parse_dcgm", str(DATA / "dcgm_p5_xid79_missing_gpu.prom"), "--instance-type",
                          "p5.48xlarge", "--json"))
    (node,) = data["nodes"]
    assert (node["hostname"], node["expected_gpus"], node["gpus_seen"], node["missing_gpus"], node["verdict"]) == (
        "ip-10-1-45-13", 8, 7, [5], "reboot")
    assert [(f["gpu"], f["kind"], f["xid"]) for f in data["faults"]] == [(5, "missing_gpu", None), (2, "xid", 79)]
    assert data["panels"]["missing_gpus"] == 1 and data["healthy_gpu_share"] == 0.75


def test_parse_dcgm_text_report():
    text = run("parse_dcgm", str(DATA / "dcgm_p5_remapped_rows.prom"), "--instance-type", "p5.48xlarge")
    assert "ip-10-1-45-14: replace" in text
    assert "row_remap_failures: 1" in text


def test_parse_dcgm_bad_input():
    with pytest.raises(CommandError, match="line 45"):
        run("parse_dcgm", str(DATA / "dcgm_p5_broken_line.prom"))
    with pytest.raises(CommandError, match="unknown instance type"):
        run("parse_dcgm", str(DATA / "dcgm_p5_healthy.prom"), "--instance-type", "p9.96xlarge")
