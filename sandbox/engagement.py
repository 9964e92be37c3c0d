"""Demo escalations and outcomes, modeled on the case study: the Sakura Vision EFA issue goes to the EC2
service team (accepted), Shirakawa AI's checkpoint throughput to the Frameworks specialists (answered), two
specialists who sign in to see only their team's queue; the models of the cycle (a 100B Japanese LLM, a 405B
multilingual model, an 8B code model, a 32B multimodal model on Trainium) with their milestones. Idempotent."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from clusters.models import Blueprint
from portal.core import escalation_targets as targets
from portal.core.choices import CycleStatus
from portal.core.models import Cycle, CycleParticipation, EscalationTarget, Specialist
from portal.engagement import services
from portal.engagement.models import Escalation, Milestone, SlackChannelLink, SlackUserLink, TrainedModel
from sandbox.program import _user
from workloads.interactions.models import Interaction

SPECIALISTS = (("frameworks", "Takeshi", "Mori", "frameworks"), ("ec2", "Yuki", "Hayashi", "ec2"))

ESCALATIONS = (
    {"org": "sakura-vision", "summary": "EFA devices missing on 3 of 16 trn1 nodes", "target": "ec2",
     "question": "Three trn1.32xlarge nodes lose their EFA devices after the AMI update; the customer "
                 "replaced one node and it came back the same. Hardware or AMI?",
     "days_ago": 2, "steps": ("accept",), "answer": ""},
    {"org": "shirakawa-ai", "summary": "Checkpoints of the 405B model take 40 minutes", "target": "frameworks",
     "question": "Checkpointing a 405B model saturates FSx for Lustre at 125 MB/s/TiB. Asynchronous "
                 "checkpointing, or more throughput per TiB?",
     "days_ago": 6, "steps": ("accept", "answer"),
     "answer": "Both: move to 500 MB/s/TiB for the checkpoint window and use sharded, asynchronous "
               "checkpoints (torch.distributed.checkpoint); expect under 5 minutes."},
)


def seed(context: dict) -> None:
    seed_slack(context)
    seed_escalations(context)
    cycle_2 = seed_cycles(context)
    seed_outcomes(context, cycle_2)
    seed_current_milestones(context)


def seed_current_milestones(context: dict) -> None:
    """Cycle 3 so far: everyone onboarded, two clusters validated."""
    current = Cycle.objects.get(status=CycleStatus.ACTIVE)
    today = timezone.localdate()
    for slug, org in context["organizations"].items():
        Milestone.objects.get_or_create(organization=org, kind="onboarded", cycle=current,
                                        defaults={"reached_on": today - timedelta(days=95)})
        if slug in ("kotoba-labs", "shirakawa-ai"):
            Milestone.objects.get_or_create(organization=org, kind="cluster_validated", cycle=current,
                                            defaults={"reached_on": today - timedelta(days=80)})


def seed_slack(context: dict) -> None:
    """Kotoba Labs' shared channel, linked; the lead SA and the Kotoba engineer mapped to their Slack users."""
    SlackChannelLink.objects.get_or_create(channel_id="C0GENIACKOT", defaults={
        "name": "#geniac-kotoba-labs", "organization": context["organizations"]["kotoba-labs"]})
    for slack_id, username in (("U0DEMOLEAD", "lead"), ("U0DEMOKOTOBA", "kotoba")):
        user = _user(username)
        SlackUserLink.objects.get_or_create(team_id="T0GENIAC", slack_user_id=slack_id, defaults={"user": user})


CYCLE_2_ORGS = ("kotoba-labs", "shirakawa-ai", "mirai-code", "sakura-vision", "aozora-docs", "hokuto-speech",
                "tsubasa-robotics", "kumo-finance", "minato-medical", "yamabiko-research")
CARRIED = (
    "- Check `NCCL INFO NET/OFI Selected Provider is efa` in the first run of every new image.\n"
    "- Size FSx for Lustre throughput for checkpoint bursts, not for the average read rate.\n"
    "- Validate every cluster with nccl-tests before the first training job."
)


def seed_cycles(context: dict) -> Cycle:
    """Cycle 2 archived (the case study's cycle, ten organizations), cycle 3 active with all twelve: the cycle
    the database started with becomes cycle 3, so the demo's current rows belong to it."""
    existing = Cycle.objects.filter(number=2).first()
    if existing is not None:
        return existing
    today = timezone.localdate()
    current = Cycle.objects.filter(status=CycleStatus.ACTIVE).first() or Cycle.objects.create(
        number=3, name="GENIAC Cycle 3", status=CycleStatus.ACTIVE)
    Cycle.objects.filter(pk=current.pk).update(number=3, name="GENIAC Cycle 3", starts_on=today - timedelta(days=100),
                                               lessons_carried=CARRIED)
    current.refresh_from_db()
    cycle_2 = Cycle.objects.create(number=2, name="GENIAC Cycle 2", status=CycleStatus.ARCHIVED,
                                   starts_on=today - timedelta(days=400), ends_on=today - timedelta(days=101))
    orgs = context["organizations"]
    for cycle, slugs in ((cycle_2, CYCLE_2_ORGS), (current, tuple(orgs))):
        cycle.blueprints.set(Blueprint.objects.all())
        for slug in slugs:
            participation, _ = CycleParticipation.objects.get_or_create(cycle=cycle, organization=orgs[slug])
            participation.lead_sas.set(orgs[slug].memberships.filter(role="lead_sa").values_list("user", flat=True))
    return cycle_2


def seed_escalations(context: dict) -> None:
    rows = targets.sync(EscalationTarget)
    people = {}
    for username, first, last, slug in SPECIALISTS:
        user = _user(username, first=first, last=last)
        Specialist.objects.get_or_create(user=user, target=rows[slug])
        people[slug] = user
    orgs = context["organizations"]
    now = timezone.now()
    for spec in ESCALATIONS:
        interaction = Interaction.objects.filter(organization=orgs[spec["org"]], summary=spec["summary"]).first()
        if interaction is None or Escalation.objects.filter(interaction=interaction).exists():
            continue
        lead = interaction.owner or context["leads"]["lead"]
        escalation = services.raise_escalation(interaction, lead, rows[spec["target"]], spec["question"])
        for step in spec["steps"]:
            services.transition(escalation, people[spec["target"]], step, spec["answer"])
        Escalation.objects.filter(pk=escalation.pk).update(
            requested_at=now - timedelta(days=spec["days_ago"]),
            state_changed_at=now - timedelta(days=spec["days_ago"] - 1),
        )


# Milestones as days before today (None: not reached), per organization.
MILESTONES = {
    "kotoba-labs": {"onboarded": 120, "cluster_validated": 110, "training_started": 100, "first_checkpoint": 98,
                    "model_trained": 30, "model_released": 10},
    "shirakawa-ai": {"onboarded": 118, "cluster_validated": 105, "training_started": 95, "first_checkpoint": 90,
                     "model_trained": 20},
    "mirai-code": {"onboarded": 115, "cluster_validated": 100, "training_started": 90, "first_checkpoint": 88,
                   "model_trained": 45, "model_released": 25},
    "sakura-vision": {"onboarded": 110, "cluster_validated": 80, "training_started": 70, "first_checkpoint": 66},
    "aozora-docs": {"onboarded": 100, "cluster_validated": 92},
}

TRAINED_MODELS = (
    {"org": "kotoba-labs", "name": "Stockmark-2-100B-Instruct-beta", "parameters_billions": 100, "modality": "text",
     "instance_type": "p5.48xlarge", "instance_count": 32, "released": 10,
     "notes": "100B-parameter Japanese LLM pre-trained from scratch, instruction-tuned."},
    {"org": "shirakawa-ai", "name": "Llama 3.1 Shisa V2 405B", "parameters_billions": 405, "modality": "text",
     "instance_type": "p5.48xlarge", "instance_count": 40, "released": None,
     "notes": "Multilingual model for tourism, continued pre-training of Llama 3.1 405B."},
    {"org": "mirai-code", "name": "Llama-3.1-Future-Code-Ja-8B", "parameters_billions": 8, "modality": "code",
     "instance_type": "p5.48xlarge", "instance_count": 4, "released": 25,
     "notes": "Japanese code model fine-tuned from Llama 3.1 8B."},
    {"org": "sakura-vision", "name": "Sakura-VL-32B", "parameters_billions": 32, "modality": "multimodal",
     "instance_type": "trn1.32xlarge", "instance_count": 24, "released": None,
     "notes": "32B multimodal model trained on Trainium."},
)


def seed_outcomes(context: dict, cycle: Cycle) -> None:
    """The case study's outcomes, in cycle 2 (ended 101 days ago)."""
    orgs = context["organizations"]
    today = cycle.ends_on
    for slug, kinds in MILESTONES.items():
        for kind, days in kinds.items():
            Milestone.objects.get_or_create(organization=orgs[slug], kind=kind, cycle=cycle,
                                            defaults={"reached_on": today - timedelta(days=days)})
    for spec in TRAINED_MODELS:
        TrainedModel.objects.get_or_create(
            organization=orgs[spec["org"]], name=spec["name"],
            defaults={"cycle": cycle, "parameters_billions": spec["parameters_billions"], "modality": spec["modality"],
                      "instance_type": spec["instance_type"], "instance_count": spec["instance_count"],
                      "released_on": today - timedelta(days=spec["released"]) if spec["released"] else None,
                      "notes": spec["notes"]},
        )
