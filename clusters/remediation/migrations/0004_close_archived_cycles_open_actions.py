"""Actions proposed or approved on a cluster of a cycle archived before the archive closed them (``close_archived``)
could never be approved, declined or cancelled and held their nodes and the cluster's slot for good: cancel them as
the archive now does, releasing their nodes."""
from django.db import migrations
from django.utils import timezone

OPEN_NOT_STARTED = ("proposed", "approved")


def close(apps, schema_editor):
    action_model = apps.get_model("remediation", "RemediationAction")
    node_model = apps.get_model("remediation", "RemediationNode")
    now = timezone.now()
    stuck = action_model.objects.filter(cluster__cycle__status="archived", state__in=OPEN_NOT_STARTED)
    ids = list(stuck.values_list("pk", flat=True))
    action_model.objects.filter(pk__in=ids, state__in=OPEN_NOT_STARTED).update(
        state="cancelled", finished_at=now, refused_rule="cycle_archived",
        refusal="Cancelled: the cluster's program cycle was archived.")
    node_model.objects.filter(action_id__in=ids, active=True).update(active=False, released_at=now)


class Migration(migrations.Migration):

    dependencies = [
        ("remediation", "0003_remediation_policy_change"),
        ("clusters", "0009_merge_0008_cycle_in_core_0008_launchjob_dispatched_at"),
    ]

    operations = [migrations.RunPython(close, migrations.RunPython.noop)]
