"""Reference bandwidths and verdict wording."""

from clusters.health import expectations
from clusters.health.nccl import NcclResult, NcclRow


def run(busbw: float, size: int = 1 << 30, transport: str | None = "efa", wrong: int = 0) -> NcclResult:
    row = NcclRow(size, size // 4, "float", "sum", -1, 1.0, busbw / 1.875, busbw, wrong, 1.0, busbw / 1.875, busbw, 0)
    return NcclResult(collective="all_reduce", rows=[row], peak_busbw=busbw, large_message_busbw=busbw
                      if size >= 1 << 30 else None, wrong_total=wrong, transport=transport, complete=True, nodes=2)


def test_reference_buckets():
    assert expectations.reference("p5.48xlarge", "all_reduce", 1).busbw == 480.0
    assert expectations.reference("ml.p5.48xlarge", "all_reduce", 2).busbw == 440.0
    assert expectations.reference("p5.48xlarge", "all_reduce", 3).busbw == 440.0
    assert expectations.reference("p5.48xlarge", "all_reduce", 64).busbw == 400.0
    assert expectations.reference("p4d.24xlarge", "all_reduce", 1).busbw == 230.0
    assert expectations.reference("p5.48xlarge", "alltoall", 2) is None
    assert expectations.reference("nope", "all_reduce", 2) is None


def test_low_bandwidth_fails_with_the_figures():
    judged = expectations.verdict(run(44.0), "p5.48xlarge", 2)
    assert judged.verdict == "fail"
    assert judged.diagnosis == "bus bandwidth 44 GB/s is 10% of the 440 GB/s expected for 2 × p5.48xlarge at 1 GiB"


def test_thresholds():
    assert expectations.verdict(run(352.0), "p5.48xlarge", 2).verdict == "pass"  # 80 %
    assert expectations.verdict(run(300.0), "p5.48xlarge", 2).verdict == "warn"
    assert expectations.verdict(run(219.0), "p5.48xlarge", 2).verdict == "fail"


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


def test_trainium_is_not_judged_with_nccl_figures():
    judged = expectations.verdict(run(10.0), "trn1.32xlarge", 2)
    assert judged.verdict == "pass"
    assert any("nccom-test" in note for note in judged.notes)
