"""The blueprint catalog: the YAML files are the source of truth, ``Blueprint`` rows follow them.

``sync()`` runs on demand (the catalog page, a launch, the demo) and is cheap when nothing changed:
one query and a hash of six small files.
"""
from __future__ import annotations

from functools import lru_cache

from django.utils import timezone

from clusters.blueprints import cfn
from clusters.models import Blueprint

# The stack each kind of blueprint plays in a cluster, and which kinds make a cluster on their own.
ROLE_OF_KIND = {"network": "network", "storage": "storage", "parallelcluster": "cluster", "hyperpod": "cluster",
                "observability": "observability", "hyperpod-eks": "cluster"}
CLUSTER_KINDS = ("parallelcluster", "hyperpod", "hyperpod-eks")


def _fingerprint() -> tuple:
    """Name, size and modification time of every blueprint file: cheap, and changes when a file does."""
    return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(cfn.BLUEPRINTS_DIR.glob("*.yaml")))


@lru_cache(maxsize=4)
def _catalog(fingerprint: tuple) -> dict[str, cfn.Blueprint]:
    return {entry.slug: entry for entry in cfn.catalog()}


@lru_cache(maxsize=32)
def _template(slug: str, fingerprint: tuple) -> dict:
    return cfn.load(_catalog(fingerprint)[slug].path)


def entries() -> dict[str, cfn.Blueprint]:
    """Every shipped blueprint by slug, in launch order (parsed once per version of the files)."""
    return _catalog(_fingerprint())


def entry(slug: str) -> cfn.Blueprint:
    found = entries().get(slug)
    if found is None:
        raise KeyError(slug)
    return found


def template_body(slug: str) -> str:
    return entry(slug).path.read_text(encoding="utf-8")


def template(slug: str) -> dict:
    """The parsed template; treat it as read-only (it is shared)."""
    entry(slug)
    return _template(slug, _fingerprint())


def sync() -> dict[str, Blueprint]:
    """Create or update one row per blueprint file; returns the rows by slug.

    Requests may sync at the same moment (the first launches on a new database): a row another request
    created meanwhile is read, not inserted twice.
    """
    rows = {b.slug: b for b in Blueprint.objects.all()}
    missing = [item for item in entries().values() if item.slug not in rows]
    if missing:
        Blueprint.objects.bulk_create(
            [Blueprint(slug=item.slug, kind=item.kind, title=item.title, summary=item.summary, version=item.version,
                       content_hash=item.content_hash) for item in missing], ignore_conflicts=True)
        rows.update({b.slug: b for b in Blueprint.objects.filter(slug__in=[item.slug for item in missing])})
    for item in entries().values():
        row = rows[item.slug]
        values = {"kind": item.kind, "title": item.title, "summary": item.summary, "version": item.version,
                  "content_hash": item.content_hash}
        if any(getattr(row, k) != v for k, v in values.items()):
            for k, v in values.items():
                setattr(row, k, v)
            row.synced = timezone.now()
            row.save()
    return rows
