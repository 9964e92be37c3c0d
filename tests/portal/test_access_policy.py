"""The policy itself: each role sees and changes exactly what the policy table says."""
import pytest
from django.contrib.auth.models import AnonymousUser

from portal.core import access, timeline
from portal.core.models import Membership, Organization, TimelineEntry


@pytest.mark.django_db
def test_anonymous_sees_nothing(world):
    assert not Organization.objects.restrict(AnonymousUser()).exists()


def test_customer_sees_only_their_organization(world):
    assert list(Organization.objects.visible_to(world.customer_a)) == [world.org_a]
    assert list(Organization.objects.visible_to(world.customer_b)) == [world.org_b]


def test_lead_sees_assigned_organizations_only(world):
    assert list(Organization.objects.visible_to(world.lead_b)) == [world.org_b]


def test_program_manager_and_staff_see_all(world):
    assert Organization.objects.visible_to(world.pm).count() == 2
    assert Organization.objects.visible_to(world.staff).count() == 2


def test_nobody_but_staff_changes_organizations(world):
    for user in (world.customer_a, world.lead_a, world.pm):
        assert not access.can(user, access.CHANGE, world.org_a)
    assert access.can(world.staff, access.CHANGE, world.org_a)


def test_internal_timeline_entries_are_hidden_from_customers(world):
    shared = timeline.record(world.org_a, "note", "shared note")
    internal = timeline.record(world.org_a, "note", "internal note", visibility="internal")
    assert list(TimelineEntry.objects.visible_to(world.customer_a)) == [shared]
    assert set(TimelineEntry.objects.visible_to(world.lead_a)) == {shared, internal}
    assert not TimelineEntry.objects.visible_to(world.lead_b).exists()
    assert not TimelineEntry.objects.visible_to(world.customer_b).exists()


def test_lead_who_is_also_customer_elsewhere_gets_the_union(world):
    Membership.objects.create(user=world.lead_b, organization=world.org_a, role="customer")
    access.forget(world.lead_b)
    internal = timeline.record(world.org_a, "note", "internal", visibility="internal")
    assert internal not in TimelineEntry.objects.visible_to(world.lead_b)
    assert set(Organization.objects.visible_to(world.lead_b)) == {world.org_a, world.org_b}


def test_model_missing_from_the_policy_is_denied(world, monkeypatch):
    monkeypatch.delitem(access.POLICY, "portal.organization")
    assert not Organization.objects.visible_to(world.customer_a).exists()
    assert Organization.objects.visible_to(world.staff).count() == 2


def test_every_restricted_model_is_in_the_policy():
    from django.apps import apps

    from portal.core.querysets import RestrictedQuerySet

    missing = [
        m._meta.label_lower
        for m in apps.get_models()
        if isinstance(m._default_manager.all(), RestrictedQuerySet) and m._meta.label_lower not in access.POLICY
    ]
    assert not missing, f"models with a restricted manager but no rule: {missing}"


def test_unknown_action_is_an_error(world):
    with pytest.raises(ValueError):
        Organization.objects.restrict(world.pm, "delete-everything")


def test_role_arn_never_reaches_customers(world, client):
    client.force_login(world.customer_a)
    page = client.get(world.org_a.get_absolute_url()).content.decode()
    api = client.get(f"/api/portal/organizations/{world.org_a.pk}/").json()
    assert world.org_a.role_arn not in page
    assert "role_arn" not in api and "external_id" not in api
    client.force_login(world.lead_a)
    assert client.get(f"/api/portal/organizations/{world.org_a.pk}/").json()["role_arn"] == world.org_a.role_arn
