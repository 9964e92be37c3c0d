"""factory_boy factories for the program core; apps add theirs in tests/<app>/factories.py."""
import factory
from factory.django import DjangoModelFactory

from portal.core.choices import MembershipRole
from portal.core.models import Membership, Organization, TimelineEntry, User


class UserFactory(DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("pw-for-tests")


class OrganizationFactory(DjangoModelFactory):
    class Meta:
        model = Organization
        django_get_or_create = ("slug",)

    name = factory.Sequence(lambda n: f"Organization {n}")
    slug = factory.Sequence(lambda n: f"org-{n}")
    aws_account_id = factory.Sequence(lambda n: f"{100000000000 + n}")
    role_arn = factory.LazyAttribute(lambda o: f"arn:aws:iam::{o.aws_account_id}:role/GeniacPortalAccess")
    external_id = factory.LazyAttribute(lambda o: f"ext-{o.slug}")
    home_region = "ap-northeast-1"


class MembershipFactory(DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    organization = factory.SubFactory(OrganizationFactory)
    role = MembershipRole.CUSTOMER


class TimelineEntryFactory(DjangoModelFactory):
    class Meta:
        model = TimelineEntry

    organization = factory.SubFactory(OrganizationFactory)
    kind = "note"
    title = factory.Sequence(lambda n: f"Entry {n}")
