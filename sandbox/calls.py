"""The demo's call for the next cycle (GENIAC Cycle 4), open, with three applications made through the services
as the pages make them: Kotoba Labs' draft, pre-filled from its record of cycle 3; Mirai Code's, submitted and
scored by two reviewers; Shirakawa AI's, awarded, so its quotas for cycle 4 wait in cycle 3 until the cycle start
carries them in. With the embedded endpoint running, the award asks it for Capacity Block and training plan
offerings as it asks AWS; without it there is nothing to ask and the award names no offering. Idempotent."""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from portal.core.models import active_cycle
from portal.engagement.calls import services
from portal.engagement.calls.choices import CallStatus
from portal.engagement.calls.models import Call
from sandbox.program import _user

TITLE = "GENIAC Cycle 4: call for compute"
# The next cycle moves to P5e (a type the demo organizations hold no quota of yet, so the seeds that find their
# quotas by type and region still find one each).
P5E, TOKYO = "p5e.48xlarge", "ap-northeast-1"


def _line(count: int, weeks: int, instance_type: str = P5E) -> dict:
    return {"instance_type": instance_type, "region": TOKYO, "count": count, "weeks": weeks}


def seed(context: dict) -> dict:
    if Call.objects.filter(title=TITLE).exists():
        return context
    today = timezone.localdate()
    pm, orgs = context["pm"], context["organizations"]
    reviewers = [_user("reviewer1", first="Akira", last="Kobayashi"), _user("reviewer2", first="Naomi", last="Fujita")]
    call = Call.objects.create(
        cycle=active_cycle(), title=TITLE, status=CallStatus.OPEN, opens_on=today - timedelta(days=10),
        closes_on=today + timedelta(days=20), next_cycle_starts_on=today + timedelta(days=60),
        description="Compute for the fourth cycle of GENIAC: foundation models trained in Japan, on AWS.",
        offer=[_line(64, 12), _line(16, 12, "trn1.32xlarge")],
        reservations_planned="Capacity Blocks for ML of up to 64 × p5e.48xlarge in ap-northeast-1; SageMaker "
                             "training plans for HyperPod on Trainium.",
        questions="1. What will you train, and why does Japan need it?\n2. What did you do with your last award?",
        criteria=[{"name": "Impact", "weight": 3.0}, {"name": "Feasibility", "weight": 2.0},
                  {"name": "Record of the last cycle", "weight": 1.0}])
    call.reviewers.set(reviewers)
    customers = {slug: orgs[slug].memberships.filter(role="customer").first().user
                 for slug in ("kotoba-labs", "mirai-code", "shirakawa-ai")}
    services.start_application(call, orgs["kotoba-labs"], customers["kotoba-labs"])  # the pre-filled draft
    submitted = _apply(call, orgs["mirai-code"], customers["mirai-code"], [_line(8, 8)],
                       "Japanese code model, 8B → 32B, continued pre-training on 400B tokens of code.")
    for reviewer, scores in zip(reviewers, ((4, 4, 5), (3, 4, 4)), strict=True):
        assignment = services.assign(submitted, reviewer, pm)
        services.score(assignment, reviewer, dict(zip([c["name"] for c in call.criteria], scores, strict=True)),
                       "Solid record: every milestone of cycle 3 reached.",
                       "A clear plan built on a strong first cycle.")
    awarded = _apply(call, orgs["shirakawa-ai"], customers["shirakawa-ai"], [_line(32, 12)],
                     "405B multilingual model: a second stage of continued pre-training on tourism data.")
    services.award(call, {awarded.pk: [_line(24, 12)]}, pm, note="24 of the 32 instances asked: the rest goes to "
                   "new organizations.", ask_aws=bool(settings.AWS_ENDPOINT_URL))
    context["call"] = call
    return context


def _apply(call, organization, user, requested, plan):
    application = services.start_application(call, organization, user)
    application.requested, application.data_plan = requested, plan
    application.tokens_billions = 400
    application.save()
    services.submit(application, user)
    application.refresh_from_db()
    return application
