"""Escalations, trained models, milestones and cycles through the generic page and API cases (tests/viewtests.py)."""
from portal.core.models import Cycle
from portal.engagement.models import Escalation, Milestone, TrainedModel
from tests import viewtests
from tests.engagement.factories_engagement import CycleFactory, EscalationFactory, TrainedModelFactory
from tests.interactions.factories_interactions import InteractionFactory


class EscalationCase(viewtests.ModelCase):
    """Lead SAs escalate their organization's interactions; customers never see escalations."""

    model = Escalation
    factory = EscalationFactory
    writer = "lead_a"
    read_only = ("pm",)
    foreign = ("customer_a", "customer_b", "lead_b")
    foreign_sees_own = False
    list_roles = ("lead_a", "pm")
    url_names = {"list": "engagement:escalation_list", "detail": "engagement:escalation_detail"}
    api_basename = "engagement-api:escalation"
    api_methods = ("post",)
    api_read_only_create_status = 403
    flat_sizes = (2, 20)

    def make(self, world, **fields):
        return self.factory(interaction=InteractionFactory(organization=world.org_a, visibility="shared"), **fields)

    def make_foreign(self, world, **fields):
        return self.factory(interaction=InteractionFactory(organization=world.org_b, visibility="shared"), **fields)

    def belongs_to_a(self, world, obj):
        return obj.interaction.organization_id == world.org_a.pk

    def api_data(self, world):
        interaction = InteractionFactory(organization=world.org_a, visibility="shared")
        return {"interaction": interaction.pk, "target": "frameworks", "question": "why?"}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "target": "no-such-team"}


class TestEscalationPages(EscalationCase, viewtests.ListTests, viewtests.DetailTests):
    foreign = ("lead_b",)  # customers are refused the pages outright (test_escalations.py)
    foreign_sees_own = True


class TestEscalationApi(EscalationCase, viewtests.ApiTests):
    # A customer is offered no team to name (400); B's users no interaction of A (400).
    api_foreign_create_status = 400


class OutcomeCase(viewtests.ModelCase):
    """Customers (and lead SAs) record their own organization's outcomes; program managers read them."""

    writer = "customer_a"
    read_only = ("pm",)


class TestTrainedModelApi(OutcomeCase, viewtests.ApiTests):
    model = TrainedModel
    factory = TrainedModelFactory
    api_basename = "engagement-api:trainedmodel"

    def api_data(self, world):
        return {"organization": world.org_a.slug, "name": "Alpha-8B", "parameters_billions": "8", "modality": "code",
                "instance_type": "p5.48xlarge", "instance_count": 4}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "instance_type": "p9.mega"}

    def api_patch(self, world, obj):
        return {"instance_count": 32}

    def api_patched(self, obj):
        return obj.instance_count == 32


class TestMilestoneApi(OutcomeCase, viewtests.ApiTests):
    model = Milestone
    api_basename = "engagement-api:milestone"

    def make(self, world, **fields):
        return Milestone.objects.create(organization=world.org_a, kind="onboarded", reached_on="2026-05-01", **fields)

    def make_foreign(self, world, **fields):
        return Milestone.objects.create(organization=world.org_b, kind="onboarded", reached_on="2026-05-01", **fields)

    def grow(self, world, n):
        """One milestone of each kind per organization: the rows a list can hold."""
        from portal.engagement.choices import MilestoneKind

        kinds = [k for k in MilestoneKind.values if not Milestone.objects.filter(organization=world.org_a, kind=k)]
        for kind in kinds[:n]:
            for org in (world.org_a, world.org_b):
                Milestone.objects.create(organization=org, kind=kind, reached_on="2026-05-01")

    def api_data(self, world):
        return {"organization": world.org_a.slug, "kind": "onboarded", "reached_on": "2026-05-01"}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "reached_on": "2999-01-01"}

    def api_patch(self, world, obj):
        return {"note": "Signed the agreement"}

    def api_patched(self, obj):
        return obj.note == "Signed the agreement"


class CycleCase(viewtests.ModelCase):
    """Cycles are seen through the organizations taking part; program managers start them (not tested here)."""

    model = Cycle
    factory = CycleFactory
    writer = "pm"
    read_only = ("customer_a", "lead_a")
    url_names = {"list": "engagement:cycle_list", "detail": "engagement:cycle_detail"}
    api_basename = "engagement-api:cycle"
    api_methods = ()

    def make(self, world, **fields):
        return self.factory(participants=[world.org_a], **fields)

    def make_foreign(self, world, **fields):
        return self.factory(participants=[world.org_b], **fields)


class TestCyclePages(CycleCase, viewtests.ListTests, viewtests.DetailTests):
    pass


class TestCycleApi(CycleCase, viewtests.ApiTests):
    pass
