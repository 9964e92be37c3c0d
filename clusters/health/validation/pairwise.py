"""The slow node of a pairwise sweep: every pair of nodes runs a 2-node all_reduce, and a node whose link
is slow drags down every pair it is in.

Pure arithmetic, no Django: the page, the API and the tests read the same answer. A pair is an
outlier when its plateau bus bandwidth is more than ``below`` under the median pair's (the upper
median, so that with four nodes, where half the pairs hold the slow node, the median is a healthy
pair). The slow node is the one common to the outlier pairs: named only when one node is in every
outlier pair and in at least two of them (with one outlier pair its two nodes cannot be told apart).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

OUTLIER_BELOW = 0.15


@dataclass(frozen=True)
class Pair:
    hosts: tuple[str, str]
    busbw: float
    deviation: float = 0.0  # share above (+) or under (-) the median pair

    @property
    def label(self) -> str:
        return " – ".join(self.hosts)


@dataclass
class Sweep:
    pairs: list[Pair]
    median: float | None
    outliers: list[Pair] = field(default_factory=list)
    slow_nodes: list[str] = field(default_factory=list)
    note: str = ""


def analyse(results: list[tuple[tuple[str, str], float]], below: float = OUTLIER_BELOW) -> Sweep:
    """Judge ``[((host_a, host_b), plateau busbw), ...]``."""
    if not results:
        return Sweep([], None, note="no pair has reported yet")
    median = statistics.median_high([busbw for _, busbw in results])
    pairs = [Pair(tuple(hosts), busbw, (busbw - median) / median if median else 0.0) for hosts, busbw in results]
    outliers = sorted((p for p in pairs if p.deviation < -below), key=lambda p: p.deviation)
    sweep = Sweep(pairs, median, outliers)
    if not outliers:
        sweep.note = f"every pair within {below:.0%} of the median pair"
        return sweep
    common = set(outliers[0].hosts).intersection(*(set(p.hosts) for p in outliers[1:]))
    if len(outliers) >= 2 and len(common) == 1:
        sweep.slow_nodes = sorted(common)
        sweep.note = (f"{sweep.slow_nodes[0]} is in every slow pair ({len(outliers)} of {len(pairs)} pairs more than "
                      f"{below:.0%} under the median pair's {median:.1f} GB/s)")
    else:
        sweep.note = (f"{len(outliers)} slow pair(s) with no single node common to all of them: "
                      "the fabric or several nodes, look at the pairs")
    return sweep
