"""Reference bandwidths, their sources, and verdict wording."""

from clusters.health.readers import expectations
from clusters.health.readers.nccl import NcclResult, NcclRow


def run(busbw: float, size: int = 1 << 30, transport: str | None = "efa", wrong: int = 0,
        model: str | None = None, nodes: int = 2) -> NcclResult:
    row = NcclRow(size, size // 4, "float", "sum", -1, 1.0, busbw / 1.875, busbw, wrong, 1.0, busbw / 1.875, busbw, 0)
    large = busbw if size >= 1 << 30 else None
    return NcclResult(collective="all_reduce", rows=[row], peak_busbw=busbw, large_message_busbw=large,
                      plateau_busbw=large, wrong_total=wrong, transport=transport, complete=True, nodes=nodes,
                      gpu_model=model, hardware=expectations.hardware_of(model))


def test_reference_buckets_and_their_published_sources():
    assert expectations.reference("p5.48xlarge", "all_reduce", 1).busbw == 476.0
    assert expectations.reference("ml.p5.48xlarge", "all_reduce", 2).busbw == 487.0
    assert expectations.reference("p5.48xlarge", "all_reduce", 64).busbw == 487.0
    assert expectations.reference("p4d.24xlarge", "all_reduce", 1).busbw == 230.0
    assert expectations.reference("p4de.24xlarge", "all_reduce", 2).busbw == 78.0
    assert expectations.reference("p5en.48xlarge", "all_reduce", 2).derived is True
    assert expectations.reference("trn1.32xlarge", "all_reduce", 2, tool="nccom-test").busbw == 47.0
    assert expectations.reference("trn1.32xlarge", "all_reduce", 2) is None  # nccl-tests figures: none
    assert expectations.reference("p5.48xlarge", "alltoall", 2) is None
    assert expectations.reference("nope", "all_reduce", 2) is None
    for table in expectations.EXPECTED.values():
        for ref in table.values():
            assert "https://" in ref.source, ref


def test_hardware_names():
    assert expectations.hardware_of("NVIDIA H100 80GB HBM3") == "H100"
    assert expectations.hardware_of("NVIDIA GH200 480GB") == "GH200"
    assert expectations.hardware_of("A100-SXM4-40GB") == "A100"
    assert expectations.hardware_of("NVIDIA H200") == "H200"
    assert expectations.hardware_of("Some Other Card") is None


def test_low_bandwidth_fails_with_the_figures():
    judged = expectations.verdict(run(44.0), "p5.48xlarge", 2)
    assert judged.verdict == "fail"
    assert judged.diagnosis == ("bus bandwidth 44 GB/s on the ≥ 1 GiB plateau is 9% of the 487 GB/s published "
                                "for 2 × p5.48xlarge")
    assert "awsome-distributed-training" in judged.reference_source


def test_thresholds():
    assert expectations.verdict(run(390.0), "p5.48xlarge", 2).verdict == "pass"  # 80 %
    assert expectations.verdict(run(300.0), "p5.48xlarge", 2).verdict == "warn"
    assert expectations.verdict(run(243.0), "p5.48xlarge", 2).verdict == "fail"


def test_small_messages_only_cannot_fail_on_bandwidth():
    judged = expectations.verdict(run(100.0, size=1 << 24), "p5.48xlarge", 2)
    assert judged.verdict == "warn"
    assert "largest message was 16,777,216 bytes" in judged.diagnosis


def test_unknown_instance_type_judges_transport_and_wrong_only():
    judged = expectations.verdict(run(1.0, transport="socket"), "x1.32xlarge", 2)
    assert judged.verdict == "fail"
    assert judged.diagnosis == expectations.SOCKET_ADVICE
    assert judged.notes[0].startswith("unknown instance type 'x1.32xlarge'")
    assert judged.expected_busbw is None


def test_other_ofi_provider_and_unknown_transport():
    assert "provider 'tcp'" in expectations.verdict(run(400.0, transport="ofi-tcp"), "p5.48xlarge", 2).diagnosis
    judged = expectations.verdict(run(430.0, transport=None), "p5.48xlarge", 2)
    assert judged.verdict == "pass"
    assert any("NCCL_DEBUG=INFO" in note for note in judged.notes)


def test_nothing_judged_is_never_a_pass():
    judged = expectations.verdict(run(430.0, transport=None, nodes=1), None, 1)
    assert judged.verdict == "none"
    assert judged.diagnosis.startswith("nothing was judged: no instance type given and no transport in the log")


def test_trainium_cluster_is_not_judged_with_nccl_figures():
    judged = expectations.verdict(run(10.0), "trn1.32xlarge", 2)
    assert judged.verdict == "warn"
    assert "nccl-tests figures do not apply (run nccom-test)" in judged.diagnosis


def test_other_hardware_than_the_cluster_is_flagged_and_judged_on_its_own_figures():
    judged = expectations.verdict(run(470.0, model="NVIDIA H100 80GB HBM3"), "p4d.24xlarge", 2)
    assert judged.verdict == "warn"
    assert judged.diagnosis.startswith("the log ran on NVIDIA H100 80GB HBM3 but this cluster is p4d.24xlarge (A100)")
    assert judged.expected_busbw == 487.0  # H100 over EFA: p5's published figure
    assert "97% of the 487 GB/s published for 2 × p5.48xlarge" in judged.diagnosis
