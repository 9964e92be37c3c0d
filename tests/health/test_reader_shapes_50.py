"""Shapes of collective and scrape output the readers used to misread, each on a published output where one
exists (``../shared/samples/``) and on a fixture edited into the shape where none does (``tests/data/SOURCES.md``).
"""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from clusters.health.models import ValidationRun
from clusters.health.readers import nccl, nccl_facts, runs
from clusters.health.readers.exposition import oracle_parse, parse
from clusters.health.readers.prometheus import ParseError
from clusters.health.readers.summary import summarize
from tests.health.factories_health import ClusterFactory
from tests.samples import REPOSITORY
from tests.samples import text as published

DATA = REPOSITORY / "tests" / "data"


def fixture(name: str) -> str:
    return (DATA / name).read_text()


# --- a crash after some rows is a failed run ----------------------------------------------------

def test_a_cuda_failure_after_rows_fails_the_run_and_says_why():
    result = nccl.parse(fixture("nccl_allreduce_2xp5_cuda_failure_edited.txt"), instance_type="p5.48xlarge")
    assert (len(result.rows), result.verdict) == (28, "fail")
    assert result.diagnosis.startswith("the run failed: Test NCCL failure common.cu:1005 'unhandled cuda error")
    assert "on 3 ranks, after 28 message sizes" in result.diagnosis
    assert "426.8 GB/s" in result.diagnosis  # what the sizes before the crash measured is still said
    assert "NCCL warned: NCCL WARN NET/OFI Unable to set FI_EFA_USE_DEVICE_RDMA" in result.diagnosis
    assert not any("cut off" in note for note in result.notes)
    assert result.warnings[0].endswith("'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '")


def test_a_warning_alone_is_shown_and_does_not_fail_the_run():
    result = nccl.parse(fixture("nccl_allreduce_2xp5_efa_mpirun.txt"), instance_type="p5.48xlarge")
    assert result.verdict == "pass"
    assert result.diagnosis.endswith("NCCL warned: NCCL WARN NET/OFI Unable to set FI_EFA_USE_DEVICE_RDMA: already set")


def test_nccl_error_lines_are_failures_too():
    assert nccl_facts.failures_of(["worker-1: NCCL ERROR: remote process exited", "size 8 fine"]) == [
        "worker-1: NCCL ERROR: remote process exited"]


# --- rank counts from the command line ---------------------------------------------------------

def test_ranks_and_nodes_from_mpirun_when_the_log_has_no_rank_lines():
    result = nccl.parse(fixture("nccl_allreduce_256_ranks_command_line_edited.txt"))
    assert (result.ranks, result.nodes, result.gpus_per_node) == (256, 16, 16)
    assert result.notes[0].startswith("256 ranks from the command line ($ mpirun -n 256 -npernode 16")


@pytest.mark.parametrize(("line", "expected"), [
    ("mpirun -n 256 -npernode 16 all_reduce_perf -b 8 -e 8G", {"ranks": 256, "nodes": 16}),
    ("+ mpirun --allow-run-as-root -np 2 -bind-to none /opt/nccl-tests/build/all_reduce_perf -b 8", {"ranks": 2}),
    ("mpirun -np 2 ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2", {"ranks": 4}),
    ("srun -N 2 --ntasks-per-node=8 /opt/nccl-tests/build/all_gather_perf -b 1G", {"ranks": 16, "nodes": 2}),
    ("$ srun -N2 -t5 --mpi=pmix --ntasks-per-node=4 all_reduce_perf -b 8", {"ranks": 8, "nodes": 2}),
    ("srun --nodes=4 all_reduce_perf -b 8 -e 1G", {"nodes": 4}),
    ("mpirun -np 16 -N 8 --hostfile hosts all_reduce_perf -g 1", {"ranks": 16, "nodes": 2}),
    ("all_reduce_perf -b 8 -e 128M -g 8", None),
])
def test_launch_lines(line, expected):
    assert nccl_facts.launch_of(line) == expected


def test_published_srun_line_agrees_with_its_rank_lines():
    # the CSCS run prints both: the command line's count is only used when rank lines are absent
    result = nccl.parse(published("cscs_gh200_2x4_allreduce_indented.txt", "real2"))
    assert (result.ranks, result.nodes) == (8, 2)
    assert not any("from the command line" in note for note in result.notes)


# --- -c 0: not checked ---------------------------------------------------------------------------

def test_a_run_without_the_data_check_says_it_was_not_checked():
    result = nccl.parse(fixture("nccl_allreduce_2xp5_no_check_edited.txt"), instance_type="p5.48xlarge")
    assert result.checked is False and result.wrong_total == 0
    assert "results were not checked (-c 0: the error column is N/A)" in result.diagnosis
    assert result.to_dict()["checked"] is False
    assert nccl.parse(fixture("nccl_allreduce_2xp5_efa_mpirun.txt")).checked is True


# --- interleaved runs ------------------------------------------------------------------------------

def test_two_runs_interleaved_in_one_table_are_two_runs():
    result = nccl.parse(fixture("nccl_allreduce_two_runs_interleaved_edited.txt"), instance_type="p5.48xlarge")
    assert len(result.runs) == 2
    assert [(len(run.rows), run.ranks, run.nodes) for run in result.runs] == [(12, 8, 1), (12, 8, 1)]
    assert [run.peak_busbw for run in result.runs] == [449.97, 3.02]
    assert [[row.size for row in run.rows] for run in result.runs][0] == [1 << n for n in range(20, 32)]
    assert "the sizes restart mid-table: the rows of 2 runs" in " ".join(result.notes)


def test_zero_byte_rows_of_one_run_are_not_a_restart():
    rows = nccl.parse(fixture("nccl_alltoall_2xp5_efa.txt")).rows
    assert nccl_facts.split_restarts(rows) == [rows]


# --- nccom-test's other operations ----------------------------------------------------------------

@pytest.mark.parametrize(("name", "collective", "ranks", "rows", "peak", "avg"), [
    ("nccom_permute_8r_custom_pairs.txt", "permute", 8, 1, 37.52, 37.523),
    ("nccom_allgv_4r_variable_size.txt", "all_gatherv", 4, 1, 0.09, 0.0944),
    ("nccom_alltoallv_2node_2r.txt", "alltoallv", 2, 1, 0.55, 0.549),
])
def test_nccom_other_operations_are_read_with_their_figures(name, collective, ranks, rows, peak, avg):
    result = runs.parse_run(published(name, "real3"), instance_type="trn1.32xlarge")
    assert (result.collective, result.ranks, len(result.rows), result.peak_busbw, result.avg_busbw) == (
        collective, ranks, rows, peak, avg)
    assert result.verdict == "none" and f"no published reference for {collective}" in result.diagnosis
    assert result.tool == "nccom-test"


def test_nccom_two_instances_of_alltoallv():
    result = runs.parse_run(published("nccom_alltoallv_2node_2r.txt", "real3"))
    assert result.nodes == 2 and result.rows[0].size == 1048608


# --- a dcgm-exporter scrape pasted into Markdown ---------------------------------------------------

def _markdown(scrape: str) -> str:
    """The published scrape as a how-to page would show it: prose, two fenced blocks, prose between them."""
    lines = scrape.splitlines()
    half = len(lines) // 2
    return ("# Checking the exporter\n\nFirst we forward the port and scrape it:\n\n```console\n"
            + "\n".join(lines[:half]) + "\n```\n\nThe rest of the output follows; note the clocks.\n\n"
            "- every GPU is listed\n\n```\n" + "\n".join(lines[half:]) + "\n```\n\nThat is all it needs.\n")


@pytest.mark.parametrize("name", ["dcgm_kops_l4_no_xid.txt", "dcgm_lke_rtx4000_with_xid.txt"])
def test_a_scrape_pasted_into_markdown_is_read_from_its_code_blocks(name):
    plain = parse(published(name))
    pasted = _markdown(published(name))
    scrape = parse(pasted)
    assert (scrape.hostnames, scrape.samples, scrape.families_seen) == (
        plain.hostnames, plain.samples, plain.families_seen)
    assert "Markdown text around the code blocks was removed (line 3)" in scrape.notes
    assert summarize(scrape, None).faults == summarize(plain, None).faults
    assert oracle_parse(pasted).samples == scrape.samples  # the oracle cleans the same way


def test_a_broken_line_outside_markdown_is_still_refused():
    with pytest.raises(ParseError):
        parse('DCGM_FI_DEV_GPU_TEMP{gpu="0",Hostname="h"} 40\nDCGM_FI_DEV_GPU_TEMP{gpu="1" 41\n')


# --- the same shapes uploaded on the validation page --------------------------------------------------

@pytest.fixture
def p5(world):
    return ClusterFactory(organization=world.org_a, name="alpha-train", instance_type="p5.48xlarge")


def _upload(client, world, cluster, name: str, body: str):
    client.force_login(world.customer_a)
    response = client.post(reverse("health:validationrun_add", kwargs={"pk": cluster.pk}),
                           {"file": SimpleUploadedFile(name, body.encode())})
    assert response.status_code == 302, response.content.decode()[:2000]
    run = ValidationRun.objects.latest("pk")
    return run, client.get(run.get_absolute_url()).content.decode()


def test_an_uploaded_crash_is_a_failed_run_whose_page_says_why(client, world, p5):
    run, page = _upload(client, world, p5, "crash.txt", fixture("nccl_allreduce_2xp5_cuda_failure_edited.txt"))
    assert run.verdict == "fail"
    assert "unhandled cuda error" in page and "on 3 ranks" in page


def test_an_uploaded_unchecked_run_says_so_instead_of_zero_wrong(client, world, p5):
    run, page = _upload(client, world, p5, "nocheck.txt", fixture("nccl_allreduce_2xp5_no_check_edited.txt"))
    assert run.result["checked"] is False
    assert "not checked (run with -c 0: the error column is N/A)" in page and "0 wrong" not in page


def test_an_uploaded_permute_run_is_stored_with_its_figures(client, world):
    trn1 = ClusterFactory(organization=world.org_a, name="alpha-trn", instance_type="trn1.32xlarge")
    run, page = _upload(client, world, trn1, "permute.txt", published("nccom_permute_8r_custom_pairs.txt", "real3"))
    assert (run.collective, run.verdict, run.ranks, run.result["peak_busbw"]) == ("permute", "none", 8, 37.52)
    assert "no published reference for permute" in page
