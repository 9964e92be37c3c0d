"""One check for "the number of queries does not grow with the rows": measure at two sizes.

``assert_flat_queries(run, grow=...)`` adds ``sizes[0]`` rows with ``grow(n)``, counts the queries of
``run()``, adds rows up to ``sizes[1]``, counts again and fails when the second count is larger (and,
given ``at_most``, when the first exceeds it). ``run`` is a callable, or a test client with a URL.
"""
from __future__ import annotations

from collections.abc import Callable

from django.db import connection
from django.test.utils import CaptureQueriesContext


def page(client, url: str, params: dict | None = None, *, status: int = 200, **extra) -> Callable[[], object]:
    """A callable that GETs ``url`` (reading a streamed body to its end) and checks the status."""

    def run():
        response = client.get(url, params or {}, **extra)
        if getattr(response, "streaming", False):
            b"".join(response.streaming_content)
        assert response.status_code == status, (url, response.status_code)
        return response

    return run


def count_queries(run: Callable[[], object]) -> int:
    with CaptureQueriesContext(connection) as ctx:
        run()
    return len(ctx.captured_queries)


def assert_flat_queries(run, url: str | None = None, *, grow: Callable[[int], object], params: dict | None = None,
                        sizes: tuple[int, int] = (10, 30), at_most: int | None = None, batches: int = 0,
                        **extra) -> tuple[int, int]:
    """Fail when ``run`` needs more queries at ``sizes[1]`` rows than at ``sizes[0]``; return both counts.

    ``batches`` allows that many more at the larger size where a database splits one statement in
    batches (SQLite's 999 parameters a statement).
    """
    if url is not None:
        run = page(run, url, params, **extra)
    small_n, large_n = sizes
    grow(small_n)
    run()  # warm caches that are filled once per process (content types, the user's roles)
    small = count_queries(run)
    grow(large_n - small_n)
    large = count_queries(run)
    assert large <= small + batches, f"{large} queries at {large_n} rows, {small} at {small_n}: the count grows"
    if at_most is not None:
        assert small <= at_most, f"{small} queries at {small_n} rows, more than {at_most}"
    return small, large
