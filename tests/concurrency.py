"""Requests and services released together: the races of the concurrency tests (PostgreSQL only)."""
from __future__ import annotations

import threading

from django.db import connections
from django.test import Client
from rest_framework.test import APIClient


def race(count: int, action) -> list:
    """Run ``action(i)`` in ``count`` threads released at once by a barrier; each thread has its own
    database connection. Returns each thread's result, or the exception it raised."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[i] = action(i)
        except BaseException as exc:  # noqa: BLE001 - the test looks at every outcome
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread never finished"
    return results


def signed_in(user, count: int, *, api: bool = False, **kwargs) -> list:
    """``count`` test clients signed in as ``user``: page clients, or API clients with ``api=True``."""
    made = []
    for _ in range(count):
        if api:
            client = APIClient(**kwargs)
            client.force_authenticate(user)
        else:
            client = Client(**kwargs)
            client.force_login(user)
        made.append(client)
    return made
