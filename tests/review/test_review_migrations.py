"""The review app's data migrations: tag mentions copied from the tags already stored, and the weeks recounted
with their new and resolved interactions."""
import datetime

import pytest
from django.utils import timezone

from portal.core.weeks import week_of
from tests.migrations import migrate, rolled_back_to


@pytest.mark.django_db(transaction=True)
def test_tags_stored_before_the_mentions_existed_are_copied():
    with rolled_back_to([("review", "0003_interaction_tallies")]) as old:
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
        migrate([("review", "0004_tag_mentions")])
        from portal.review.models import TagMention

        assert set(TagMention.objects.values_list("interaction_id", "tag_id", "organization_id", "visibility",
                                                  "occurred_at")) == {
            (shared.pk, nccl.pk, org.pk, "shared", now), (shared.pk, efa.pk, org.pk, "shared", now),
            (internal.pk, efa.pk, other.pk, "internal", now)}


@pytest.mark.django_db(transaction=True)
def test_weeks_counted_before_new_and_resolved_existed_are_recounted():
    with rolled_back_to([("review", "0004_tag_mentions")]) as old:
        Organization = old.get_model("portal", "Organization")
        Interaction = old.get_model("workloads", "Interaction")
        org = Organization.objects.create(name="Earlier", slug="earlier", aws_account_id="123456789012")
        now = timezone.now()
        last_week = now - datetime.timedelta(days=7)
        Interaction.objects.create(organization=org, summary="open", occurred_at=now, visibility="shared")
        Interaction.objects.create(organization=org, summary="done", occurred_at=last_week, resolved_at=now,
                                   status="resolved", visibility="shared")
        migrate([("review", "0005_week_new_resolved")])
        from portal.review.models import InteractionWeek

        weeks = {w: (new, resolved) for w, new, resolved in
                 InteractionWeek.objects.values_list("week", "new", "resolved")}
        assert weeks == {week_of(now): (1, 1), week_of(last_week): (1, 0)}
