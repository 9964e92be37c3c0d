"""Factories for interactions and enablement."""
import datetime

import factory
from factory.django import DjangoModelFactory

from tests.factories import OrganizationFactory
from workloads.enablement.models import EnablementAttendance, EnablementSession
from workloads.interactions.models import Interaction


class InteractionFactory(DjangoModelFactory):
    class Meta:
        model = Interaction
        skip_postgeneration_save = True

    organization = factory.SubFactory(OrganizationFactory)
    kind = "support_case"
    summary = factory.Sequence(lambda n: f"Interaction {n}")
    body = "NCCL INFO NET/Socket : Using [0]eth0"
    severity = "normal"
    visibility = "shared"

    @factory.post_generation
    def tags(self, create, extracted, **kwargs):
        if create and extracted:
            self.tags.set(extracted)


class EnablementSessionFactory(DjangoModelFactory):
    class Meta:
        model = EnablementSession
        skip_postgeneration_save = True

    kind = "workshop"
    topic = factory.Sequence(lambda n: f"Session {n}")
    date = datetime.date(2026, 10, 1)

    @factory.post_generation
    def audience(self, create, extracted, **kwargs):
        if create and extracted:
            self.audience.set(extracted)


class AttendanceFactory(DjangoModelFactory):
    class Meta:
        model = EnablementAttendance

    session = factory.SubFactory(EnablementSessionFactory)
    organization = factory.SubFactory(OrganizationFactory)
    attendee = factory.Sequence(lambda n: f"Attendee {n}")
    satisfaction = 5
