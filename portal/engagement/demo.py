"""Demo escalations, modeled on the case study: the Sakura Vision EFA issue goes to the EC2 service team
(accepted), Shirakawa AI's checkpoint throughput to the Frameworks specialists (answered), and two
specialists who sign in to see only their team's queue. Idempotent."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from portal.demo import _user
from portal.engagement import services, targets
from portal.engagement.models import Escalation, EscalationTarget, Specialist
from workloads.models import Interaction

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
