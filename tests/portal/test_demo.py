"""The demo seed is idempotent and models the case study."""
from django.core.management import call_command

from portal.models import Membership, Organization, User


def test_seed_demo_twice_changes_nothing(db):
    call_command("seed_demo")
    counts = (Organization.objects.count(), User.objects.count(), Membership.objects.count())
    call_command("seed_demo")
    assert (Organization.objects.count(), User.objects.count(), Membership.objects.count()) == counts
    assert counts[0] == 12
    assert User.objects.get(username="pm").is_program_manager
    kotoba = User.objects.get(username="kotoba")
    assert list(Organization.objects.visible_to(kotoba).values_list("slug", flat=True)) == ["kotoba-labs"]
