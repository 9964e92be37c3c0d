"""Factories for escalations, specialists, trained models and cycles."""
import factory
from factory.django import DjangoModelFactory

from portal.core import escalation_targets as targets
from portal.core.models import Cycle, CycleParticipation, EscalationTarget, Specialist
from portal.engagement.models import Escalation, TrainedModel
from tests.factories import OrganizationFactory, UserFactory
from tests.interactions.factories_interactions import InteractionFactory


def target(slug: str = "frameworks") -> EscalationTarget:
    """A curated target (the data migration loads them; a flushed database gets them again here)."""
    return EscalationTarget.objects.filter(slug=slug).first() or targets.sync(EscalationTarget)[slug]


def specialist(username: str, slug: str = "frameworks"):
    user = UserFactory(username=username)
    Specialist.objects.get_or_create(user=user, target=target(slug))
    return user


class EscalationFactory(DjangoModelFactory):
    class Meta:
        model = Escalation

    interaction = factory.SubFactory(InteractionFactory)
    target = factory.LazyFunction(target)
    question = factory.Sequence(lambda n: f"Question {n}")


class TrainedModelFactory(DjangoModelFactory):
    class Meta:
        model = TrainedModel

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"model-{n}")
    parameters_billions = 100
    modality = "text"
    instance_type = "p5.48xlarge"
    instance_count = 16


class CycleFactory(DjangoModelFactory):
    """A planned cycle; ``participants=[org, ...]`` makes the organizations take part."""

    class Meta:
        model = Cycle
        skip_postgeneration_save = True

    number = factory.Sequence(lambda n: 100 + n)
    name = factory.LazyAttribute(lambda c: f"Cycle {c.number}")

    @factory.post_generation
    def participants(self, create, extracted, **kwargs):
        for org in extracted or ():
            CycleParticipation.objects.create(cycle=self, organization=org)
