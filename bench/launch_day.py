"""Launch day: 151 cluster launches (127 P5 ParallelCluster, 24 Trn1 HyperPod, across 12
organizations) through the real Celery worker and Redis against the embedded AWS endpoint.

Every organization's quota is exactly what its share of the 151 needs, and each organization also
sends ``--extra`` launches (default 1) that do not fit. All of them are submitted at once through the
launch service (``clusters.launches.service.submit``) from ``--threads`` threads, each with its own database
connection, released together. Prints the launches accepted and refused, the instances held per
organization against its quota (0 over), then the wall time from the first submission until every
accepted cluster is ready, zero duplicate stacks (list_stacks in each organization's account), and
the ratio against a floor measured in the same run: the same CloudFormation calls (describe_stacks by
name, create_stack, describe_stacks by id, describe_stack_events) made directly with boto3 in one loop.

Each launch is single-stack (the cluster stack, with the network's ids passed as parameters);
``--full-stack`` launches network, storage and cluster for each instead.

    REDIS_URL=redis://127.0.0.1:6379/12 [DATABASE_URL=postgres://…] python bench/launch_day.py
"""
from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _die_with_parent():
    sys.path.insert(0, str(ROOT))
    from portal.core.processes import die_with_parent

    return die_with_parent
sys.path.insert(0, str(ROOT))

P5, TRN1, ORGS = 127, 24, 12
NODES = 16  # per launch
NETWORK_KEYS = ("PublicSubnetId", "PrivateSubnetId", "SecurityGroupId", "PlacementGroupName")
LUSTRE = "fs-0a1b2c3d4e5f60714"


def _environment(args) -> tuple[str, object]:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    os.environ.setdefault("AWS_DEFAULT_REGION", "ap-northeast-1")
    os.environ["REDIS_URL"] = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/12")
    os.environ["CELERY_BROKER_URL"] = os.environ["REDIS_URL"]
    os.environ["CLUSTERS_POLL_SECONDS"] = "1"
    tmp = None
    if not os.environ.get("DATABASE_URL"):
        tmp = tempfile.mkdtemp(prefix="launch-day-")
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "portal.settings.local"
    os.environ["LOG_LEVEL"] = "WARNING"
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    from sandbox.aws.embedded import start_server

    server, url = start_server()
    os.environ["AWS_ENDPOINT_URL"] = url
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    return url, server


def _params(i: int, name: str, full_stack: bool, network: dict) -> tuple[str, dict]:
    trn1 = i >= P5
    if trn1:
        cluster = {"ClusterName": name, "WorkerInstanceType": "ml.trn1.32xlarge", "WorkerCount": str(NODES)}
        blueprint = "hyperpod"
    else:
        cluster = {"ClusterName": name, "ComputeInstanceType": "p5.48xlarge", "ComputeMaxCount": str(NODES)}
        blueprint = "parallelcluster"
    if full_stack:
        return blueprint, {"network": {"AvailabilityZone": "ap-northeast-1a"},
                           "storage": {"CreateHomeFileSystem": "true"}, "cluster": cluster}
    wanted = {"PrivateSubnetId", "SecurityGroupId"} if trn1 else set(NETWORK_KEYS)
    cluster.update({k: v for k, v in network.items() if k in wanted})
    cluster["BucketName"] = network["BucketName"]  # where the software stack is uploaded first
    if trn1:
        cluster.update(LustreDnsName=f"{LUSTRE}.fsx.ap-northeast-1.amazonaws.com", LustreMountName="benchfsx")
    else:
        cluster["LustreFileSystemId"] = LUSTRE
    return blueprint, {"cluster": cluster}


def _worker(url: str) -> subprocess.Popen:
    env = dict(os.environ, AWS_ENDPOINT_URL=url)
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "portal", "worker", "-Q", "launches", "--concurrency", "2",
         "--pool", "prefork", "--loglevel", "WARNING", "--without-gossip", "--without-mingle",
         "--hostname", f"bench-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent())


def _beat() -> subprocess.Popen:
    """Celery beat with the portal's schedule (the launch-job sweep every minute)."""
    schedule = tempfile.mkdtemp(prefix="launch-day-beat-")
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "portal", "beat", "--loglevel", "WARNING",
         "--schedule", f"{schedule}/celerybeat-schedule"],
        cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        preexec_fn=_die_with_parent())


def _kill_and_resume(worker, url: str, ids: list[int], kill_after: int):
    """SIGKILL the worker once ``kill_after`` stacks exist, start another and beat (production settings:
    lease, stuck threshold and sweep interval as shipped); return the new worker, beat, the seconds until
    every job open at the kill had been stepped again, and how many were open."""
    import signal

    from django.utils import timezone

    from clusters.models import LaunchJob, Stack

    while Stack.objects.filter(cluster_id__in=ids).exclude(stack_id="").count() < kill_after:
        time.sleep(0.1)
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    killed, killed_wall = time.perf_counter(), timezone.now()
    open_at_kill = set(LaunchJob.objects.filter(cluster_id__in=ids, finished__isnull=True).values_list("pk", flat=True))
    replacement, beat = _worker(url), _beat()
    while LaunchJob.objects.filter(pk__in=open_at_kill, finished__isnull=True, heartbeat__lt=killed_wall).exists():
        time.sleep(0.5)
    return replacement, beat, time.perf_counter() - killed, len(open_at_kill)


def _floor(specs, organizations) -> float:
    """The same CloudFormation calls, made directly with boto3 in one loop (same endpoint, same roles)."""
    from botocore.exceptions import ClientError

    from clusters.blueprints import catalog
    from portal.core.aws import client

    bodies = {slug: catalog.template_body(slug) for slug in ("parallelcluster", "hyperpod", "network", "storage")}
    from clusters.software import release

    clients = {org.pk: client("cloudformation", organization=org) for org in organizations}
    s3s = {org.pk: client("s3", organization=org) for org in organizations}
    started = time.perf_counter()
    for org, name, blueprint, params in specs:
        cf = clients[org.pk]
        roles = ["network", "storage", "cluster"] if "network" in params else ["cluster"]
        outputs: dict = {}
        for role in roles:
            slug = blueprint if role == "cluster" else role
            stack_name = f"floor-{org.slug}-{name}-{role}"
            values = {**{k: v for k, v in outputs.items() if k in _names(slug)}, **params[role]}
            if "ClusterName" in values:  # ParallelCluster names its own stack after it: keep them apart
                values["ClusterName"] = f"floor-{values['ClusterName']}"
            if role == "cluster":  # the software stack goes to the bucket first, as in the pipeline
                release.upload(s3s[org.pk], values["BucketName"],
                                release.bundle(blueprint, values, region=org.home_region))
            with contextlib.suppress(ClientError):
                cf.describe_stacks(StackName=stack_name)  # the pipeline's "does it exist already?"
            sid = cf.create_stack(StackName=stack_name, TemplateBody=bodies[slug],
                                  Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in values.items()],
                                  Tags=[{"Key": "geniac:launch-id", "Value": name}],
                                  Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"])["StackId"]
            stack = cf.describe_stacks(StackName=sid)["Stacks"][0]
            cf.describe_stack_events(StackName=sid)
            outputs.update({o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])})
    return time.perf_counter() - started


def _networks(organizations, run: str) -> dict:
    """One network stack per organization, shared by its single-stack launches (not timed)."""
    from clusters.blueprints import catalog
    from portal.core.aws import client

    found = {}
    for org in organizations:
        cf = client("cloudformation", organization=org)
        sid = cf.create_stack(StackName=f"bench-network-{org.slug}-{run}", TemplateBody=catalog.template_body("network"),
                              Parameters=[{"ParameterKey": "AvailabilityZone", "ParameterValue": "ap-northeast-1a"}])["StackId"]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in cf.describe_stacks(StackName=sid)["Stacks"][0]["Outputs"]}
        found[org.pk] = {k: outputs[k] for k in NETWORK_KEYS}
        bucket = f"sagemaker-geniac-bench-{org.pk}-{run}".lower()[:63]  # the storage stack's bucket, made directly
        where = {} if org.home_region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": org.home_region}}
        client("s3", organization=org).create_bucket(Bucket=bucket, **where)
        found[org.pk]["BucketName"] = bucket
    return found


def _exact_quotas(organizations, specs) -> None:
    """Each organization's quota: exactly the nodes its share of the 151 launches asks for, today."""
    import datetime

    from workloads.models import InstanceQuota

    InstanceQuota.objects.filter(organization__in=organizations).delete()
    today = datetime.date.today()
    for org in organizations:
        mine = [blueprint for owner, _name, blueprint, _params in specs if owner.pk == org.pk]
        for instance_type, blueprint in (("p5.48xlarge", "parallelcluster"), ("trn1.32xlarge", "hyperpod")):
            InstanceQuota.objects.create(organization=org, instance_type_name=instance_type, region=org.home_region,
                                         count=NODES * mine.count(blueprint), start=today - datetime.timedelta(days=1),
                                         end=today + datetime.timedelta(days=30))


def _submit_all(items, threads: int, full_stack: bool):
    """Submit every launch through the launch service from ``threads`` threads released together."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from clusters.launches import service as launch

    barrier = threading.Barrier(threads)

    def one(item):
        org, name, blueprint, params = item
        try:
            return launch.submit(launch.LaunchRequest(organization=org, name=name, blueprint=blueprint,
                                                      region=org.home_region, parameters=params,
                                                      full_stack=full_stack)).cluster
        except launch.LaunchRefused as refusal:
            return refusal

    def worker(chunk):
        try:
            barrier.wait(timeout=60)
            return [one(item) for item in chunk]
        finally:
            connection.close()

    chunks = [items[i::threads] for i in range(threads)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = [r for chunk in pool.map(worker, chunks) for r in chunk]
    accepted = [r for r in results if not isinstance(r, launch.LaunchRefused)]
    refusals = [r for r in results if isinstance(r, launch.LaunchRefused)]
    over = sum(1 for r in refusals if r.quota is not None)
    return accepted, over, [str(r) for r in refusals if r.quota is None]


def _held_against_quota(organizations):
    from workloads import usage

    rows = []
    for org in organizations:
        figures = []
        for instance_type in ("p5.48xlarge", "trn1.32xlarge"):
            standing = usage.quota_standing(org, instance_type, org.home_region)
            figures.append((standing.held, standing.total))
        rows.append((org.slug, figures))
    return rows


def _names(slug: str) -> set[str]:
    from clusters.blueprints import catalog

    return {p.name for p in catalog.entry(slug).parameters}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full-stack", action="store_true", help="network + storage + cluster per launch")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--threads", type=int, default=12, help="submitting threads, released together")
    parser.add_argument("--extra", type=int, default=1, help="launches per organization beyond its quota")
    parser.add_argument("--kill-worker", type=int, default=0, metavar="STACKS",
                        help="SIGKILL the worker once STACKS stacks exist; a new worker and beat (shipped lease, "
                             "stuck threshold and sweep interval) must finish the launches. Prints the resume time.")
    args = parser.parse_args()
    url, server = _environment(args)

    import redis
    from django.db import connection

    from clusters.choices import ClusterState
    from clusters.models import Cluster
    from portal.core.aws import client
    from portal.core.models import Organization

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    Cluster.objects.filter(organization__slug__startswith="bench-").delete()
    organizations = []
    for n in range(ORGS):
        org, _ = Organization.objects.get_or_create(
            slug=f"bench-{n:02d}", defaults={"name": f"Bench Org {n:02d}", "aws_account_id": f"{222200000000 + n}",
                                             "role_arn": f"arn:aws:iam::{222200000000 + n}:role/GeniacPortalAccess",
                                             "external_id": f"bench-{n}"})
        organizations.append(org)
    run = f"{int(time.time()) % 100000:05d}"
    networks = {} if args.full_stack else _networks(organizations, run)
    specs = []
    for i in range(P5 + TRN1):
        name = f"{'p5' if i < P5 else 'trn1'}-{run}-{i:03d}"
        org = organizations[i % ORGS]
        blueprint, params = _params(i, name, args.full_stack, networks.get(org.pk, {}))
        specs.append((org, name, blueprint, params))

    _exact_quotas(organizations, specs)
    extras = []
    for n in range(args.extra):
        for org in organizations:
            name = f"extra-{run}-{org.slug}-{n}"
            extras.append((org, name, *_params(0, name, args.full_stack, networks.get(org.pk, {}))))
    connection.close()

    worker = _worker(url)
    from portal.celery import app

    deadline = time.monotonic() + 60
    while not app.control.ping(timeout=0.5):
        if time.monotonic() > deadline or worker.poll() is not None:
            raise SystemExit("the worker did not start")
    beat = None
    try:
        started = time.perf_counter()
        accepted, refused, errors = _submit_all(specs + extras, args.threads, args.full_stack)
        submitted_in = time.perf_counter() - started
        held = _held_against_quota(organizations)
        ids = [cluster.pk for cluster in accepted]
        total = len(ids)
        if args.kill_worker:
            worker, beat, resumed, open_at_kill = _kill_and_resume(worker, url, ids, args.kill_worker)
        deadline = time.monotonic() + args.timeout
        while True:
            done = Cluster.objects.filter(pk__in=ids, state__in=[ClusterState.READY, ClusterState.FAILED]).count()
            if done == total or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        wall = time.perf_counter() - started
    finally:
        for process in (worker, beat):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, 15)
                process.wait(timeout=30)

    states = Counter(Cluster.objects.filter(pk__in=ids).values_list("state", flat=True))
    from clusters.models import Stack

    ours = set(Stack.objects.filter(cluster_id__in=ids).values_list("stack_name", flat=True))
    duplicates = 0
    live = Counter()
    for org in organizations:
        cf = client("cloudformation", organization=org)
        paginator = cf.get_paginator("list_stacks")
        for page in paginator.paginate():
            for summary in page["StackSummaries"]:
                if summary["StackName"] in ours:
                    live[summary["StackName"]] += 1
    duplicates = sum(n - 1 for n in live.values() if n > 1)
    missing = len(ours - set(live))

    floor = _floor(specs, organizations)
    server.stop()
    mode = "full-stack (network, storage, cluster)" if args.full_stack else "single-stack (cluster)"
    print(f"launch day: {P5 + TRN1} launches ({P5} P5 ParallelCluster, {TRN1} Trn1 HyperPod) across {ORGS} organizations, {mode}")
    print(f"database: {connection.vendor}; broker: {os.environ['REDIS_URL']}; worker concurrency 2")
    print(f"submitted at once from {args.threads} threads: {len(specs) + len(extras)} launches "
          f"({len(extras)} beyond the quotas) in {submitted_in:.2f} s")
    print(f"accepted: {len(accepted)}; refused over quota: {refused}; other errors: {errors or 'none'}")
    print("held against quota per organization (p5.48xlarge, trn1.32xlarge):")
    over = 0
    for slug, rows in held:
        print("  " + slug + ": " + ", ".join(f"{h}/{q}" for h, q in rows))
        over += sum(max(h - q, 0) for h, q in rows)
    print(f"instances over quota: {over}")
    print(f"states: {dict(states)}")
    print(f"stacks: {len(ours)} expected, {len(live)} found, {duplicates} duplicates, {missing} missing")
    print(f"wall time through the worker: {wall:.2f} s")
    print(f"floor (same CloudFormation calls with boto3 in one loop): {floor:.2f} s")
    print(f"ratio: {wall / floor:.2f}")
    if args.kill_worker:
        print(f"worker SIGKILLed after {args.kill_worker} stacks: {open_at_kill} launches open; every one stepped "
              f"again by the new worker {resumed:.1f} s after the kill (the wall time above includes the outage)")
    ok = (states.get(ClusterState.READY, 0) == total == P5 + TRN1 and duplicates == 0 and missing == 0
          and over == 0 and refused == len(extras) and not errors)
    print("all accepted launches ready, quotas exactly full and never exceeded, zero duplicate stacks" if ok
          else "NOT as expected: see the figures above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
