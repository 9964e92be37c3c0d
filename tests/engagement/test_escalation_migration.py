"""The data migration turns escalation flags recorded before escalation records existed into records, and
makes the old escalation reasons internal."""
import pytest
from django.utils import timezone

from tests.migrations import migrate, rolled_back_to

BEFORE = [("engagement", "0001_initial")]
AFTER = [("engagement", "0002_targets_and_legacy_escalations")]


@pytest.mark.django_db(transaction=True)
def test_legacy_escalations_become_internal_records():
    with rolled_back_to(BEFORE) as old:
        Organization = old.get_model("portal", "Organization")
        Interaction = old.get_model("workloads", "Interaction")
        Comment = old.get_model("workloads", "InteractionComment")
        org = Organization.objects.create(name="Legacy", slug="legacy", aws_account_id="123456789012")
        now = timezone.now()
        flagged = Interaction.objects.create(organization=org, summary="flagged", escalated_at=now, visibility="shared")
        Interaction.objects.create(organization=org, summary="done", escalated_at=now, status="resolved",
                                   resolved_at=now, visibility="shared")
        plain = Interaction.objects.create(organization=org, summary="never escalated", visibility="shared")
        Comment.objects.create(interaction=flagged, kind="escalation", body="Blocked for 3 days", internal=False)
        Comment.objects.create(interaction=plain, kind="comment", body="a shared comment", internal=False)
        after = migrate(AFTER)
        Escalation = after.get_model("engagement", "Escalation")
        InteractionComment = after.get_model("workloads", "InteractionComment")

        rows = {e.interaction.summary: e for e in Escalation.objects.select_related("interaction", "target")}
        assert set(rows) == {"flagged", "done"}
        assert rows["flagged"].question == "Blocked for 3 days" and rows["flagged"].state == "requested"
        assert rows["flagged"].target.slug == "account-manager" and rows["flagged"].requested_at == now
        assert rows["done"].state == "closed" and rows["done"].closed_at == now
        assert rows["done"].question == "(escalated without a reason)"
        assert not InteractionComment.objects.filter(kind="escalation", internal=False).exists()
        assert InteractionComment.objects.get(body="a shared comment").internal is False
        # Running it again (back and forward) adds nothing.
        migrate(BEFORE)
        migrate(AFTER)
        assert Escalation.objects.count() == 2
