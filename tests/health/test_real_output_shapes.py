"""Shapes of published outputs the readers used to misread: one test per shape, on the fixture.

Real outputs are copied as published; where no published output of a shape was found, the fixture is a
published one edited into that shape and its ``.source`` note says how (``*_edited.txt``). Expected
values were read off the fixtures by hand.
"""
from __future__ import annotations

import pytest

from clusters.health.readers import expectations, nccl, nccom, runs
from clusters.health.readers.exposition import parse
from clusters.health.readers.nccl import NcclParseError
from tests import samples
from tests.samples import text


def test_every_new_fixture_names_its_source():
    for fixture in ("nccl_tests_issue287_rtx5090_alltoall.txt", "nccl_gcp_a3mega_h100_1gpu_per_node_edited.txt",
                    "nccl_tests_issue290_h100_1node_elided_edited.txt", "nccom_trn_multistream_two_blocks.txt",
                    "nccom_awsome_slurm_no_command.txt", "dcgm_kops_l4_rhel_prompt_edited.txt",
                    "nccl_coreweave_h100_64gpu_elided.txt", "nccl_coreweave_gb200_rack_graphics_device.txt"):
        note = samples.text(f"{fixture}.source")
        assert "github.com/" in note or "commit" in note, fixture
        assert note.startswith("Built by editing") == fixture.endswith("_edited.txt"), fixture


# --- nccl-tests ---------------------------------------------------------------------------------------

def test_one_gpu_per_node_is_not_judged_against_the_eight_gpu_figure():
    result = nccl.parse(text("nccl_gcp_a3mega_h100_1gpu_per_node_edited.txt"), instance_type="p5.48xlarge")
    assert (result.ranks, result.nodes, result.gpus_per_node, result.hardware) == (2, 2, 1, "H100")
    assert result.verdict == "none" and result.expected_busbw is None
    assert result.diagnosis == (
        "nothing was judged: the run had 1 GPU per node; the published figure (487 GB/s) is for 8 per node on "
        "2 × p5.48xlarge, so the two are not comparable: rerun with 8 per node to judge the bandwidth")
    eight = nccl.parse(text("nccl_gcp_a3mega_h100_2node.txt"), instance_type="p5.48xlarge")
    assert (eight.gpus_per_node, eight.verdict, eight.expected_busbw) == (8, "warn", 487.0)  # like with like


def test_ranks_from_the_data_on_as_many_nodes_given_are_one_gpu_per_node():
    # AWS's 2 × p5 table has no rank lines: the data says 16 ranks; given 16 nodes, that is 1 GPU on each
    result = runs.parse_run(text("nccl_awsome_p5_2node_srun.txt"), instance_type="p5.48xlarge", nodes=16)
    assert (result.ranks, result.nodes, result.gpus_per_node, result.verdict) == (16, 16, 1, "none")
    assert "the run had 1 GPU per node" in result.diagnosis
    given_two = runs.parse_run(text("nccl_awsome_p5_2node_srun.txt"), instance_type="p5.48xlarge", nodes=2)
    assert (given_two.gpus_per_node, given_two.verdict) == (8, "pass")


def test_elision_right_after_the_column_header_is_an_excerpt_not_a_cut_off_run():
    result = nccl.parse(text("nccl_tests_issue290_h100_1node_elided_edited.txt"))
    assert [row.size for row in result.rows] == [536870912, 1073741824, 2147483648, 4294967296]
    assert (result.excerpt, result.complete, result.plateau_busbw) == (True, False, 476.53)
    assert result.verdict == "pass"
    assert "cut off before its footer" not in result.diagnosis
    assert "an excerpt: rows were left out ('...'); figures cover the 4 rows shown" in result.notes


def test_elision_right_after_the_header_hides_the_rank_lines_not_a_one_rank_run():
    result = nccl.parse(text("nccl_coreweave_h100_64gpu_elided.txt"), instance_type="p5.48xlarge")
    assert (result.excerpt, result.complete, result.n_gpus) == (True, True, 1)
    assert result.ranks == 96  # from the data (busbw/algbw 1.979), not the header's nGpus 1 of one MPI process
    assert "an excerpt: rows were left out ('...'); figures cover the 5 rows shown" in result.notes
    assert (result.plateau_busbw, result.verdict) == (386.56, "warn")


def test_one_rank_line_out_of_an_excerpt_is_not_a_one_rank_run():
    result = nccl.parse(text("nccl_coreweave_gb200_rack_graphics_device.txt"))
    assert (result.gpu_model, result.hardware, result.hosts) == ("NVIDIA Graphics Device", None,
                                                                 ["slurm-gb200-207-171"])
    assert (result.ranks, result.gpus_per_node) == (72, None)
    assert ("the rank lines shown are part of the run's (rank 71 is listed but only 1 rank line): ranks and "
            "nodes are not counted from them") in result.notes
    on_p5 = nccl.parse(text("nccl_coreweave_gb200_rack_graphics_device.txt"), instance_type="p5.48xlarge")
    assert on_p5.verdict == "warn" and on_p5.expected_busbw is None  # a GB200 rack never passes a p5 cluster
    assert on_p5.diagnosis == ("the log ran on NVIDIA Graphics Device but this cluster is p5.48xlarge (H100): the "
                               "run is not from this cluster's hardware")


def test_rank_lines_naming_a_geforce_gpu_are_read():
    result = nccl.parse(text("nccl_tests_issue287_rtx5090_alltoall.txt"))
    assert (result.collective, result.collective_source) == ("alltoall", "command")
    assert (result.gpu_model, result.hosts, result.ranks, result.hardware) == (
        "NVIDIA GeForce RTX 5090", ["GENOA-01"], 1, None)
    assert result.verdict == "none"
    assert "no rank lines" not in result.diagnosis
    assert result.diagnosis == ("nothing was judged: no instance type given and no transport in the log; "
                                "no published reference is known for NVIDIA GeForce RTX 5090")


def test_a_gpu_the_table_does_not_know_is_still_a_mismatch_with_the_cluster():
    result = nccl.parse(text("nccl_tests_issue287_rtx5090_alltoall.txt"), instance_type="p5.48xlarge")
    assert result.verdict == "warn"
    assert result.diagnosis == ("the log ran on NVIDIA GeForce RTX 5090 but this cluster is p5.48xlarge (H100): "
                                "the run is not from this cluster's hardware")
    assert "no published reference is known for NVIDIA GeForce RTX 5090" in result.notes


def test_gpu_families_are_whole_words_of_the_device_name():
    assert expectations.hardware_of("NVIDIA L40S") == "L40S"
    assert expectations.hardware_of("NVIDIA L40") is None  # not an L4
    assert expectations.hardware_of("NVIDIA GH200 480GB") == "GH200"
    assert expectations.hardware_of("NVIDIA H200") == "H200"
    assert expectations.hardware_of("A100-SXM4-40GB") == "A100"


# --- the diagnosis and the Expected row name the same published run -----------------------------------

def test_diagnosis_says_the_run_the_figure_was_published_for():
    # CoreWeave's H100 run: 96 ranks by its figures, so 12 nodes of 8 on a p5 cluster
    twelve = runs.parse_run(text("nccl_coreweave_h100_64gpu_elided.txt"), instance_type="p5.48xlarge")
    assert (twelve.nodes, twelve.gpus_per_node, twelve.expected_busbw) == (12, 8, 487.0)
    assert twelve.reference_for == "2 × p5.48xlarge" and twelve.reference_source.startswith("2 × p5.48xlarge over EFA")
    assert "published for 2 × p5.48xlarge (the figure for 2 nodes and more; this run had 12)" in twelve.diagnosis
    assert "12 × p5.48xlarge" not in twelve.diagnosis
    on_p4d = nccl.parse(text("nccl_awsome_p4de_2node_srun.txt"), instance_type="p4d.24xlarge")
    assert on_p4d.reference_for == "2 × p4de.24xlarge" and "published for 2 × p4de.24xlarge" in on_p4d.diagnosis


# --- nccom-test -------------------------------------------------------------------------------------

def test_multistream_output_shows_the_measured_stream_and_labels_each_by_its_own_figures():
    result = nccom.parse(text("nccom_trn_multistream_two_blocks.txt"))
    first, second = result.runs
    assert result.primary_run == 0 and result is first
    assert max(row.size for row in result.rows) == 1048576 and result.peak_busbw == 16.71
    assert (first.collective, first.collective_source) == ("all_reduce", "inferred")
    assert "busbw/algbw 1.876 = 2(r−1)/r" in first.notes[1]
    assert (second.collective, second.collective_source) == ("all_gather", "command")
    assert {row.size for row in second.rows} == {1024} and second.peak_busbw == 0.0
    assert result.notes[0] == ("the input holds 2 nccom-test runs (all_reduce, all_gather); block 1, which "
                               "reaches the largest message, is shown")


def test_nccom_output_without_its_command_line_is_read_from_its_figures():
    result = runs.parse_run(text("nccom_awsome_slurm_no_command.txt"), instance_type="trn1.32xlarge")
    assert (result.tool, result.collective, result.collective_source) == ("nccom-test", "all_reduce", "inferred")
    assert (len(result.rows), result.avg_busbw, result.peak_busbw, result.complete) == (17, 0.2346, 2.8, True)
    assert "operation inferred from the data: busbw/algbw 1.972 = 2(r−1)/r, which only all-reduce gives" \
        in result.notes
    assert result.verdict == "none"  # no rank or node count in the output: nothing to compare with


def test_nccom_gathering_figures_without_a_command_line_say_why_they_are_refused():
    gathered = "\n".join(line for line in samples.text("nccom_trn_multistream_two_blocks.txt").splitlines()
                         if "nccom-test" not in line)
    with pytest.raises(NcclParseError, match="every bandwidth is 0, so the figures cannot tell"):
        nccom.parse(gathered)


# --- a scrape pasted after a shell prompt --------------------------------------------------------------

PROMPTS = [
    "[root@i-030791dc5a37cd257 ~]# ",           # RHEL / Amazon Linux
    "[ec2-user@ip-10-1-45-12 dcgm]$ ",
    "ubuntu@ip-172-31-63-210:~$ ",             # Ubuntu's bash
    "(base) root@0fed198eb8ba:/home# ",        # conda
    "gpu-node-1% ",                            # zsh
    "➜  ~ ",                                   # oh-my-zsh
    "➜  dcgm git:(main) ✗ ",
    "$ ",
    "# ",
]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_scrape_after_any_common_shell_prompt_is_read(prompt):
    pasted = text("dcgm_kops_l4_rhel_prompt_edited.txt").replace("[root@i-030791dc5a37cd257 ~]# ", prompt, 1)
    scrape = parse(pasted)
    assert scrape.hostnames == ["i-030791dc5a37cd257"] and list(scrape.gpus["i-030791dc5a37cd257"]) == [0]
    assert scrape.notes == [f"a pasted command line was removed: {(prompt + 'curl localhost:9400/metrics')!r} "
                            "(line 1)"]


def test_command_continued_on_ps2_lines_is_removed_with_it():
    pasted = text("dcgm_kops_l4_rhel_prompt_edited.txt").replace(
        "curl localhost:9400/metrics", "curl -s \\\n> -H 'Accept: text/plain' \\\n> localhost:9400/metrics", 1)
    scrape = parse(pasted)
    assert scrape.hostnames == ["i-030791dc5a37cd257"]
    assert len(scrape.notes) == 1 and scrape.notes[0].startswith("a pasted command line was removed: '[root@")
