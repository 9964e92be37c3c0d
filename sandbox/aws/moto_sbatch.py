"""Slurm's job commands (``sbatch``, ``squeue``, ``sacct``, ``scancel``) on the embedded endpoint's emulated head node.

A validation the portal starts is an ``sbatch`` job whose script (from the software stack) runs the
collective tests and posts each output to the portal with a token. Here ``sbatch`` reads the
submitted script for what a real run would need to know (``#SBATCH`` directives and the
``GENIAC_*`` variables the portal writes at its top), queues the job, and after ``JOB_SECONDS``
posts a real-format nccl-tests or nccom-test output (:mod:`sandbox.aws.moto_collectives`) for the
cluster's hardware and node count to the upload URL, as the script's ``curl --data-binary`` would: its
figures follow the hardware, with the noise of real runs. A node's links are part of the emulated hardware:
:func:`seed_slow_link` gives one a degraded link (its share of the healthy bandwidth), and every run that
crosses it reads lower (a pair with it, a collective over it); the portal finds the slow node from the
figures alone, nothing names it. ``squeue`` and ``sacct`` answer from the same jobs; ``scancel``
ends a job before it posts.
"""

from __future__ import annotations

import re
import shlex
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from sandbox.aws import moto_collectives
from sandbox.aws.moto_headnode import Context, HeadNodeCluster, Result, headnode_command

JOB_SECONDS = 2.0  # how long an emulated job runs before it posts (tests and the demo may change it)
SLOW_FACTOR = 0.55  # a run over a seeded slow link reaches this share of the plateau
POST_TIMEOUT = 30
POST_RETRIES = 5  # as the job script's curl --retry 5
_VARIABLE = re.compile(r"^(GENIAC_[A-Z_]+)=(.*)$", re.MULTILINE)
_DIRECTIVE = re.compile(r"^#SBATCH\s+--([a-z-]+)(?:[= ](\S+))?", re.MULTILINE)
_jobs_lock = threading.Lock()
_HEREDOC = re.compile(r"<<-?\s*'?(\w+)'?\s*\n(.*?)\n\1\s*$", re.DOTALL)


def _script(command: str) -> str:
    """The job script: the heredoc after ``sbatch``, or ``--wrap``'s command."""
    match = _HEREDOC.search(command)
    if match is not None:
        return match.group(2)
    wrap = re.search(r"--wrap[= ](?P<q>['\"])(.*?)(?P=q)", command)
    return wrap.group(2) if wrap else ""


def _variables(script: str) -> dict[str, str]:
    found = {}
    for name, value in _VARIABLE.findall(script):
        parts = shlex.split(value) if value.strip() else [""]
        found[name] = parts[0] if len(parts) == 1 else " ".join(parts)
    return found


def _jobs(cluster: HeadNodeCluster) -> dict[str, dict[str, Any]]:
    return cluster.state.setdefault("jobs", {})


def seed_slow_link(cluster: HeadNodeCluster, hostname: str, factor: float = SLOW_FACTOR) -> None:
    """Give ``hostname``'s link a share ``factor`` of the healthy bandwidth (1.0: a healthy link again)."""
    links = cluster.state.setdefault("links", {})
    if factor >= 1.0:
        links.pop(hostname, None)
    else:
        links[hostname] = factor


def link_factor(cluster: HeadNodeCluster, names: list[str]) -> float:
    """The share of the healthy bandwidth a run over ``names`` (Slurm's names or hostnames) reaches: its slowest
    link's."""
    links = cluster.state.get("links") or {}
    hostnames = {n.slurm_name: n.hostname for n in cluster.nodes}
    return min([links.get(hostnames.get(name, name), 1.0) for name in names] or [1.0])


def _address(hostname: str) -> str:
    match = re.search(r"ip-(\d+)-(\d+)-(\d+)-(\d+)", hostname)
    return ".".join(match.groups()) if match else f"10.1.0.{abs(hash(hostname)) % 250 + 4}"


def _outputs(cluster: HeadNodeCluster, variables: dict[str, str]) -> list[tuple[dict[str, str], str]]:
    """(query parameters, output text) for every upload the job's script would make."""
    instance_type = cluster.nodes[0].instance_type if cluster.nodes else "p5.48xlarge"
    trainium = moto_collectives.is_trainium(instance_type)
    hosts = variables.get("GENIAC_HOSTS", "").split() or [n.slurm_name for n in cluster.nodes]
    hostnames = {n.slurm_name: n.hostname for n in cluster.nodes}
    collectives = variables.get("GENIAC_COLLECTIVES", "all_reduce").split()
    versions = {k: v for k, v in (("nccl_version", variables.get("GENIAC_NCCL_VERSION", "").lstrip("v").split("-")[0]),
                                  ("ofi_version", variables.get("GENIAC_OFI_VERSION", "").lstrip("v"))) if v}

    def render(collective: str, names: list[str], factor: float) -> str:
        nodes = [hostnames.get(n, n) for n in names]  # the tests print the hosts' own names (gethostname)
        if trainium:
            return moto_collectives.nccom_test(collective, [_address(h) for h in nodes], factor=factor)
        return moto_collectives.nccl_tests(collective, nodes, instance_type, factor=factor, **versions)

    if variables.get("GENIAC_MODE") == "pairwise":
        pairs = [(a, b) for i, a in enumerate(hosts) for b in hosts[i + 1:]]
        return [({"pair": f"{a},{b}"}, render("all_reduce", [a, b], link_factor(cluster, [a, b]))) for a, b in pairs]
    return [({"collective": c}, render(c, hosts, link_factor(cluster, hosts))) for c in collectives]


def _post(url: str, token: str, query: dict[str, str], body: str) -> int:
    """POST one output as the script's ``curl -f --retry 5 --retry-all-errors`` does: a refused connection or
    a 5xx is tried again after 1, 2, 4, 8 and 16 s; a 4xx is the portal's answer and ends the job FAILED."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"not an upload URL: {url!r}")
    target = f"{url}{'&' if '?' in url else '?'}{urllib.parse.urlencode(query)}"
    for attempt in range(POST_RETRIES + 1):
        request = urllib.request.Request(target, data=body.encode(), method="POST", headers={  # noqa: S310
            "Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
        try:
            with urllib.request.urlopen(request, timeout=POST_TIMEOUT) as response:  # noqa: S310 - scheme checked
                return int(response.status)
        except urllib.error.HTTPError as exc:
            if exc.code < 500 or attempt == POST_RETRIES:
                raise
        except OSError:
            if attempt == POST_RETRIES:
                raise
        time.sleep(2 ** attempt)
    raise AssertionError("unreachable")


def _run_job(cluster: HeadNodeCluster, job: dict[str, Any]) -> None:
    """The job's run: post every output, then COMPLETED (or FAILED when the portal refused one). A job
    ``scancel`` ended (or one left PENDING by :func:`hold`) posts nothing."""
    with _jobs_lock:
        if job["state"] != "PENDING" or job.get("held"):
            return
        job["state"] = "RUNNING"
    variables = job["variables"]
    try:
        for query, text in _outputs(cluster, variables):
            if job["state"] == "CANCELLED":
                return
            _post(variables.get("GENIAC_UPLOAD_URL", ""), variables.get("GENIAC_UPLOAD_TOKEN", ""), query, text)
    except Exception as exc:  # curl -f: the job ends FAILED with curl's complaint in its log
        job["state"], job["exit_code"], job["reason"] = "FAILED", "22:0", str(exc)[:200]
        return
    with _jobs_lock:
        if job["state"] == "RUNNING":
            job["state"], job["exit_code"] = "COMPLETED", "0:0"


def hold(cluster: HeadNodeCluster, reason: str = "Resources") -> None:
    """Jobs submitted to ``cluster`` from now on stay PENDING with ``reason`` (as behind a busy queue)."""
    cluster.state["hold"] = reason


def end_job(cluster: HeadNodeCluster, job_id: str, state: str, exit_code: str = "0:0", reason: str = "") -> None:
    """End job ``job_id`` as Slurm would have (``FAILED``, ``NODE_FAIL`` ...) without posting anything."""
    with _jobs_lock:
        job = _jobs(cluster)[job_id]
        job.update(state=state, exit_code=exit_code, reason=reason or "None")


@headnode_command(r"^sbatch\b")
def sbatch(context: Context) -> Result:
    if context.cluster is None:
        return Result(1, "", "sbatch: error: Batch job submission failed: Unable to contact slurm controller\n")
    script = _script(context.command)
    if not script.startswith("#!"):
        return Result(1, "", "sbatch: error: This does not look like a batch script.  The first\n"
                             "sbatch: error: line must start with #! followed by the path to an interpreter.\n")
    directives = {name: value or "" for name, value in _DIRECTIVE.findall(script)}
    nodelist = _option(context.argv, "--nodelist")
    known = {n.slurm_name for n in context.cluster.nodes}
    if nodelist and any(name not in known for name in nodelist.split(",")):
        return Result(1, "", "sbatch: error: Batch job submission failed: Invalid node name specified\n")
    jobs = _jobs(context.cluster)
    job_id = str(1000 + len(jobs) + 1)
    held = context.cluster.state.get("hold", "")
    job = {"id": job_id, "name": directives.get("job-name", "sbatch"), "state": "PENDING", "exit_code": "0:0",
           "nodes": directives.get("nodes", str(len(context.cluster.nodes))), "variables": _variables(script),
           "reason": held or "None", "held": bool(held)}
    jobs[job_id] = job
    timer = threading.Timer(JOB_SECONDS, _run_job, args=(context.cluster, job))
    timer.daemon = True
    timer.start()
    parsable = "--parsable" in context.argv
    return Result(0, f"{job_id}\n" if parsable else f"Submitted batch job {job_id}\n")


def _option(argv: list[str], name: str) -> str:
    """``--name=value`` or ``--name value`` from the command line, else ""."""
    for index, arg in enumerate(argv):
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
    return ""


def _job_ids(argv: list[str]) -> list[str]:
    for index, arg in enumerate(argv):
        if arg in ("-j", "--jobs") and index + 1 < len(argv):
            return argv[index + 1].split(",")
        if arg.startswith(("--jobs=", "-j")) and len(arg) > 2:
            return arg.split("=", 1)[-1].removeprefix("-j").split(",")
    return []


@headnode_command(r"^squeue\b")
def squeue(context: Context) -> Result:
    jobs = _jobs(context.cluster) if context.cluster else {}
    wanted = _job_ids(context.argv)
    rows = [j for j in jobs.values() if j["state"] in ("PENDING", "RUNNING") and (not wanted or j["id"] in wanted)]
    lines = [] if "--noheader" in context.argv or "-h" in context.argv else ["JOBID|NAME|STATE|NODES"]
    lines += [f"{j['id']}|{j['name']}|{j['state']}|{j['nodes']}" for j in rows]
    return Result(0, "".join(f"{line}\n" for line in lines))


SACCT_FIELDS = {"jobid": "id", "jobname": "name", "state": "state", "exitcode": "exit_code", "reason": "reason",
                "nnodes": "nodes"}


def _format(argv: list[str]) -> list[str]:
    """``-o``/``--format`` fields (JobID, JobName, State, ExitCode, Reason, NNodes); sacct's default otherwise."""
    for index, arg in enumerate(argv):
        if arg in ("-o", "--format") and index + 1 < len(argv):
            return [f.split("%")[0].lower() for f in argv[index + 1].split(",")]
        if arg.startswith("--format="):
            return [f.split("%")[0].lower() for f in arg.split("=", 1)[1].split(",")]
    return ["jobid", "jobname", "state", "exitcode"]


@headnode_command(r"^sacct\b")
def sacct(context: Context) -> Result:
    """``sacct -j <ids> -n -P -o JobID,State,ExitCode,Reason``: ``|``-separated rows, a cancelled job's state as
    Slurm writes it (``CANCELLED by <uid>``); an unknown job id prints no row, as sacct does."""
    jobs = _jobs(context.cluster) if context.cluster else {}
    wanted = _job_ids(context.argv)
    fields = _format(context.argv)
    unknown = [f for f in fields if f not in SACCT_FIELDS]
    if unknown:
        return Result(1, "", f"sacct: error: Invalid field requested: \"{unknown[0]}\"\n")
    rows = [j for j in jobs.values() if not wanted or j["id"] in wanted]
    header = {"jobid": "JobID", "jobname": "JobName", "state": "State", "exitcode": "ExitCode", "reason": "Reason",
              "nnodes": "NNodes"}
    lines = [] if "--noheader" in context.argv or "-n" in context.argv else ["|".join(header[f] for f in fields)]
    for job in rows:
        values = {**job, "state": "CANCELLED by 0" if job["state"] == "CANCELLED" else job["state"]}
        lines.append("|".join(str(values[SACCT_FIELDS[f]]) for f in fields))
    return Result(0, "".join(f"{line}\n" for line in lines))


@headnode_command(r"^scancel\b")
def scancel(context: Context) -> Result:
    """``scancel <job id>``: a pending or running job ends CANCELLED and posts nothing more; Slurm's own errors
    for an unknown or finished job (exit status 1)."""
    jobs = _jobs(context.cluster) if context.cluster else {}
    ids = [a for a in context.argv[1:] if not a.startswith("-")]
    if not ids:
        return Result(1, "", "scancel: error: No job identification provided\n")
    errors = []
    with _jobs_lock:
        for job_id in ids:
            job = jobs.get(job_id)
            if job is None:
                errors.append(f"scancel: error: Kill job error on job id {job_id}: Invalid job id specified\n")
            elif job["state"] not in ("PENDING", "RUNNING"):
                errors.append(f"scancel: error: Kill job error on job id {job_id}: "
                              "Job/step already completing or completed\n")
            else:
                job.update(state="CANCELLED", exit_code="0:15", reason="None")
    return Result(1 if errors else 0, "", "".join(errors))
