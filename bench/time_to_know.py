"""Time to know: from a GPU fault in a push to the people who act on it, at the program's scale.

Runs the production-shaped stack (gunicorn with gunicorn.conf.py, PostgreSQL in a fresh ``*_bench`` database, Redis,
one health worker process, one worker for the other queues, beat) against the embedded AWS endpoint, with a Slack
webhook and an SMTP server listening on loopback. ``--clusters`` clusters of ``--nodes`` p5.48xlarge nodes push
their DCGM + EFA scrape (full scope, gzip) every ``--interval`` seconds for ``--rounds`` rounds, while ``--people``
signed-in customers read pages and the API. Into single pushes it injects faults (XID 79, a row-remap failure, a
node that stops reporting, a stalled run) and measures per fault:

- visible: push accepted -> the fault on the cluster's health API and page (a silent node: gone from the API's
  node list);
- notified: fault stored (its row committed) -> the Slack webhook and the e-mail both received;
- provider: fault stored -> the remediation's provider call (automatic consent for XID 79 and row-remap failures).

The worker's lag (the oldest unprocessed push) and the queues' oldest messages are read from /metrics every few
seconds, as an operator's Prometheus reads them. Prints p50/p95/max per stage and kind, the lag, the pages' and
the API's p95, and a verdict against the goals. Every loop is bounded in count and time.

    REDIS_URL=redis://127.0.0.1:6379/12 DATABASE_URL=postgres://postgres@127.0.0.1:5432/time_to_know_bench \
        python bench/time_to_know.py [--clusters 12 --nodes 512 --interval 30 --rounds 10 --people 4]
"""
from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import fresh_database  # noqa: E402
from time_to_know_stack import Faults, Scrapes, SlackListener, SmtpListener, Stack, hostnames, read_json  # noqa: E402

KINDS = ("xid79", "remap_failure", "node_silent", "stalled")
PASSWORD = "time-to-know-bench"  # noqa: S105 - a throw-away bench user's
METRICS_TOKEN = "time-to-know-bench-metrics"  # noqa: S105


@dataclass
class Fault:
    kind: str
    cluster: int   # index
    round: int
    node: int = 0
    gpu: int = 0
    accepted: float | None = None  # the push carrying it answered 202 (epoch seconds)
    last_with_node: float | None = None  # node_silent: the last push with the node accepted
    knowable: float | None = None  # stalled: the first push received the stall minutes after the idle one
    stored: float | None = None
    visible: float | None = None
    slack: float | None = None
    email: float | None = None
    provider: float | None = None


def environment(args) -> dict:
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/time_to_know_bench")
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/12")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="time_to_know_settings", CELERY_BROKER_URL=os.environ["REDIS_URL"],
        AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="ap-northeast-1",  # noqa: S106
        HEALTH_PUSH_STORAGE="local", HEALTH_PUSH_DIR=tempfile.mkdtemp(prefix="ttk-pushes-"),
        METRICS_TOKEN=METRICS_TOKEN, OUTBOUND_ALLOWED_HOSTS="127.0.0.1", OUTBOUND_HTTP_HOSTS="127.0.0.1",
        ACCOUNTING_STALL_MINUTES=str(args.stall_minutes), PROMETHEUS_MULTIPROC_DIR=tempfile.mkdtemp(prefix="ttk-prom-"),
        PYTHONPATH=f"{ROOT}:{ROOT / 'bench'}", LOG_LEVEL="WARNING")
    fresh_database(os.environ["DATABASE_URL"])
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    from sandbox.aws.embedded import start_server

    _server, url = start_server()
    os.environ["AWS_ENDPOINT_URL"] = url
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return dict(os.environ)


def seed(args, slack_port: int) -> tuple[list, dict, dict]:
    """Organizations (up to 12), clusters, health tokens, a customer each, notification channels and automatic
    consent for XID 79 and row-remap failures. Answers the clusters, their push tokens and the customers' API
    tokens by organization id."""
    from knox.models import AuthToken

    from clusters.choices import ClusterState
    from clusters.health.ingest import service as services
    from clusters.models import Cluster
    from clusters.remediation.choices import ConsentMode
    from clusters.remediation.models import RemediationPolicy
    from portal.core.choices import MembershipRole
    from portal.core.models import Membership, NotificationSetting, Organization, User

    orgs = []
    for n in range(min(12, args.clusters)):
        org = Organization.objects.create(slug=f"ttk-{n:02d}", name=f"Time to know {n:02d}",
                                          aws_account_id=f"{333300000000 + n}")
        user = User.objects.create_user(f"ttk-customer-{n:02d}", f"c{n}@ttk.example", PASSWORD)
        Membership.objects.create(user=user, organization=org, role=MembershipRole.CUSTOMER)
        NotificationSetting.objects.create(organization=org, name=f"#ttk-{n:02d}",
                                           slack_webhook_url=f"http://127.0.0.1:{slack_port}/hook/{org.slug}",
                                           email_recipients=f"oncall-{n:02d}@ttk.example", include_internal=True)
        RemediationPolicy.objects.update_or_create(organization=org, defaults={
            "mode": ConsentMode.AUTOMATIC, "automatic_kinds": ["xid_79", "row_remap_failure"], "max_nodes": 4,
            "agreed_with": "bench"})
        orgs.append((org, user, AuthToken.objects.create(user)[1]))
    clusters, push_tokens = [], {}
    for i in range(args.clusters):
        org = orgs[i % len(orgs)][0]
        cluster = Cluster.objects.create(organization=org, name=f"ttk-p5-{i:02d}", instance_type="p5.48xlarge",
                                         node_count=args.nodes, state=ClusterState.READY,
                                         outputs={"HeadNodeInstanceId": f"i-0{i:016x}"})
        push_tokens[cluster.pk] = services.rotate_token(cluster)
        clusters.append(cluster)
    return clusters, push_tokens, {org.pk: (user, key) for org, user, key in orgs}


def schedule(args, rng: random.Random) -> list[Fault]:
    """``--per-kind`` faults of each kind, each on its own cluster where there are enough, at random rounds after
    the first two (a stall needs a busy report before it) and early enough to be measured before the end."""
    faults, used, nodes_used = [], set(), set()
    stall_rounds = -(-args.stall_minutes * 60 // args.interval)
    for kind in args.faults:
        for _ in range(args.per_kind):
            last = args.rounds - 3 - (stall_rounds if kind == "stalled" else 0)
            if last < 2:
                raise SystemExit(f"--rounds {args.rounds} is too few to inject and measure a {kind}")
            # A cluster of its own where there are enough: a stall's EFA trend must not straddle a node going quiet.
            free = ([c for c in range(args.clusters) if c not in {u for u, _k in used}]
                    or [c for c in range(args.clusters) if (c, kind) not in used] or list(range(args.clusters)))
            cluster = rng.choice(free)
            used.add((cluster, kind))
            node = rng.choice([n for n in range(args.nodes) if (cluster, n) not in nodes_used] or [0])
            nodes_used.add((cluster, node))
            faults.append(Fault(kind, cluster, rng.randint(2, last), node=node, gpu=rng.randrange(8)))
    return faults


class Pusher:
    """Every cluster's push once per interval (clusters spread over it), the scheduled faults in their rounds."""

    def __init__(self, args, stack, clusters, tokens, faults):
        self.args, self.stack, self.clusters, self.tokens, self.faults = args, stack, clusters, tokens, faults
        self.scrapes = [Scrapes(i, args.nodes) for i in range(len(clusters))]
        self.state = [Faults() for _ in clusters]
        self.accepted: list[float] = []  # seconds per push answer
        self.errors = 0
        self.late = 0
        self.last_push: dict[int, float] = {}  # cluster index -> its last push accepted

    def run(self, start: float) -> None:
        per = self.args.interval / len(self.clusters)
        for rnd in range(self.args.rounds):
            for i, cluster in enumerate(self.clusters):
                due = start + rnd * self.args.interval + i * per
                wait = due - time.time()
                if wait > 0:
                    time.sleep(wait)
                elif wait < -self.args.interval:
                    self.late += 1
                self.push(rnd, i, cluster)

    def push(self, rnd: int, i: int, cluster) -> None:
        now = [f for f in self.faults if f.cluster == i and f.round == rnd]
        state = self.state[i]
        for fault in now:
            if fault.kind == "xid79":
                state.xid79.add((fault.node, fault.gpu))
            elif fault.kind == "remap_failure":
                state.remap_failure.add((fault.node, fault.gpu))
            elif fault.kind == "node_silent":
                state.silent.add(fault.node)
            else:
                state.stalled = True
        body = gzip.compress(self.scrapes[i].text(state).encode(), compresslevel=1)
        request = urllib.request.Request(f"{self.stack.url}/api/health/clusters/{cluster.pk}/metrics/?scope=full",
                                         data=body, method="POST", headers={
                                             "Authorization": f"Bearer {self.tokens[cluster.pk]}",
                                             "Content-Encoding": "gzip", "Content-Type": "text/plain"})
        sent = time.time()
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 - loopback
                ok = answer.status == 202
        except (urllib.error.URLError, OSError):
            ok = False
        done = time.time()
        self.accepted.append(done - sent)
        if not ok:
            self.errors += 1
            return
        for fault in now:
            fault.accepted = done
            if fault.kind == "node_silent":
                fault.last_with_node = self.last_push.get(i, done)
        self.last_push[i] = done


def collect(records: dict, name: str, value: float) -> None:
    records.setdefault(name, []).append(value)


def watch(faults, clusters, stack, people_tokens, slack, smtp, stop: threading.Event) -> None:
    """Poll the database, the API, the page and the listeners for each injected fault until all is seen."""
    from django.db import close_old_connections

    for _ in range(200_000):
        if stop.is_set():
            return
        close_old_connections()
        for f in faults:
            if f.accepted is None:
                continue
            try:
                observe(f, clusters[f.cluster], stack, people_tokens, slack, smtp, time.time())
            except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
                print(f"watch: {f.kind} on cluster {f.cluster}: {exc}", file=sys.stderr)
        time.sleep(0.25)


KINDS_STORED = {"xid79": "xid", "remap_failure": "row_remap_failure", "stalled": "training_stalled"}


def observe(f: Fault, cluster, stack, people_tokens, slack, smtp, now: float) -> None:
    """One look at one fault: each stage's moment, stamped the first time it is seen."""
    from clusters.health.models import GpuFault, HealthPush
    from clusters.remediation.models import RemediationStep

    host = hostnames(f.cluster, cluster.node_count)[f.node]
    _user, key = people_tokens[cluster.organization_id]
    api = {"Authorization": f"Token {key}"}
    if f.kind == "node_silent":
        if f.visible is None:
            count = read_json(f"{stack.url}/api/health/nodes/?cluster={cluster.pk}&page_size=1", api)["count"]
            if count == cluster.node_count - 1:
                f.visible = now
        return
    rows = GpuFault.objects.filter(cluster_id=cluster.pk, cleared_at__isnull=True)
    rows = rows.filter(kind=KINDS_STORED[f.kind]) if f.kind == "stalled" else rows.filter(hostname=host)
    first = rows.order_by("first_seen").values_list("first_seen", flat=True).first()
    if f.stored is None and first is not None:
        # Stored: when the push that opened it finished (its transaction committed), not when this poll saw it.
        finished = (HealthPush.objects.filter(cluster_id=cluster.pk, received_at=first, finished_at__isnull=False)
                    .values_list("finished_at", flat=True).first())
        f.stored = finished.timestamp() if finished else now
    if f.stored and f.visible is None:
        query = f"cluster={cluster.pk}&open=true" + ("&kind=training_stalled" if f.kind == "stalled" else f"&hostname={host}")
        if read_json(f"{stack.url}/api/health/faults/?{query}", api)["count"] and host_on_page(stack, cluster, f, host):
            f.visible = now
    needle = f"{cluster.name}: {host}" if f.kind != "stalled" else f"{cluster.name}: cluster"
    if f.stored and f.slack is None:
        f.slack = slack.first_after(needle, f.accepted)
    if f.stored and f.email is None:
        f.email = smtp.first_after(needle, f.accepted)
    if f.kind in ("xid79", "remap_failure") and f.stored and f.provider is None:
        # The provider's first answer (or refusal) is the action's first step.
        called = (RemediationStep.objects.filter(action__cluster_id=cluster.pk, action__nodes__contains=[host])
                  .order_by("at").values_list("at", flat=True).first())
        f.provider = called.timestamp() if called else None


def clock(epoch: float | None) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 10)}" if epoch else "not found"


def knowable_at(cluster_id: int, idle_accepted: float, window: float) -> float | None:
    """When the push arrived that first spans the stall window from the first idle push (the server's clock)."""
    from clusters.health.models import HealthPush

    times = [t.timestamp() for t in HealthPush.objects.filter(cluster_id=cluster_id).order_by("received_at")
             .values_list("received_at", flat=True)]
    idle = next((t for t in times if t >= idle_accepted - 5), None)  # the injected push, received just before
    if idle is None:
        return None
    return next((t for t in times if t - idle >= window), None)


_PAGE_SESSIONS: dict = {}


def host_on_page(stack, cluster, fault, host) -> bool:
    opener = _PAGE_SESSIONS.get(cluster.organization_id)
    if opener is None:
        return True  # no page session for that organization (people disabled): the API alone decides
    with opener.open(f"{stack.url}/clusters/{cluster.pk}/health/", timeout=20) as answer:
        html = answer.read().decode()
    return (host in html) if fault.kind != "stalled" else ("stalled" in html.lower())


def login(stack, username: str):
    """A cookie-keeping opener signed in through the login page (CSRF token and all)."""
    import http.cookiejar

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{stack.url}/login/", timeout=20).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = urllib.parse.urlencode({"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token}).encode()
    opener.open(urllib.request.Request(f"{stack.url}/login/", data=data, headers={"Referer": f"{stack.url}/login/"}),
                timeout=20).read()
    return opener


class People:
    """Signed-in customers reading pages and the API with a second's thought between requests."""

    def __init__(self, stack, clusters, people_tokens, count: int):
        self.stack, self.clusters, self.tokens, self.count = stack, clusters, people_tokens, count
        self.pages: list[float] = []
        self.api: list[float] = []
        self.by_route: dict[str, list[float]] = {}
        self.errors: list[str] = []

    def run(self, until: float, index: int) -> None:
        org_ids = sorted(self.tokens)
        org_id = org_ids[index % len(org_ids)]
        user, key = self.tokens[org_id]
        opener = login(self.stack, user.username)
        _PAGE_SESSIONS.setdefault(org_id, opener)
        mine = [c for c in self.clusters if c.organization_id == org_id]
        rng = random.Random(index)
        for _ in range(100_000):
            if time.time() >= until:
                return
            cluster = rng.choice(mine)
            pages = ["/", "/clusters/", f"/clusters/{cluster.pk}/", f"/clusters/{cluster.pk}/health/"]
            apis = [f"/api/health/faults/?cluster={cluster.pk}&open=true", f"/api/health/reports/?cluster={cluster.pk}",
                    "/api/clusters/clusters/", f"/api/health/nodes/?cluster={cluster.pk}"]
            routes = {pages[2]: "/clusters/<pk>/", pages[3]: "/clusters/<pk>/health/"}
            is_page = rng.random() < 0.6
            path = rng.choice(pages if is_page else apis)
            request = urllib.request.Request(self.stack.url + path, headers={} if is_page else {"Authorization": f"Token {key}"})
            started = time.time()
            try:
                with (opener.open(request, timeout=30) if is_page else urllib.request.urlopen(request, timeout=30)) as answer:  # noqa: S310
                    answer.read()
            except (urllib.error.URLError, OSError) as exc:
                self.errors.append(f"{path}: {exc}")
            took = time.time() - started
            (self.pages if is_page else self.api).append(took)
            collect(self.by_route, routes.get(path, re.sub(r"=\d+", "=<pk>", path)), took)
            time.sleep(1.0)


def sample_metrics(stack, series: dict, stop: threading.Event, every: float) -> None:
    """/metrics as Prometheus reads it: the oldest unprocessed push and each queue's oldest message."""
    request = urllib.request.Request(f"{stack.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    for _ in range(100_000):
        if stop.wait(every):
            return
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:  # noqa: S310 - loopback
                text = answer.read().decode()
        except (urllib.error.URLError, OSError):
            continue
        for line in text.splitlines():
            if line.startswith("portal_health_push_lag_seconds_max "):
                collect(series, "lag", float(line.split()[-1]))
            match = re.match(r'portal_celery_queue_oldest_message_age_seconds\{queue="(\w+)"\} (\S+)', line)
            if match:
                collect(series, f"queue {match.group(1)}", float(match.group(2)))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))] if ordered else float("nan")


def row(label: str, values: list[float]) -> str:
    if not values:
        return f"  {label:<34} n=0"
    return (f"  {label:<34} n={len(values):<3} p50 {statistics.median(values):6.1f} s  p95 {pct(values, 0.95):6.1f} s  "
            f"max {max(values):6.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=12)
    parser.add_argument("--nodes", type=int, default=512)
    parser.add_argument("--interval", type=int, default=30, help="seconds between a cluster's pushes")
    parser.add_argument("--rounds", type=int, default=20, help="pushes per cluster")
    parser.add_argument("--people", type=int, default=4, help="signed-in customers reading pages and the API")
    parser.add_argument("--faults", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--per-kind", type=int, default=2)
    parser.add_argument("--stall-minutes", type=int, default=2, help="the stall check's minutes (shipped: 15)")
    parser.add_argument("--drain", type=int, default=180, help="seconds to wait after the last push for faults' ends")
    parser.add_argument("--seed", type=int, default=47)
    args = parser.parse_args()
    env = environment(args)
    slack, smtp = SlackListener(), SmtpListener()
    env["BENCH_SMTP_PORT"] = str(smtp.port)
    clusters, push_tokens, people_tokens = seed(args, slack.port)
    from django.conf import settings
    from django.db import connection

    grace = settings.HEALTH_NODE_SILENT_MINUTES * 60
    connection.close()
    logs = Path(tempfile.mkdtemp(prefix="ttk-logs-"))
    stack = Stack(env=env, logs=logs)
    faults = schedule(args, random.Random(args.seed))
    stop, series = threading.Event(), {}
    started_at = time.time()
    try:
        stack.start()
        run_for = args.rounds * args.interval
        people = People(stack, clusters, people_tokens, args.people)
        pusher = Pusher(args, stack, clusters, push_tokens, faults)
        threads = [threading.Thread(target=people.run, args=(time.time() + run_for, i), daemon=True)
                   for i in range(args.people)]
        threads += [threading.Thread(target=sample_metrics, args=(stack, series, stop, 5.0), daemon=True),
                    threading.Thread(target=watch, args=(faults, clusters, stack, people_tokens, slack, smtp, stop),
                                     daemon=True)]
        for thread in threads:
            thread.start()
        pusher.run(time.time() + 2)
        deadline = time.time() + args.drain
        while time.time() < deadline and not all(done(f) for f in faults):
            time.sleep(1)
    finally:
        stop.set()
        stack.stop()
    wall = time.time() - started_at
    report(args, faults, clusters, pusher, people, series, grace, wall, logs)
    return 0


def done(f: Fault) -> bool:
    if f.accepted is None:
        return False
    if f.kind == "node_silent":
        return f.visible is not None
    base = f.visible is not None and f.slack is not None and f.email is not None
    return base and (f.provider is not None or f.kind == "stalled")


def report(args, faults, clusters, pusher, people, series, grace, wall, logs) -> None:
    print(f"time to know: {args.clusters} clusters x {args.nodes} p5.48xlarge nodes pushing DCGM + EFA every "
          f"{args.interval} s, {args.rounds} rounds, {args.people} people reading; {len(faults)} faults injected "
          f"({args.per_kind} per kind); stall minutes {args.stall_minutes} (a stall's clock starts when they have "
          f"passed); run {wall:.0f} s; logs {logs}")
    print(f"pushes: {len(pusher.accepted)} answered (p95 {pct(pusher.accepted, 0.95):.2f} s), {pusher.errors} refused "
          f"or failed, {pusher.late} sent over an interval late")

    stages: dict[str, list] = {}
    for f in faults:
        if f.kind == "stalled" and f.accepted is not None:
            # The window the stack's processes were given (--stall-minutes), not this process's settings.
            f.knowable = knowable_at(clusters[f.cluster].pk, f.accepted, args.stall_minutes * 60)
            print(f"  stall on cluster {clusters[f.cluster].pk}: idle push answered {clock(f.accepted)}, knowable "
                  f"{clock(f.knowable)} (the first push {args.stall_minutes} min after it), visible {clock(f.visible)}")
        if f.accepted is None:
            continue
        if f.kind == "node_silent":
            if f.visible is not None:
                collect(stages, f"silent node known ({f.kind})", f.visible - f.last_with_node)
            continue
        # A stall is knowable only from the first push received the stall minutes after the first idle one.
        known_from = f.knowable if f.kind == "stalled" and f.knowable else f.accepted
        if f.visible is not None:
            collect(stages, f"accepted -> visible ({f.kind})", f.visible - known_from)
            collect(stages, "accepted -> visible (all)", f.visible - known_from)
        if f.stored is not None and f.slack and f.email:
            collect(stages, f"stored -> notified ({f.kind})", max(max(f.slack, f.email) - f.stored, 0.0))
            collect(stages, "stored -> notified (all)", max(max(f.slack, f.email) - f.stored, 0.0))
            collect(stages, "accepted -> notified (all)", max(f.slack, f.email) - known_from)
        if f.stored is not None and f.provider is not None:
            collect(stages, f"stored -> provider call ({f.kind})", max(f.provider - f.stored, 0.0))
    print("per stage and fault kind (seconds):")
    for name in sorted(stages):
        print(row(name, stages[name]))
    missing = [f"{f.kind}@{f.cluster}" for f in faults if not done(f)]
    print(f"faults not seen through every stage: {missing or 'none'}")
    lag = series.get("lag", [])
    print(f"worker lag from /metrics (oldest unprocessed push, {len(lag)} samples): p50 {pct(lag, 0.5):.1f} s, "
          f"p95 {pct(lag, 0.95):.1f} s, max {max(lag, default=float('nan')):.1f} s")
    for name in sorted(k for k in series if k.startswith("queue ")):
        print(f"  {name} oldest message: max {max(series[name]):.1f} s")
    print(f"pages: {len(people.pages)} p95 {pct(people.pages, 0.95):.2f} s; API reads: {len(people.api)} "
          f"p95 {pct(people.api, 0.95):.2f} s; errors {len(people.errors)} {people.errors[:3]}")
    for route in sorted(people.by_route):
        times = people.by_route[route]
        print(f"  {route:<46} n={len(times):<4} p50 {statistics.median(times):.2f} s  p95 {pct(times, 0.95):.2f} s")
    notified = stages.get("accepted -> notified (all)", [])
    silent = stages.get("silent node known (node_silent)", [])
    goals = {
        "p95 push->notification <= 30 s": bool(notified) and pct(notified, 0.95) <= 30,
        f"oldest unprocessed push <= {2 * args.interval} s": bool(lag) and max(lag) <= 2 * args.interval,
        "pages p95 <= 0.5 s": bool(people.pages) and pct(people.pages, 0.95) <= 0.5,
        f"silent node known <= {2 * args.interval + grace} s": bool(silent) and max(silent) <= 2 * args.interval + grace,
        "every fault seen through every stage": not missing,
    }
    print("verdict: " + ("ALL GOALS MET" if all(goals.values()) else "GOALS MISSED") + " — " +
          "; ".join(f"{name}: {'met' if ok else 'MISSED'}" for name, ok in goals.items()))


if __name__ == "__main__":
    sys.exit(main())
