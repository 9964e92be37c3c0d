"""nccl-tests and nccom-test outputs published by AWS, NVIDIA and others, read and judged.

Every expected figure below was read off the fixture by hand (see data/real/SOURCES.md);
averages of runs without a footer were summed from the fixture's busbw columns independently.
"""
from __future__ import annotations

import io

import pytest

from clusters.health.readers import nccl, nccom, runs
from clusters.health.readers.nccl import NcclParseError
from tests import samples
from tests.samples import text

# fixture, instance type -> collective, source, rows, peak, avg, plateau, ranks, nodes, hardware, transport,
#                           nccl version, verdict
CASES = [
    ("nccl_gcp_a3mega_h100_2node.txt", None,
     ("all_reduce", "command", 31, 338.82, 70.742, 338.82, 16, 2, "H100", None, None, "none")),
    ("nccl_gcp_a3mega_h100_2node.txt", "p5.48xlarge",
     ("all_reduce", "command", 31, 338.82, 70.742, 338.82, 16, 2, "H100", None, None, "warn")),
    ("nccl_awsome_p5_2node_srun.txt", "p5.48xlarge",
     ("all_reduce", "inferred", 32, 487.26, 124.536, 487.26, 16, 2, None, None, None, "pass")),
    ("nccl_awsome_p5_2node_srun.txt", None,
     ("all_reduce", "inferred", 32, 487.26, 124.536, 487.26, 16, None, None, None, None, "none")),
    ("nccl_awsome_p4de_2node_srun.txt", "p4de.24xlarge",
     ("all_reduce", "inferred", 29, 78.33, 18.536, 78.33, 16, 2, None, None, None, "pass")),
    ("nccl_awsome_eks_p5_excerpt.txt", "p5.48xlarge",
     ("all_reduce", "inferred", 7, 437.89, 52.9753, 437.89, 16, 2, None, None, None, "pass")),
    ("nccl_eks_p4d_2node_old_ranks.txt", "p4d.24xlarge",
     ("all_reduce", "inferred", 30, 43.81, 11.2432, 43.81, 16, 2, "A100", "efa", "2.9.9+cuda11.2", "warn")),
    ("nccl_eks_p4d_2node_old_ranks.txt", None,
     ("all_reduce", "inferred", 30, 43.81, 11.2432, 43.81, 16, 2, "A100", "efa", "2.9.9+cuda11.2", "warn")),
    ("nccl_dgx2_v100_several_runs.md", None,
     ("reduce_scatter", "command", 31, 64.16, 20.3609, 64.16, 12, 1, "V100", None, None, "none")),
    ("nccl_tests_issue290_h100_1node.txt", None,
     ("all_reduce", "inferred", 6, 476.53, 439.369, 476.53, 8, 1, "H100", None, None, "pass")),
    ("nccl_tests_issue290_h100_2node_ib_srun.txt", None,
     ("all_reduce", "inferred", 11, 167.87, 142.735, 155.57, 16, 2, "H100", None, None, "none")),
    ("nccl_tests_issue290_h100_2node_ib_srun.txt", "p5.48xlarge",
     ("all_reduce", "inferred", 11, 167.87, 142.735, 155.57, 16, 2, "H100", None, None, "fail")),
    ("nccom_trn1_2node_allr.txt", "trn1.32xlarge",
     ("all_reduce", "command", 28, 47.09, 9.3924, 47.09, 64, 2, "Trainium", None, None, "pass")),
    ("nccom_trn1_1node_allr.txt", "trn1.32xlarge",
     ("all_reduce", "command", 11, 52.83, 23.6671, 52.83, 2, 1, "Trainium", None, None, "none")),
]


@pytest.mark.parametrize(("name", "instance_type", "expected"), CASES)
def test_published_run_reads_right(name, instance_type, expected):
    result = runs.parse_run(text(name), instance_type=instance_type)
    got = (result.collective, result.collective_source, len(result.rows), result.peak_busbw, result.avg_busbw,
           result.plateau_busbw, result.ranks, result.nodes, result.hardware, result.transport,
           result.nccl_version, result.verdict)
    assert got == expected


def test_gcp_h100_run_is_not_judged_across_nodes_without_efa():
    result = nccl.parse(text("nccl_gcp_a3mega_h100_2node.txt"))
    assert result.hosts == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert (result.gpu_model, result.gpus_per_node, result.max_bytes) == ("NVIDIA H100 80GB HBM3", 8, 8589934592)
    assert (result.large_message_busbw, result.out_of_bounds, result.out_of_bounds_ok) == (298.82, 0, True)
    assert result.diagnosis == ("nothing was judged: no instance type given and no transport in the log; no published "
                                "reference for H100 across nodes over an unknown fabric (the figures are for EFA on AWS)")
    on_p5 = nccl.parse(text("nccl_gcp_a3mega_h100_2node.txt"), instance_type="p5.48xlarge")
    assert on_p5.diagnosis == ("bus bandwidth 338.82 GB/s on the ≥ 1 GiB plateau is 70% of the 487 GB/s "
                               "published for 2 × p5.48xlarge")


def test_same_log_on_a_cluster_of_other_hardware_is_flagged():
    result = nccl.parse(text("nccl_gcp_a3mega_h100_2node.txt"), instance_type="p4d.24xlarge")
    assert result.verdict == "warn"
    assert result.diagnosis.startswith("the log ran on NVIDIA H100 80GB HBM3 but this cluster is p4d.24xlarge (A100)")


def test_aws_published_p5_run_passes_on_the_plateau_not_only_at_one_gib():
    result = nccl.parse(text("nccl_awsome_p5_2node_srun.txt"), instance_type="p5.48xlarge")
    assert (result.large_message_busbw, result.plateau_busbw, result.expected_busbw) == (440.96, 487.26, 487.0)
    assert "awsome-distributed-training" in result.reference_source
    assert result.excerpt and not result.complete
    assert "collective inferred from the data: busbw/algbw 1.875 = 2(n−1)/n for n = 16, count = size/4 B" \
        in result.notes
    assert "2 nodes: 16 ranks at 8 per p5.48xlarge" in result.notes


def test_aws_published_p4de_run_is_the_p4d_reference():
    result = nccl.parse(text("nccl_awsome_p4de_2node_srun.txt"), instance_type="p4d.24xlarge")
    assert (result.large_message_busbw, result.plateau_busbw, result.verdict) == (76.86, 78.33, "pass")


def test_elided_excerpt_is_read_not_refused():
    result = nccl.parse(text("nccl_awsome_eks_p5_excerpt.txt"), instance_type="p5.48xlarge")
    assert [row.size for row in result.rows] == [0, 67108864, 134217728, 268435456, 536870912, 1073741824,
                                                 2147483648]
    assert result.excerpt and result.complete and result.wrong_total == 0
    assert (result.large_message_busbw, result.out_of_bounds_ok) == (313.29, True)
    assert "an excerpt: rows were left out ('...'); figures cover the 7 rows shown" in result.notes


def test_readme_with_three_runs_gives_three_runs():
    # The README publishes these three outputs in one document, fenced, with prose between them; the document
    # itself is not kept, so its shape is rebuilt here around the three published blocks.
    blocks = [text(name) for name in ("nccl_awsome_p4de_2node_srun.txt", "nccl_awsome_p5_2node_srun.txt",
                                      "nccl_awsome_eks_p5_excerpt.txt")]
    document = "".join(f"Run {i} of the guide, as printed:\n\n```\n{block}```\n\n" for i, block in enumerate(blocks))
    result = nccl.parse(document, instance_type="p5.48xlarge")
    assert [(len(run.rows), run.peak_busbw) for run in result.runs] == [(29, 78.33), (32, 487.26), (7, 437.89)]
    assert result.primary_run == 2 and len(result.rows) == 7
    assert [run.collective for run in result.runs] == ["all_reduce"] * 3
    assert result.runs[0].verdict == "fail"  # the p4de figures judged as p5: 78.33 is 16 % of 487
    assert result.to_dict()["runs"][1]["plateau_busbw"] == 487.26


def test_old_release_with_five_collectives_in_one_file():
    result = nccl.parse(text("nccl_dgx2_v100_several_runs.md"))
    names = [run.collective for run in result.runs]
    assert names == ["all_gather", "all_reduce", "broadcast", "reduce", "reduce_scatter"]
    assert [run.avg_busbw for run in result.runs] == [30.2993, 42.5578, 41.2456, 41.3386, 20.3609]
    assert [run.peak_busbw for run in result.runs][:3] == [112.34, 123.57, 122.15]
    assert all((run.ranks, run.nodes, run.hosts) == (12, 1, ["seville"]) for run in result.runs)
    gather, allreduce, bcast, red, scatter = result.runs
    assert (gather.rows[3].redop, gather.rows[3].root, gather.rows[3].oop_error) == (None, None, 0.0)
    assert (bcast.rows[0].redop, bcast.rows[0].root) == (None, 0)
    assert (red.rows[0].redop, red.rows[0].root) == ("sum", 0)
    assert (scatter.rows[0].redop, scatter.rows[0].root) == ("sum", None)
    assert (gather.out_of_bounds, gather.out_of_bounds_ok, gather.verdict) == (4, False, "fail")
    assert gather.rows[-1].oop_error == 1.0
    assert allreduce.verdict == "none" and "no published reference is known for V100" in allreduce.diagnosis
    # the data alone names the same collectives as the command lines
    assert [nccl.infer_collective(run.rows, run.ranks)[0] for run in result.runs] == names


def test_p4d_over_efa_with_old_rank_lines_counts_every_rank():
    result = nccl.parse(text("nccl_eks_p4d_2node_old_ranks.txt"), instance_type="p4d.24xlarge")
    assert result.hosts == ["nccl-tests-efa-16-worker-0", "nccl-tests-efa-16-worker-1"]
    assert (result.ranks, result.gpus_per_node, result.gpu_model) == (16, 8, "A100-SXM4-40GB")
    assert (result.rows[0].redop, result.rows[0].root, result.rows[0].oop_wrong, result.rows[0].oop_error) == (
        "sum", None, None, 2e-07)
    assert result.diagnosis == ("bus bandwidth 43.81 GB/s on the ≥ 1 GiB plateau is 56% of the 78 GB/s "
                                "published for 2 × p4de.24xlarge")


def test_trainium_cluster_judges_nccom_but_not_nccl_figures():
    neuron = runs.parse_run(text("nccom_trn1_2node_allr.txt"), instance_type="trn1.32xlarge")
    assert (neuron.tool, neuron.rows[-1].size, neuron.rows[-1].oop_time_us, neuron.rows[-1].ip_busbw) == (
        "nccom-test", 1073741824, 41806.0, None)
    assert neuron.diagnosis == ("bus bandwidth 47.09 GB/s on the ≥ 1 GiB plateau is 100% of the 47 GB/s "
                                "published for 2 × trn1.32xlarge")
    gpu_log = runs.parse_run(text("nccl_eks_p4d_2node_old_ranks.txt"), instance_type="trn1.32xlarge")
    assert gpu_log.verdict == "warn" and "run nccom-test" in gpu_log.diagnosis
    on_gpus = nccom.parse(text("nccom_trn1_2node_allr.txt"), instance_type="p5.48xlarge")
    assert on_gpus.verdict == "warn" and "not this one" in on_gpus.diagnosis


def test_nccom_failure_and_non_output():
    failed = ("nccom-test -r 2 allr\n     size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
              "    33554432    Failure running neuron-bench - log file /tmp/nccom_test_log_7pqpdfjf.log\n"
              "1 errors found - test failed\n")
    with pytest.raises(NcclParseError, match="nccom-test failed before any result: 33554432    Failure running"):
        nccom.parse(failed)


def test_streamed_lines_read_like_the_whole_text():
    whole = nccl.parse(text("nccl_eks_p4d_2node_old_ranks.txt"), instance_type="p4d.24xlarge")
    with open(samples.path("nccl_eks_p4d_2node_old_ranks.txt"), "rb") as handle:
        streamed = nccl.parse(handle, instance_type="p4d.24xlarge")
    assert streamed.to_dict() == whole.to_dict()
    assert runs.parse_run(io.StringIO(text("nccom_trn1_2node_allr.txt"))).peak_busbw == 47.09


def test_launcher_prefixes_of_every_common_kind():
    assert nccl.strip_prefix("[1,12]<stdout>:#  Rank  0 Group") == ("1,12", "#  Rank  0 Group")
    assert nccl.strip_prefix(" 0: # nThread 1") == ("0", "# nThread 1")
    assert nccl.strip_prefix("10.3.35.83: # nThread 1 nGpus 1") == ("10.3.35.83", "# nThread 1 nGpus 1")
    assert nccl.strip_prefix("node001:   1073741824  268435456") == ("node001", "1073741824  268435456")
    assert nccl.strip_prefix("(head, rank=0, pid=3808) [1,0]<stdout>:#  Rank") == ("head,0", "#  Rank")
    assert nccl.strip_prefix(">    /opt/src/nccl-tests/build/all_reduce_perf -b 8") == (
        None, "/opt/src/nccl-tests/build/all_reduce_perf -b 8")
    assert nccl.strip_prefix("[default3]:#  Rank  3 Group") == ("default3", "#  Rank  3 Group")
    assert nccl.strip_prefix("[pod/nccl-launcher-x/mpi] [1,0]<stdout>:# nThread") == (
        "pod/nccl-launcher-x/mpi", "# nThread")
    assert nccl.strip_prefix("Warning: Permanently added 'x'") == (None, "Warning: Permanently added 'x'")
    assert nccl.strip_prefix("ip-10-1-2-3:25:25 [0] NCCL INFO x")[0] is None


def test_pdsh_prefixed_real_log_reads_like_the_plain_one():
    plain = nccl.parse(text("nccl_gcp_a3mega_h100_2node.txt"))
    prefixed = "".join(f"10.3.35.83: {line}\n" for line in text("nccl_gcp_a3mega_h100_2node.txt").splitlines())
    again = nccl.parse(prefixed)
    assert (again.collective, len(again.rows), again.ranks, again.avg_busbw) == (
        plain.collective, len(plain.rows), plain.ranks, plain.avg_busbw)


def test_binary_with_a_name_suffix_names_the_collective():
    table = "\n".join(line for line in text("nccl_gcp_a3mega_h100_2node.txt").splitlines()
                      if "all_reduce_perf" not in line)
    suffixed = table.replace("# nThread", "srun --mpi=pmix all_gather_perf_mpi -b 512M -e 8G -f 2 -g 1\n# nThread", 1)
    result = nccl.parse(suffixed)
    assert (result.collective, result.collective_source) == ("all_gather", "command")
    assert nccl.normalize_collective("all_reduce_perf_mpi") == "all_reduce"


def _line(size, count, oop, ip, per_iter=None, stamp=None):
    """A result line laid out with the printf formats of nccl-tests' src/util.cu (writeBenchmarkLine*,
    writePerIterReport, writeTimestamp)."""
    line = f"{size:12d}  {count:12d}  {'float':>8s}  {'sum':>6s}  {-1:6d}"
    for block, extra in ((oop, per_iter), (ip, per_iter)):
        line += f"  {block[0]:>7}  {block[1]:>6}  {block[2]:>6}  {block[3]:6g}"
        if extra:
            line += "".join(f"  {value:>7}" for value in extra)
    return line + (f"{stamp:>21s}" if stamp else "")


def test_columns_added_by_current_options_are_read_not_truncated():
    header = ("# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803\n"
              "# Collective test starting: all_reduce_perf\n"
              "# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 2147483648 step: 2(factor) warmup iters: 1 "
              "iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n")
    per_iter_columns = ("#       size         count      type   redop    root     time   algbw   busbw  #wrong"
                        "    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
                        "    i_p99    i_cv%            timestamp\n")
    rows = [_line(1073741824, 268435456, ("4575.6", "234.67", "440.00", 0), ("4593.9", "233.73", "438.25", 0),
                  per_iter=("4501.2", "4710.9", "4710.9", "1.23"), stamp="2026-11-30 10:01:02"),
            _line(2147483648, 536870912, ("9074.5", "236.65", "443.72", 0), ("9108.5", "235.77", "442.06", 0),
                  per_iter=("9001.0", "9210.4", "9210.4", "0.98"), stamp="2026-11-30 10:01:05")]
    footer = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 441.008 \n#\n# Collective test concluded: all_reduce_perf\n"
    result = nccl.parse(header + per_iter_columns + "\n".join(rows) + "\n" + footer, instance_type="p5.48xlarge")
    assert (len(result.rows), result.complete, result.nccl_tests_version) == (2, True, "2.19.6")
    first = result.rows[0]
    assert (first.oop_busbw, first.ip_busbw, first.oop_wrong, first.timestamp) == (440.0, 438.25, 0,
                                                                                   "2026-11-30 10:01:02")
    assert first.per_iteration == [4501.2, 4710.9, 4710.9, 1.23, 4501.2, 4710.9, 4710.9, 1.23]
    stamped_only = nccl.parse(header + "\n".join(_line(1073741824, 268435456, ("4575.6", "234.67", "440.00", 0),
                                                        ("4593.9", "233.73", "438.25", 0), stamp="2026-11-30 10:01:02")
                                                  for _ in range(1)) + "\n" + footer)
    assert (stamped_only.rows[0].timestamp, stamped_only.rows[0].ip_busbw) == ("2026-11-30 10:01:02", 438.25)


def test_one_h100_node_without_instance_type_is_judged_on_its_hardware():
    result = nccl.parse(text("nccl_tests_issue290_h100_1node.txt"))
    assert (result.hosts, result.gpus_per_node, result.n_gpus, result.expected_busbw) == (["node005"], 8, 8, 476.0)
    assert "judged against p5.48xlarge's figures: the log ran on H100" in result.notes
    assert "nccl-tests/issues/290" in result.reference_source
    assert result.diagnosis == ("bus bandwidth 476.53 GB/s on the ≥ 1 GiB plateau is 100% of the 476 GB/s "
                                "published for 1 × p5.48xlarge")


def test_validation_off_gives_no_wrong_counts():
    result = nccl.parse(text("nccl_tests_issue290_h100_2node_ib_srun.txt"))
    assert all(row.oop_wrong is None and row.ip_wrong is None for row in result.rows)
    assert (result.wrong_total, result.out_of_bounds_ok, result.large_message_busbw) == (0, True, 149.91)
