"""The migration that adds the heat map's tag mentions copies the tags already on interactions."""
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
