"""What the database benchmarks share: a throw-away PostgreSQL database and the median of repeated runs."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def fresh_database(url: str) -> None:
    """Drop and create the benchmark database (never the development or test ones: its name ends with _bench)."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    if not name.endswith("_bench"):
        raise SystemExit(f"refusing to recreate {name!r}: the benchmark database name must end with _bench")
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def median_ms(fn: Callable[[], object], runs: int) -> float:
    """The median wall time of ``runs`` calls of ``fn``, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
