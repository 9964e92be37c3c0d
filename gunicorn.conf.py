"""gunicorn settings shared by the Dockerfile and docker-compose.yml, sized for a 2-core host.

Health pushes no longer parse in the request (the health worker does), so a request is short and
mostly waits on PostgreSQL: 3 processes x 4 threads serve 12 requests at once on 2 cores without a
slow client pinning a whole process. The timeout only has to cover the slowest page and a 256 MB
push body streamed to disk; recycling workers bounds memory growth. Every value can be overridden
from the environment (GUNICORN_WORKERS, GUNICORN_THREADS, GUNICORN_TIMEOUT)."""
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "3"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
worker_class = "gthread"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
max_requests = 2000
max_requests_jitter = 200
accesslog = "-"

# /metrics adds up every worker's counters from prometheus_client's multiprocess files (docs/metrics.md). An
# operator who names the directory (shared with the Celery workers, to count their side too) empties it before
# starting; otherwise each start gets a fresh one. It must be set before a worker imports prometheus_client.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    import tempfile

    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="geniac-metrics-")


def child_exit(server, worker):
    """A recycled or dead worker's gauges leave the sum (its counters stay counted)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
