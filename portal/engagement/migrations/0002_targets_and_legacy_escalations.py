"""Load the curated escalation targets, and turn every escalation flag recorded before targets existed into an
escalation record (to the account team, who triage it). The old escalation entries in interaction histories
become internal: an escalation reason is never a customer's to read."""
from django.db import migrations

from portal.core import escalation_targets as targets


def forward(apps, schema_editor):
    Target = apps.get_model("engagement", "EscalationTarget")
    Escalation = apps.get_model("engagement", "Escalation")
    Interaction = apps.get_model("workloads", "Interaction")
    Comment = apps.get_model("workloads", "InteractionComment")
    rows = targets.sync(Target)
    legacy = rows[targets.LEGACY_TARGET]
    for interaction in Interaction.objects.filter(escalated_at__isnull=False).iterator():
        if Escalation.objects.filter(interaction=interaction).exists():
            continue
        reasons = list(Comment.objects.filter(interaction=interaction, kind="escalation")
                       .order_by("created", "id").values_list("body", "author_id"))
        question = "\n\n".join(body for body, _ in reasons if body) or "(escalated without a reason)"
        closed = interaction.status == "resolved"
        when = interaction.resolved_at or interaction.escalated_at
        Escalation.objects.create(
            interaction=interaction, target=legacy, question=question,
            requested_by_id=reasons[0][1] if reasons else None, requested_at=interaction.escalated_at,
            state="closed" if closed else "requested", closed_at=when if closed else None,
            state_changed_at=when if closed else interaction.escalated_at,
        )
    Comment.objects.filter(kind="escalation", internal=False).update(internal=True)


class Migration(migrations.Migration):
    dependencies = [
        ("engagement", "0001_initial"),
        ("workloads", "0005_interaction_workload"),
    ]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
