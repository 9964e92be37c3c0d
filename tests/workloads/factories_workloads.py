"""Factories for workloads, quotas, reservations and change requests."""
import datetime

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from tests.factories import OrganizationFactory
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest, Workload


def today():
    return timezone.localdate()


class WorkloadFactory(DjangoModelFactory):
    class Meta:
        model = Workload

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"Workload {n}")
    model_family = "Llama 3.1"
    architecture = "dense"
    parameters_billions = 8
    modality = "text"
    target_languages = ["ja"]
    training_stage = "pretraining"
    frameworks = factory.LazyFunction(lambda: [{"name": "megatron-lm", "version": "0.8.0"}])
    software = factory.LazyFunction(lambda: [{"name": "cuda", "version": "12.4"}, {"name": "nccl", "version": "2.21.5"}])
    orchestrator = "parallelcluster_slurm"
    target_instance_type = "p5.48xlarge"
    target_instance_count = 4
    status = "planning"


class InstanceQuotaFactory(DjangoModelFactory):
    class Meta:
        model = InstanceQuota

    organization = factory.SubFactory(OrganizationFactory)
    instance_type_name = "p5.48xlarge"
    region = "ap-northeast-1"
    count = 16
    start = factory.LazyFunction(lambda: today() - datetime.timedelta(days=30))
    end = factory.LazyFunction(lambda: today() + datetime.timedelta(days=90))


class CapacityReservationFactory(DjangoModelFactory):
    class Meta:
        model = CapacityReservation

    organization = factory.SubFactory(OrganizationFactory)
    reservation_id = factory.Sequence(lambda n: f"cr-{n:017x}")
    kind = "odcr"
    instance_type_name = "p5.48xlarge"
    count = 8
    region = "ap-northeast-1"
    availability_zone = "ap-northeast-1a"
    start = factory.LazyFunction(lambda: today() - datetime.timedelta(days=10))
    end = factory.LazyFunction(lambda: today() + datetime.timedelta(days=30))


class QuotaChangeRequestFactory(DjangoModelFactory):
    class Meta:
        model = QuotaChangeRequest

    organization = factory.LazyAttribute(lambda o: o.quota.organization)
    quota = factory.SubFactory(InstanceQuotaFactory)
    instance_type_name = factory.LazyAttribute(lambda o: o.quota.instance_type_name)
    region = factory.LazyAttribute(lambda o: o.quota.region)
    current_count = factory.LazyAttribute(lambda o: o.quota.count)
    requested_count = 24
    start = factory.LazyAttribute(lambda o: o.quota.start)
    end = factory.LazyAttribute(lambda o: o.quota.end)
    justification = "Scale up for the final run."
    status = "pending"
