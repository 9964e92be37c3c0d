"""The overview's interaction pre-aggregates (:class:`InteractionCount`, :class:`InteractionWeek`) and the heat
map's tag mentions (:class:`TagMention`), kept on write.

Kept in the transaction that writes the interaction rather than refreshed by a periodic task: the overview
shows the state of now, and a refresh every few minutes would show a resolved interaction as open until it
ran. A write does not add or subtract one: it recounts the few buckets it touched (the organization's open
counts, the weeks of the interaction's old and new dates) from the interactions themselves, under a
per-organization lock held until commit. Concurrent writers therefore cannot lose a count: whoever takes
the lock last recounts with everything the others committed.

Hooks: ``pre_save``/``post_save``/``pre_delete``/``post_delete`` of ``Interaction`` (every page, API, admin
and demo write) and ``workloads.interactions.signals.written`` for the services' queryset updates of
``resolved_at``. ``bulk_create`` sends no signal: whoever bulk-loads calls :func:`rebuild` (the
``rebuild_interaction_tallies`` command).

Tag mentions copy the interaction's organization, visibility and date beside each of its tags: they are
added and removed with the tags (``m2m_changed``, from either side), rewritten from the stored row when a
save changed one of the copied fields, and deleted with the interaction or the tag (cascade).
"""
from __future__ import annotations

import datetime
from collections import defaultdict

from django.db import transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete, pre_save
from django.utils import timezone

from portal.core import locks
from portal.core.choices import OPEN_STATUSES
from portal.core.weeks import week_of
from portal.review.models import InteractionCount, InteractionWeek, TagMention
from workloads.interactions.models import Interaction
from workloads.interactions.signals import interaction_written

TOUCHED = "_tally_touched"  # on the interaction instance: {organization id: {week, ...}} to recount
STORED = "_tally_stored"  # on the interaction instance: the copied fields as stored before this save
COPIED = ("organization_id", "visibility", "occurred_at")  # what a tag mention copies from its interaction


def _remember(instance, organization_id, occurred_at, resolved_at) -> None:
    touched = instance.__dict__.setdefault(TOUCHED, defaultdict(set))
    weeks = touched[organization_id]
    for moment in (occurred_at, resolved_at):
        if moment is not None:
            weeks.add(week_of(moment))


def _remember_stored(instance) -> None:
    """The row as stored now (locked until commit, so a concurrent edit of it waits for this one)."""
    row = (type(instance)._default_manager.select_for_update().filter(pk=instance.pk)
           .values("organization_id", "occurred_at", "resolved_at", "visibility").first())
    if row is not None:
        _remember(instance, row["organization_id"], row["occurred_at"], row["resolved_at"])
        instance.__dict__[STORED] = tuple(row[name] for name in COPIED)


def before_write(sender, instance, raw=False, **kwargs) -> None:
    if instance.pk is not None:
        _remember_stored(instance)


def after_save(sender, instance, created=False, **kwargs) -> None:
    _remember(instance, instance.organization_id, instance.occurred_at, instance.resolved_at)
    recount(instance)
    stored = instance.__dict__.pop(STORED, None)
    if not created and stored != tuple(getattr(instance, name) for name in COPIED):
        copy_to_mentions(type(instance), instance.pk)


def copy_to_mentions(model, interaction_id: int) -> None:
    """Rewrite an interaction's tag mentions from its row as stored (the row is locked until commit)."""
    row = model._default_manager.filter(pk=OuterRef("interaction_id"))
    TagMention.objects.filter(interaction_id=interaction_id).update(
        **{name: Subquery(row.values(name)[:1]) for name in COPIED})


def tags_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    """Tags added to or removed from interactions (``interaction.tags`` or ``tag.interactions``)."""
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    own = {"tag_id": instance.pk} if reverse else {"interaction_id": instance.pk}
    other = "interaction_id" if reverse else "tag_id"
    if action == "post_clear":
        TagMention.objects.filter(**own).delete()
    elif action == "post_remove":
        TagMention.objects.filter(**own, **{f"{other}__in": pk_set}).delete()
    elif pk_set:
        add_mentions(interaction_ids=pk_set if reverse else {instance.pk}, tag_ids={instance.pk} if reverse else pk_set)


def add_mentions(*, interaction_ids, tag_ids, model=None) -> None:
    """Mentions of ``tag_ids`` on ``interaction_ids``, copied from the interactions as stored now (their rows
    locked: an edit of one in flight commits first, and this reads what it wrote)."""
    if model is None:
        model = Interaction
    rows = (model._default_manager.select_for_update().filter(pk__in=interaction_ids).order_by("pk")
            .values_list("pk", *COPIED))
    TagMention.objects.bulk_create([
        TagMention(interaction_id=pk, tag_id=tag_id, organization_id=org_id, visibility=visibility,
                   occurred_at=occurred_at)
        for pk, org_id, visibility, occurred_at in rows for tag_id in sorted(tag_ids)], ignore_conflicts=True)


def after_delete(sender, instance, **kwargs) -> None:
    recount(instance)


def written(sender, instance, **kwargs) -> None:
    """The interaction's row was updated without ``save()``: recount what it touched before and now."""
    _remember_stored(instance)
    recount(instance)


def recount(instance) -> None:
    touched = instance.__dict__.get(TOUCHED) or {}
    with transaction.atomic():
        for organization_id in sorted(touched):  # one order for every writer: no deadlock between two
            locks.hold("interaction-tally", organization_id)
            recount_organization(organization_id, touched[organization_id], model=type(instance))


def recount_organization(organization_id: int, weeks: set[datetime.date] | None = None, *, model=None,
                         count_model=InteractionCount, week_model=InteractionWeek) -> None:
    """Recount an organization's open interactions and the given ``weeks`` (every week when ``None``)."""
    if model is None:
        model = Interaction
    rows = model._default_manager.filter(organization_id=organization_id)
    counts = (rows.filter(status__in=OPEN_STATUSES).values("visibility", "severity")
              .annotate(n=Count("id"), unbounded=Count("id", filter=Q(resolved_at__isnull=True))).order_by())
    count_model._default_manager.filter(organization_id=organization_id).delete()
    count_model._default_manager.bulk_create([
        count_model(organization_id=organization_id, visibility=c["visibility"], severity=c["severity"],
                    open=c["n"], unbounded=c["unbounded"]) for c in counts])
    scan, existing = rows, week_model._default_manager.filter(organization_id=organization_id)
    if weeks is not None:
        if not weeks:
            return
        within = Q()
        for week in weeks:
            start = timezone.make_aware(datetime.datetime.combine(week, datetime.time.min))
            end = timezone.make_aware(datetime.datetime.combine(week + datetime.timedelta(weeks=1),
                                                                datetime.time.min))
            within |= Q(occurred_at__gte=start, occurred_at__lt=end) | Q(resolved_at__gte=start, resolved_at__lt=end)
        scan, existing = rows.filter(within), existing.filter(week__in=weeks)
    tally: dict[tuple[str, datetime.date], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for occurred_at, resolved_at, status, visibility in scan.values_list(
            "occurred_at", "resolved_at", "status", "visibility").order_by():
        tally[visibility, week_of(occurred_at)][2] += 1  # new that week, whatever became of it
        if resolved_at is not None and status not in OPEN_STATUSES:
            tally[visibility, week_of(resolved_at)][3] += 1
        # Open at a date d when occurred_at < d <= resolved_at (no end while open without a resolution time).
        if resolved_at is None and status not in OPEN_STATUSES or resolved_at is not None and resolved_at <= occurred_at:
            continue
        tally[visibility, week_of(occurred_at)][0] += 1
        if resolved_at is not None:
            tally[visibility, week_of(resolved_at)][1] += 1
    existing.delete()
    # The migration that first counted the weeks runs with a model that has no new and resolved yet.
    with_week_figures = any(f.name == "new" for f in week_model._meta.get_fields())
    week_model._default_manager.bulk_create([
        week_model(organization_id=organization_id, visibility=visibility, week=week, opened=opened, closed=closed,
                   **({"new": new, "resolved": resolved} if with_week_figures else {}))
        for (visibility, week), (opened, closed, new, resolved) in tally.items()
        if weeks is None or week in weeks])


def rebuild(*, model=None, count_model=InteractionCount, week_model=InteractionWeek, mention_model=TagMention,
            organization_ids=None) -> int:
    """Recount everything (after bulk loads, and the back-fill migration); returns the organizations recounted."""
    if model is None:
        model = Interaction
    if organization_ids is None:
        organization_ids = sorted(set(model._default_manager.values_list("organization_id", flat=True).distinct()))
        with transaction.atomic():
            # Organizations without interactions any more keep no rows.
            for kept in (count_model, week_model, mention_model):
                if kept is not None:
                    kept._default_manager.exclude(organization_id__in=organization_ids).delete()
    for organization_id in organization_ids:
        with transaction.atomic():
            locks.hold("interaction-tally", organization_id)
            recount_organization(organization_id, None, model=model, count_model=count_model,
                                 week_model=week_model)
            if mention_model is not None:  # None: before the mentions' table exists (its own migration copies them)
                copy_mentions(organization_id, model=model, mention_model=mention_model)
    return len(organization_ids)


def copy_mentions(organization_id: int, *, model, mention_model=TagMention) -> None:
    """An organization's tag mentions, copied again from its interactions and their tags."""
    field = model._meta.get_field("tags")
    through = field.remote_field.through
    source, target = field.m2m_field_name(), field.m2m_reverse_field_name()
    links = (through._default_manager.filter(**{f"{source}__organization_id": organization_id}).order_by()
             .values_list(f"{source}_id", f"{target}_id", *(f"{source}__{name}" for name in COPIED[1:])))
    mention_model._default_manager.filter(organization_id=organization_id).delete()
    mention_model._default_manager.bulk_create([
        mention_model(interaction_id=interaction_id, tag_id=tag_id, organization_id=organization_id,
                      visibility=visibility, occurred_at=occurred_at)
        for interaction_id, tag_id, visibility, occurred_at in links.iterator(chunk_size=5000)], batch_size=5000)


def connect() -> None:
    pre_save.connect(before_write, sender=Interaction, dispatch_uid="review-tally-pre-save")
    post_save.connect(after_save, sender=Interaction, dispatch_uid="review-tally-post-save")
    pre_delete.connect(before_write, sender=Interaction, dispatch_uid="review-tally-pre-delete")
    post_delete.connect(after_delete, sender=Interaction, dispatch_uid="review-tally-post-delete")
    interaction_written.connect(written, sender=Interaction, dispatch_uid="review-tally-written")
    m2m_changed.connect(tags_changed, sender=Interaction.tags.through, dispatch_uid="review-tag-mentions")
