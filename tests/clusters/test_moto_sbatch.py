"""The emulated validation job: sbatch through SSM on the embedded endpoint posts real-format output."""

import http.server
import random
import threading
import time
import urllib.parse

import pytest

from clusters.health.readers import nccl, runs
from clusters.health.validation import pairwise
from clusters.software import release
from sandbox.aws import moto_collectives, moto_headnode, moto_sbatch
from tests.clusters.test_moto_headnode import _parallelcluster, _send, client  # noqa: F401 - fixture
from tests.clusters.test_moto_resources import REGION

HOSTS = ["gpu-st-p5-1", "gpu-st-p5-2", "gpu-st-p5-3", "gpu-st-p5-4"]


@pytest.fixture
def receiver():
    """A stand-in for the portal's upload route: records (path, query, token, body)."""
    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            url = urllib.parse.urlsplit(self.path)
            received.append((url.path, dict(urllib.parse.parse_qsl(url.query)), self.headers["Authorization"], body))
            self.send_response(202)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", received
    server.shutdown()


@pytest.fixture(autouse=True)
def quick_jobs(monkeypatch):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 0.2)


def _wait(received, count):
    deadline = time.monotonic() + 20
    while len(received) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return received


def _submit(ssm, head, **values):
    script = release.validation_script(**values)
    return _send(ssm, head, f"sbatch --parsable <<'GENIAC_JOB'\n{script}\nGENIAC_JOB")


# The best run's share of the published plateau, times four standard deviations of the largest rows' jitter (a
# plateau is read from those rows): 1.02 was exceeded by about one run in sixty (498 GB/s of 487).
HIGHEST = moto_collectives.RUN_SPREAD[1] * (1 + 4 * moto_collectives.ROW_JITTER[1])


def test_the_generated_outputs_read_as_the_real_tools_print_them():
    result = runs.parse_run(moto_collectives.nccl_tests("all_reduce", HOSTS[:2], "p5.48xlarge"),
                            instance_type="p5.48xlarge", nodes=2)
    assert (result.collective, result.nodes, result.ranks, result.verdict) == ("all_reduce", 2, 16, "pass")
    assert 0.94 * 487.0 <= result.plateau_busbw <= HIGHEST * 487.0  # around the published figure, never canned
    assert (result.nccl_version, result.ofi_version) == ("2.27.7+cuda12.8", "1.16.3")
    slow = runs.parse_run(moto_collectives.nccl_tests("all_reduce", HOSTS[:2], "p5.48xlarge", factor=0.55),
                          instance_type="p5.48xlarge", nodes=2)
    assert slow.verdict in ("warn", "fail")
    trn = runs.parse_run(moto_collectives.nccom_test("all_reduce", ["10.1.4.145", "10.1.4.138"]),
                         instance_type="trn1.32xlarge", nodes=2)
    assert trn.to_dict()["tool"] == "nccom-test"
    assert trn.verdict == "pass"
    for collective in ("all_gather", "reduce_scatter", "alltoall"):
        assert nccl.parse(moto_collectives.nccl_tests(collective, HOSTS[:2], "p5.48xlarge")).collective == collective


def test_two_emulated_runs_differ_as_real_runs_do_and_a_slow_link_reads_lower():
    plateaus = [runs.parse_run(moto_collectives.nccl_tests("all_reduce", HOSTS[:2], "p5.48xlarge",
                                                           rng=random.Random(seed)),
                               instance_type="p5.48xlarge", nodes=2).plateau_busbw for seed in range(8)]
    assert len(set(plateaus)) == 8 and 487.0 not in plateaus
    assert all(0.94 * 487.0 <= p <= HIGHEST * 487.0 for p in plateaus)
    slow = runs.parse_run(moto_collectives.nccl_tests("all_reduce", HOSTS[:2], "p5.48xlarge", factor=0.55,
                                                      rng=random.Random(1)), instance_type="p5.48xlarge", nodes=2)
    assert slow.plateau_busbw < 0.6 * min(plateaus)
    trn = {runs.parse_run(moto_collectives.nccom_test("all_reduce", ["10.1.4.145", "10.1.4.138"],
                                                      rng=random.Random(seed)),
                          instance_type="trn1.32xlarge", nodes=2).plateau_busbw for seed in range(4)}
    assert len(trn) == 4


def test_sbatch_posts_each_collective_and_sacct_follows_the_job(client, receiver):  # noqa: F811
    url, received = receiver
    head = _parallelcluster(client)["HeadNodeInstanceId"]
    ssm = client("ssm")
    _, invocation = _submit(ssm, head, collectives="all_reduce all_gather", hosts=" ".join(HOSTS[:2]),
                            upload_url=f"{url}/api/validation/jobs/7/output/", upload_token="gv7.secret",
                            nccl_version="v2.27.7-1", ofi_version="v1.16.3")
    assert invocation["Status"] == "Success"
    job_id = invocation["StandardOutputContent"].strip()
    assert job_id.isdigit()
    _wait(received, 2)
    assert [(path, query, token) for path, query, token, _ in received] == [
        ("/api/validation/jobs/7/output/", {"collective": "all_reduce"}, "Bearer gv7.secret"),
        ("/api/validation/jobs/7/output/", {"collective": "all_gather"}, "Bearer gv7.secret"),
    ]
    first = runs.parse_run(received[0][3], instance_type="p5.48xlarge")
    assert (first.hosts, first.verdict) == (HOSTS[:2], "pass")
    time.sleep(0.3)
    _, invocation = _send(ssm, head, f"sacct -j {job_id} --noheader -P --format=JobID,JobName,State,ExitCode")
    assert invocation["StandardOutputContent"] == f"{job_id}|geniac-validation|COMPLETED|0:0\n"
    _, invocation = _send(ssm, head, "squeue --noheader")
    assert invocation["StandardOutputContent"] == ""


def test_a_pairwise_sweep_finds_the_emulated_slow_node(client, receiver):  # noqa: F811
    """A slow link seeded in the emulated hardware (not the sweep's last node) shows in the figures alone."""
    url, received = receiver
    head = _parallelcluster(client)["HeadNodeInstanceId"]
    moto_sbatch.seed_slow_link(moto_headnode.cluster_of("123456789012", REGION, head), HOSTS[1])
    _, invocation = _submit(client("ssm"), head, mode="pairwise", hosts=" ".join(HOSTS),
                            upload_url=f"{url}/out/", upload_token="gv8.secret")
    assert invocation["Status"] == "Success"
    _wait(received, 6)
    results = []
    for _, query, _, body in received:
        run = runs.parse_run(body, instance_type="p5.48xlarge")
        assert sorted(run.hosts) == sorted(query["pair"].split(","))
        results.append((tuple(query["pair"].split(",")), run.plateau_busbw))
    sweep = pairwise.analyse(results)
    assert sweep.slow_nodes == [HOSTS[1]]
    assert {p.hosts for p in sweep.outliers} == {(HOSTS[0], HOSTS[1]), (HOSTS[1], HOSTS[2]), (HOSTS[1], HOSTS[3])}


def test_a_script_that_is_not_one_is_refused(client):  # noqa: F811
    head = _parallelcluster(client)["HeadNodeInstanceId"]
    _, invocation = _send(client("ssm"), head, "sbatch --parsable <<'EOF'\necho hi\nEOF")
    assert (invocation["Status"], invocation["ResponseCode"]) == ("Failed", 1)
    assert "must start with #!" in invocation["StandardErrorContent"]


def test_pairwise_analysis_without_a_single_culprit():
    sweep = pairwise.analyse([(("a", "b"), 480.0), (("a", "c"), 300.0), (("b", "c"), 485.0)])
    assert [p.hosts for p in sweep.outliers] == [("a", "c")] and sweep.slow_nodes == []
    assert pairwise.analyse([(("a", "b"), 480.0), (("c", "d"), 470.0)]).outliers == []
