"""nccl-tests output -> figures and verdicts."""

import json
from pathlib import Path

import pytest

from clusters.health.readers import expectations
from clusters.health.readers.nccl import NcclParseError, normalize_collective, parse

DATA = Path(__file__).resolve().parents[1] / "data"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_all_reduce_two_p5_over_efa_with_srun_labels():
    result = parse(read("nccl_allreduce_2xp5_efa_srun.txt"), instance_type="p5.48xlarge")
    assert (result.collective, result.ranks, result.nodes, result.gpus_per_node) == ("all_reduce", 16, 2, 8)
    assert result.hosts == ["ip-10-1-45-12", "ip-10-1-45-13"]
    assert result.gpu_model == "NVIDIA H100 80GB HBM3"
    assert (result.n_threads, result.n_gpus, result.min_bytes, result.max_bytes, result.step) == (
        1, 1, 1048576, 17179869184, "2(factor)")
    assert len(result.rows) == 15
    gib = next(row for row in result.rows if row.size == 1 << 30)
    assert (gib.count, gib.type, gib.redop, gib.root) == (268435456, "float", "sum", -1)
    assert (gib.oop_time_us, gib.oop_algbw, gib.oop_busbw, gib.oop_wrong) == (4575.6, 234.67, 440.00, 0)
    assert (gib.ip_time_us, gib.ip_algbw, gib.ip_busbw, gib.ip_wrong) == (4593.9, 233.73, 438.25, 0)
    assert result.peak_busbw == 487.01
    assert result.avg_busbw == 248.741
    assert (result.large_message_busbw, result.plateau_busbw) == (440.0, 487.01)
    assert (result.out_of_bounds, result.out_of_bounds_ok, result.wrong_total, result.complete) == (0, True, 0, True)
    assert (result.transport, result.nccl_version, result.ofi_version, result.nccl_tests_version) == (
        "efa", "2.21.5+cuda12.4", "1.11.0-aws", "2.13.11")
    assert (result.verdict, result.expected_busbw) == ("pass", 487.0)
    assert result.diagnosis == ("bus bandwidth 487.01 GB/s on the ≥ 1 GiB plateau is 100% of the 487 GB/s "
                                "published for 2 × p5.48xlarge")


def test_mpirun_tagged_output_and_collective_from_command_line():
    result = parse(read("nccl_allreduce_2xp5_efa_mpirun.txt"), instance_type="ml.p5.48xlarge")
    assert (result.collective, result.ranks, result.nodes, len(result.rows)) == ("all_reduce", 16, 2, 29)
    assert (result.rows[0].size, result.rows[-1].size) == (8, 2147483648)
    assert result.transport == "efa"
    assert result.nccl_tests_version is None
    assert result.warnings == ["NCCL WARN NET/OFI Unable to set FI_EFA_USE_DEVICE_RDMA: already set"]
    assert result.avg_busbw == 76.6235
    assert result.verdict == "pass"


def test_socket_fallback_fails_with_advice():
    result = parse(read("nccl_allreduce_2xp5_socket_srun.txt"), instance_type="p5.48xlarge")
    assert result.transport == "socket"
    assert result.ofi_version is None
    assert result.peak_busbw == 3.06
    assert result.verdict == "fail"
    assert result.diagnosis.startswith(expectations.SOCKET_ADVICE)
    assert "bus bandwidth 3.06 GB/s on the ≥ 1 GiB plateau is 1% of the 487 GB/s published for 2 × p5.48xlarge" \
        in result.diagnosis


def test_all_gather_has_no_reference_and_is_not_judged_on_bandwidth():
    result = parse(read("nccl_allgather_2xp5_efa.txt"), instance_type="p5.48xlarge")
    assert result.collective == "all_gather"
    assert (result.rows[0].redop, result.rows[0].root) == ("none", -1)
    assert (len(result.rows), result.peak_busbw, result.avg_busbw) == (8, 366.33, 301.223)
    assert (result.verdict, result.expected_busbw) == ("pass", None)
    assert "no published reference for all_gather on 2 × p5.48xlarge" in result.notes


def test_alltoall_in_place_wrong_is_not_available():
    result = parse(read("nccl_alltoall_2xp5_efa.txt"))
    assert result.collective == "alltoall"
    assert all(row.ip_wrong is None and row.oop_wrong == 0 for row in result.rows)
    assert (len(result.rows), result.peak_busbw, result.wrong_total) == (13, 47.76, 0)
    assert result.verdict == "pass"
    assert result.to_dict()["rows"][0]["ip_wrong"] is None


def test_wrong_values_fail_as_data_corruption():
    result = parse(read("nccl_allreduce_1xp5_wrong.txt"), instance_type="p5.48xlarge")
    assert (result.nodes, result.ranks, result.wrong_total) == (1, 8, 1536)
    assert result.verdict == "fail"
    assert result.diagnosis.startswith("#wrong = 1536 > 0: data corruption, check GPUs/NVLink")
    assert result.expected_busbw == 476.0


def test_truncated_run_is_an_error_with_the_failure_line():
    with pytest.raises(NcclParseError, match="truncated") as excinfo:
        parse(read("nccl_allreduce_truncated.txt"))
    assert "Test NCCL failure common.cu:1010" in str(excinfo.value)
    assert "Connection timed out" in str(excinfo.value)


def test_rows_without_footer_are_kept_but_flagged():
    text = read("nccl_allreduce_2xp5_efa_srun.txt").split("0: # Out of bounds")[0]
    result = parse(text, instance_type="p5.48xlarge")
    assert result.complete is False
    assert result.out_of_bounds is None
    assert result.verdict == "warn"
    assert "cut off" in result.diagnosis


def test_two_runs_concatenated_use_the_last():
    text = read("nccl_allreduce_2xp5_efa_srun.txt") + read("nccl_allreduce_2xp5_socket_srun.txt")
    result = parse(text, instance_type="p5.48xlarge")
    assert result.transport == "socket"
    assert result.max_bytes == 4294967296
    assert result.notes[0].startswith("the input holds 2 runs (all_reduce, all_reduce); the last one is shown")
    assert [run.transport for run in result.runs] == ["efa", "socket"]
    assert [run.verdict for run in result.runs] == ["pass", "fail"]


def test_headers_from_different_tasks_mean_no_mpi():
    single = read("nccl_allreduce_1xp5_wrong.txt").splitlines()
    text = "\n".join([f"0: {line}" for line in single] + [f"1: {line}" for line in single])
    with pytest.raises(NcclParseError, match="built without MPI"):
        parse(text, collective="all_reduce")


@pytest.mark.parametrize("text, message", [
    ("", "input is empty"),
    (b"\x7fELF\x02\x01\x01\x00\x00", "binary"),
    ("hello world\nnothing to see\n", "no nccl-tests output found"),
])
def test_not_nccl_output(text, message):
    with pytest.raises(NcclParseError, match=message):
        parse(text)


def test_collective_must_be_known_or_detectable():
    lines = read("nccl_allgather_2xp5_efa.txt").splitlines()
    table = "\n".join(line for line in lines if "Collective test" not in line and not line.startswith("#  Rank"))
    with pytest.raises(NcclParseError, match="cannot tell which collective"):
        parse(table)
    assert parse(table, collective="all_gather_perf").collective == "all_gather"
    with pytest.raises(NcclParseError, match="unknown collective 'allfoo'"):
        parse(table, collective="allfoo")
    assert normalize_collective("AllReduce") == "all_reduce"


def test_old_format_without_root_column():
    text = ("# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 1073741824 step: 1048576(bytes) warmup iters: 5 "
            "iters: 20 validation: 1\n"
            "  1073741824     268435456   float     sum   4860.1  220.93  386.63  0e+00   4855.2  221.15  387.01  0e+00\n"
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 386.82\n")
    result = parse(text, collective="all_reduce")
    (row,) = result.rows
    # "0e+00" is the old releases' error column (a maximum deviation), not a #wrong count
    assert (row.root, row.redop, row.oop_busbw, row.oop_wrong, row.oop_error, row.ip_busbw) == (
        None, "sum", 386.63, None, 0.0, 387.01)
    assert result.ranks == 8 and result.verdict == "none"  # one node, no instance type: nothing to judge against


def test_to_dict_is_json_safe():
    data = json.loads(json.dumps(parse(read("nccl_allreduce_2xp5_efa_srun.txt")).to_dict()))
    for key in ("collective", "ranks", "nodes", "hosts", "gpus_per_node", "rows", "peak_busbw", "avg_busbw",
                "out_of_bounds", "wrong_total", "transport", "nccl_version", "ofi_version", "verdict", "diagnosis",
                "expected_busbw"):
        assert key in data
    assert data["rows"][0]["size"] == 1048576


def test_each_run_keeps_its_own_collective_name():
    text = read("nccl_allreduce_2xp5_efa_srun.txt") + read("nccl_allgather_2xp5_efa.txt")
    result = parse(text)
    assert (result.collective, result.nccl_tests_version, len(result.rows)) == ("all_gather", "2.13.11", 8)
