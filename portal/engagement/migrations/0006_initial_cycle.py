"""Give the program its first cycle: every existing organization takes part (with its lead SAs), every
blueprint is offered, and every existing quota, reservation, cluster, review, enablement session and outcome
belongs to it. The cycle is active, so new rows default to it."""
from django.db import migrations


def forward(apps, schema_editor):
    Cycle = apps.get_model("engagement", "Cycle")
    if Cycle.objects.exists():
        cycle = Cycle.objects.filter(status="active").first()
    else:
        Organization = apps.get_model("portal", "Organization")
        first = Organization.objects.order_by("created").values_list("created", flat=True).first()
        cycle = Cycle.objects.create(number=1, name="Cycle 1", status="active",
                                     starts_on=first.date() if first else None)
        Blueprint = apps.get_model("clusters", "Blueprint")
        cycle.blueprints.set(Blueprint.objects.all())
        Participation = apps.get_model("engagement", "CycleParticipation")
        Membership = apps.get_model("portal", "Membership")
        for org in Organization.objects.all():
            participation = Participation.objects.create(cycle=cycle, organization=org)
            participation.lead_sas.set(Membership.objects.filter(organization=org, role="lead_sa")
                                       .values_list("user_id", flat=True))
    if cycle is None:
        return
    for app, model in (("workloads", "InstanceQuota"), ("workloads", "CapacityReservation"),
                       ("workloads", "EnablementSession"), ("clusters", "Cluster"), ("review", "WeeklyReview"),
                       ("engagement", "Milestone"), ("engagement", "TrainedModel")):
        apps.get_model(app, model).objects.filter(cycle__isnull=True).update(cycle=cycle)


class Migration(migrations.Migration):
    dependencies = [
        ("engagement", "0005_cycles"),
        ("workloads", "0006_cycles"),
        ("clusters", "0004_cycles"),
        ("review", "0002_cycles"),
    ]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
