"""The production-shaped stack of bench/time_to_know.py and what it listens and pushes with.

- ``Stack``: gunicorn (gunicorn.conf.py), one Celery worker process on the health queue, one on the others
  (default, notifications, launches), beat; each logging to a file, each stopped (its process group) at the end.
- ``SlackListener`` and ``SmtpListener``: a Slack incoming webhook and an SMTP server on loopback, recording when
  each message arrived.
- ``Scrapes``: a cluster's DCGM + EFA scrape of p5.48xlarge nodes with the label sets of dcgm-exporter and the EFA
  node exporter (the families and labels of bench/health_ingest_parse.py), healthy unless told a fault.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from health_ingest_parse import BUS, COUNTERS, EFA, GAUGES, PROF

ROOT = Path(__file__).resolve().parent.parent
EFA_DEVICES = 32
TRAFFIC = ("tx_bytes", "rx_bytes", "rdma_read_bytes", "rdma_write_bytes")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    from portal.core.processes import die_with_parent

    return die_with_parent


@dataclass
class Stack:
    env: dict
    logs: Path
    port: int = field(default_factory=free_port)
    processes: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _start(self, name: str, args: list[str]) -> None:
        log = (self.logs / f"{name}.log").open("w")
        self.processes[name] = subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                                preexec_fn=_die_with_parent())

    def start(self, timeout: float = 180) -> None:
        celery = [sys.executable, "-m", "celery", "-A", "portal"]
        common = ["--loglevel", "INFO", "--without-gossip", "--without-mingle", "--pool", "prefork",
                  "--concurrency", "1"]
        self.env["GUNICORN_BIND"] = f"127.0.0.1:{self.port}"
        self._start("gunicorn", [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "portal.wsgi:application"])
        self._start("worker-health", celery + ["worker", "-Q", "health", "-n", f"ttk-health-{os.getpid()}@%h", *common])
        self._start("worker-default", celery + ["worker", "-Q", "default,notifications,launches",
                                                "-n", f"ttk-default-{os.getpid()}@%h", *common])
        self._start("beat", celery + ["beat", "--loglevel", "INFO", "--schedule", str(self.logs / "beat-schedule")])
        deadline = time.monotonic() + timeout
        for name in ("worker-health", "worker-default"):
            while "ready." not in (self.logs / f"{name}.log").read_text():
                self._check(name, deadline)
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=5) as answer:  # noqa: S310 - loopback
                    if answer.status == 200:
                        return
            except OSError:
                pass
            self._check("gunicorn", deadline)

    def _check(self, name: str, deadline: float) -> None:
        if self.processes[name].poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{name} did not start; its log:\n{(self.logs / f'{name}.log').read_text()[-3000:]}")
        time.sleep(0.5)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


class _Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.received: list[tuple[float, str]] = []  # (epoch seconds, text)

    def record(self, text: str) -> None:
        with self.lock:
            self.received.append((time.time(), text))

    def first_after(self, needle: str, after: float) -> float | None:
        with self.lock:
            return next((at for at, text in self.received if at >= after and needle in text), None)


class SlackListener(_Recorder):
    """An incoming-webhook stand-in: 200 to every POST, recording its JSON body."""

    def __init__(self):
        super().__init__()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.record(body.decode("utf-8", "replace"))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class SmtpListener(_Recorder):
    """Just enough SMTP (RFC 5321's EHLO, MAIL, RCPT, DATA, QUIT) to take the portal's e-mail on loopback."""

    def __init__(self):
        super().__init__()
        recorder = self

        class Handler(socketserver.StreamRequestHandler):
            def reply(self, line: str) -> None:
                self.wfile.write((line + "\r\n").encode())

            def handle(self):
                self.reply("220 bench ESMTP")
                data, in_data = [], False
                for _ in range(100_000):
                    raw = self.rfile.readline()
                    if not raw:
                        return
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if in_data:
                        if line == ".":
                            in_data = False
                            recorder.record("\n".join(data))
                            data = []
                            self.reply("250 queued")
                        else:
                            data.append(line)
                        continue
                    verb = line[:4].upper()
                    if verb == "DATA":
                        in_data = True
                        self.reply("354 go on")
                    elif verb == "QUIT":
                        self.reply("221 bye")
                        return
                    elif verb == "EHLO":
                        self.reply("250 bench")
                    else:
                        self.reply("250 ok")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@dataclass
class Faults:
    """What one push of a cluster carries besides health: GPU faults and nodes gone quiet."""

    xid79: set = field(default_factory=set)          # (node index, gpu)
    remap_failure: set = field(default_factory=set)  # (node index, gpu)
    silent: set = field(default_factory=set)         # node indexes that no longer report
    stalled: bool = False                            # GPUs idle and EFA flat from now on


def hostnames(cluster_index: int, nodes: int) -> list[str]:
    return [f"ip-10-{cluster_index % 250}-{n // 250}-{n % 250}" for n in range(nodes)]


class Scrapes:
    """A cluster's scrapes over time: the counters move on each push (EFA traffic grows while the run trains)."""

    def __init__(self, cluster_index: int, nodes: int):
        self.hosts = hostnames(cluster_index, nodes)
        self.traffic = 10**12
        self.cluster_index = cluster_index

    def text(self, faults: Faults) -> str:
        if not faults.stalled:
            self.traffic += 3 * 10**10  # ~1 GB/s per device over 30 s: a run that trains
        out: list[str] = []
        live = [(n, host) for n, host in enumerate(self.hosts) if n not in faults.silent]
        labels = [(n, g, f'gpu="{g}",UUID="GPU-{self.cluster_index:04x}{n:04x}-{g:04x}-4c1d-9a7e-{n * 8 + g:012x}",'
                         f'pci_bus_id="00000000:{BUS[g]}:00.0",device="nvidia{g}",modelName="NVIDIA H100 80GB HBM3",'
                         f'Hostname="{host}",DCGM_FI_DRIVER_VERSION="550.127.08"')
                  for n, host in live for g in range(8)]
        families = [(f"DCGM_FI_DEV_{m}", "gauge") for m in GAUGES] + [(f"DCGM_FI_DEV_{m}", "counter") for m in COUNTERS]
        families += [(f"DCGM_FI_PROF_{m}", "gauge") for m in PROF]
        for name, kind in families:
            out.append(f"# HELP {name} {name.lower()}.\n# TYPE {name} {kind}\n")
            for n, g, label in labels:
                out.append(f"{name}{{{label}}} {self._dcgm(name, n, g, faults)}\n")
        for metric in EFA:
            name = f"node_amazonefa_{metric}"
            out.append(f"# HELP {name} {metric}.\n# TYPE {name} counter\n")
            for n, host in live:
                for d in range(EFA_DEVICES):
                    value = self.traffic + n * 1000 + d if metric in TRAFFIC else 0
                    out.append(f'{name}{{device="rdmap{79 + d}s0",instance="{host}:9109",job="efa",port="1"}} {value}\n')
        return "".join(out)

    @staticmethod
    def _dcgm(name: str, n: int, g: int, faults: Faults):
        if name.endswith("XID_ERRORS"):
            return 79 if (n, g) in faults.xid79 else 0
        if name.endswith("ROW_REMAP_FAILURE"):
            return 1 if (n, g) in faults.remap_failure else 0
        if name.endswith("GR_ENGINE_ACTIVE"):
            return 0.01 if faults.stalled else 0.92
        if name.endswith("GPU_UTIL"):
            return 1 if faults.stalled else 93
        if name.endswith("GPU_TEMP"):
            return 40 + (n + g) % 30
        if name.endswith(("REMAPPED_ROWS", "VIOLATION", "VOL_TOTAL", "REPLAY_COUNTER")):
            return 0
        return (n * 8 + g) % 1000


def read_json(url: str, headers: dict, timeout: float = 10):
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - loopback
        return json.loads(answer.read())
