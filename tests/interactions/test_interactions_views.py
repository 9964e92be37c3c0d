"""Interactions and enablement sessions through the generic page and API cases (tests/viewtests.py)."""
import datetime

from django.utils import timezone

from tests import viewtests
from tests.interactions.factories_interactions import AttendanceFactory, EnablementSessionFactory, InteractionFactory
from workloads.enablement.models import EnablementSession
from workloads.interactions.models import ChallengeTag, Interaction


class InteractionCase(viewtests.ModelCase):
    model = Interaction
    factory = InteractionFactory
    writer = "lead_a"
    read_only = ("customer_a", "pm")
    foreign_create_status = {"customer_b": 403, "lead_b": 400}  # B's lead SA: organization A is no choice
    invalid_status = 400
    url_names = {"list": "interactions:interaction_list", "detail": "interactions:interaction_detail",
                 "add": "interactions:interaction_add", "edit": "interactions:interaction_edit"}
    api_basename = "interactions-api:interaction"
    api_methods = ("post", "patch")
    flat_roles = ("lead_a", "pm")
    flat_sizes = (3, 30)

    def grow(self, world, n):
        tags = list(ChallengeTag.objects.all()[:2])
        for i in range(n):
            InteractionFactory(organization=world.org_a if i % 2 else world.org_b, owner=world.lead_a, tags=tags)

    def form_data(self, world):
        return {"organization": world.org_a.pk, "kind": "support_case", "summary": "EFA missing on p5",
                "body": "fi_info -p efa shows nothing", "occurred_at": timezone.now().strftime("%Y-%m-%dT%H:%M"),
                "status": "open", "severity": "high", "owner": world.lead_a.pk, "visibility": "internal",
                "support_case_id": "", "resolution": "", "lesson": "", "tags": ["efa-networking"]}

    def invalid_form_data(self, world):
        return {**self.form_data(world), "severity": "urgent"}

    def edit_data(self, world, obj):
        return {**self.form_data(world), "summary": obj.summary, "status": "waiting_aws"}

    def edited(self, obj):
        return obj.status == "waiting_aws"

    def api_data(self, world):
        return {"organization": world.org_a.pk, "kind": "support_case", "summary": "NCCL over sockets",
                "body": "NCCL INFO NET/Socket", "severity": "high", "visibility": "shared",
                "tags": ["nccl-configuration"], "owner": "lead_a"}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "severity": "urgent"}

    def api_patch(self, world, obj):
        return {"summary": "Changed through the API"}

    def api_patched(self, obj):
        return obj.summary == "Changed through the API"


class TestInteractionPages(InteractionCase, viewtests.ListTests, viewtests.CsvTests, viewtests.DetailTests,
                           viewtests.CreateTests, viewtests.EditTests):
    max_queries = {"lead_a": 9}


class TestInteractionApi(InteractionCase, viewtests.ApiTests):
    flat_roles = ("lead_a",)
    flat_sizes = (3, 40)
    max_queries = 7


class EnablementCase(viewtests.ModelCase):
    """Sessions belong to the organizations invited (their audience); program managers alone write them."""

    model = EnablementSession
    factory = EnablementSessionFactory
    writer = "pm"
    read_only = ("customer_a", "lead_a")
    url_names = {"list": "enablement:enablement_list", "detail": "enablement:enablement_detail",
                 "add": "enablement:enablement_add", "edit": "enablement:enablement_edit"}
    api_basename = "enablement-api:enablementsession"
    api_methods = ()
    flat_roles = ("customer_a", "pm")
    invalid_status = 400

    def make(self, world, **fields):
        return self.factory(audience=[world.org_a], **fields)

    def make_foreign(self, world, **fields):
        return self.factory(audience=[world.org_b], **fields)

    def grow(self, world, n):
        for i in range(n):
            session = self.factory(audience=[world.org_a if i % 2 else world.org_b],
                                   date=datetime.date(2026, 1, 1 + i % 28))
            AttendanceFactory(session=session, organization=session.audience.get(), satisfaction=4)

    def belongs_to_a(self, world, obj):
        return list(obj.audience.all()) == [world.org_a]

    def form_data(self, world):
        return {"kind": "lab", "topic": "EFA hands-on", "date": "2026-11-20", "description": "",
                "audience": [world.org_a.pk]}

    def invalid_form_data(self, world):
        return {**self.form_data(world), "date": "not a date"}

    def edit_data(self, world, obj):
        return {**self.form_data(world), "topic": "Joint (rewritten)"}

    def edited(self, obj):
        return obj.topic == "Joint (rewritten)"


class TestEnablementPages(EnablementCase, viewtests.ListTests, viewtests.CsvTests, viewtests.DetailTests,
                          viewtests.CreateTests, viewtests.EditTests):
    max_queries = 8


class TestEnablementApi(EnablementCase, viewtests.ApiTests):
    max_queries = 6
