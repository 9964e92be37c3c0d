"""The review app's data migrations: tag mentions copied from the tags already stored, and the weeks recounted
with their new and resolved interactions."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("review", "0003_interaction_tallies")]
AFTER = [("review", "0004_tag_mentions")]


@pytest.mark.django_db(transaction=True)
def test_tags_stored_before_the_mentions_existed_are_copied():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Organization = old.get_model("portal", "Organization")
    Interaction = old.get_model("workloads", "Interaction")
    Tag = old.get_model("workloads", "ChallengeTag")
    org = Organization.objects.create(name="Earlier", slug="earlier", aws_account_id="123456789012")
    other = Organization.objects.create(name="Other", slug="other", aws_account_id="210987654321")
    nccl, efa = Tag.objects.create(slug="nccl-x", name="NCCL"), Tag.objects.create(slug="efa-x", name="EFA")
    now = timezone.now()
    shared = Interaction.objects.create(organization=org, summary="shared", occurred_at=now, visibility="shared")
    internal = Interaction.objects.create(organization=other, summary="internal", occurred_at=now,
                                          visibility="internal")
    Interaction.objects.create(organization=org, summary="untagged", occurred_at=now, visibility="shared")
    shared.tags.set([nccl, efa])
    internal.tags.set([efa])
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        from portal.review.models import TagMention

        assert set(TagMention.objects.values_list("interaction_id", "tag_id", "organization_id", "visibility",
                                                  "occurred_at")) == {
            (shared.pk, nccl.pk, org.pk, "shared", now), (shared.pk, efa.pk, org.pk, "shared", now),
            (internal.pk, efa.pk, other.pk, "internal", now)}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_weeks_counted_before_new_and_resolved_existed_are_recounted():
    import datetime

    from portal.weeks import week_of

    before, after = [("review", "0004_tag_mentions")], [("review", "0005_week_new_resolved")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    Organization = old.get_model("portal", "Organization")
    Interaction = old.get_model("workloads", "Interaction")
    org = Organization.objects.create(name="Earlier", slug="earlier", aws_account_id="123456789012")
    now = timezone.now()
    last_week = now - datetime.timedelta(days=7)
    Interaction.objects.create(organization=org, summary="open", occurred_at=now, visibility="shared")
    Interaction.objects.create(organization=org, summary="done", occurred_at=last_week, resolved_at=now,
                               status="resolved", visibility="shared")
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        from portal.review.models import InteractionWeek

        weeks = {w: (new, resolved) for w, new, resolved in
                 InteractionWeek.objects.values_list("week", "new", "resolved")}
        assert weeks == {week_of(now): (1, 1), week_of(last_week): (1, 0)}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
