"""The families the health readers never read only mark which GPUs and devices exist: the report is the
same with or without them, and a broken line is refused in any family."""
from __future__ import annotations

import io

import pytest
from django.urls import reverse
from prometheus_client.parser import text_fd_to_metric_families

from clusters.health.ingest import pushes
from clusters.health.ingest import service as services
from clusters.health.models import GpuFault, HealthPush, NodeHealth
from clusters.health.readers.exposition import parse
from clusters.health.readers.prometheus import ParseError, parse_families
from tests.health.factories_health import ClusterFactory, sample

SCRAPE = sample("dcgm_p5_xid79_missing_gpu.prom") + sample("efa_p5_two_nodes.prom")


def _renamed(family: str, as_name: str) -> str:
    """The lines of ``family`` (read by the portal) under a name it never reads: same GPUs, other values."""
    lines = [line.replace(family, as_name) for line in SCRAPE.splitlines(keepends=True)
             if line.startswith(family + "{") or line.startswith(("# HELP " + family + " ", "# TYPE " + family + " "))]
    return "".join(line.replace(" 79\n", " 3\n") for line in lines)


EXTRA_FIRST = (
    "# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines 42\n"
    + _renamed("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_PROF_NVLINK_TX_BYTES")
    + "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n# TYPE node_cpu_seconds_total counter\n"
    + "".join(f'node_cpu_seconds_total{{cpu="{c}",mode="idle"}} {1000 + c}.5\n' for c in range(4))
)
EXTRA_LAST = (
    _renamed("node_amazonefa_rx_drops", "node_amazonefa_rx_refused_events")
    + "# TYPE node_scrape_collector_duration_seconds summary\n"
    + 'node_scrape_collector_duration_seconds_sum{collector="cpu"} 0.1\n'
    + 'node_scrape_collector_duration_seconds_count{collector="cpu"} 3\n'
    + 'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="0",Hostname="ip-10-1-45-13"} 0\n'
)


def _push(client, cluster, text: str) -> HealthPush:
    token = services.rotate_token(cluster)
    response = client.post(reverse("health-api:ingest", kwargs={"cluster_id": cluster.pk}), data=text.encode(),
                           content_type="text/plain; version=0.0.4", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 202, response.content
    pushes.process(response.json()["push"])
    return HealthPush.objects.select_related("report").get(pk=response.json()["push"])


def _unfiltered(text: str):
    """What the readers make of every family, each one parsed by prometheus_client."""
    return parse_families(text_fd_to_metric_families(io.StringIO(text)))


def test_extra_unknown_families_give_the_same_report(client, world, cluster):
    plain = _push(client, cluster, SCRAPE)
    padded = _push(client, ClusterFactory(organization=world.org_a, name="alpha-padded"), EXTRA_FIRST + SCRAPE + EXTRA_LAST)
    assert plain.status == padded.status == "done", (plain.error, padded.error)
    assert padded.report.summary == plain.report.summary
    assert padded.report.samples > plain.report.samples  # the dropped samples are still counted

    def rows(push, model, fields):
        return sorted(model.objects.filter(cluster=push.cluster).values_list(*fields))

    node_fields = ("hostname", "verdict", "reasons", "gpus_seen", "missing_gpus", "efa_devices_seen", "figures")
    assert rows(padded, NodeHealth, node_fields) == rows(plain, NodeHealth, node_fields)
    fault_fields = ("hostname", "gpu", "kind", "xid", "severity", "verdict")
    assert rows(padded, GpuFault, fault_fields) == rows(plain, GpuFault, fault_fields)
    assert ("ip-10-1-45-13", "2", "xid", 79) in [r[:4] for r in rows(padded, GpuFault, fault_fields)]


def test_the_reader_equals_every_family_parsed():
    text = EXTRA_FIRST + SCRAPE + EXTRA_LAST
    read, every = parse(text), _unfiltered(text)
    assert (read.gpus, read.efa, read.models) == (every.gpus, every.efa, every.models)
    assert (read.families, read.samples, read.families_seen) == (every.families, every.samples, every.families_seen)
    assert "DCGM_FI_PROF_NVLINK_TX_BYTES" in read.families_seen


def test_gpus_exported_only_in_unread_families_are_still_seen():
    temps = "".join(line for line in SCRAPE.splitlines(keepends=True)
                    if line.startswith(("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEM_CLOCK")))
    scrape = parse(temps)
    assert sorted(scrape.gpus["ip-10-1-45-13"]) == [0, 1, 2, 3, 4, 6, 7]
    assert scrape.samples == 14 and scrape.families == 14  # undeclared samples: a family each, as the parser counts


@pytest.mark.parametrize("broken", [
    'DCGM_FI_PROF_DRAM_ACTIVE{gpu="0",Hostname="ip-10-1-45-13"\n',  # cut off in the labels
    'DCGM_FI_PROF_DRAM_ACTIVE{gpu="0",Hostname="ip-10-1-45-13"} zero\n',  # not a number
    'node_cpu_seconds_total{cpu="0",mode="idle"}\n',  # no value
])
def test_a_broken_line_of_an_unread_family_is_refused(broken):
    """Refused, not skipped: a line cut off or mangled means the transfer or the exporter is broken,
    and the line's number says where, whichever family it belongs to."""
    lines = SCRAPE.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("DCGM_FI_DEV_GPU_TEMP"))
    with pytest.raises(ParseError) as refused:
        parse("".join(lines[:at] + [broken] + lines[at:]))
    assert refused.value.line == at + 1 and "not Prometheus text format" in str(refused.value)
