"""Every role against every interaction, lesson, enablement and timeline page and endpoint (GET)."""
import pytest
from django.urls import reverse

from tests.conftest import MARKER_A
from tests.workloads.factories_interactions import AttendanceFactory, EnablementSessionFactory, InteractionFactory

ROLES = ["customer_a", "customer_b", "lead_a", "lead_b", "pm", "staff"]

# url name -> expected status per role, in ROLES order.
EXPECTED = {
    "interactions:interaction_list": (200, 200, 200, 200, 200, 200),
    "interactions:interaction_add": (403, 403, 200, 200, 403, 200),
    "interactions:interaction_detail": (200, 404, 200, 404, 200, 200),
    "interactions:interaction_edit": (403, 404, 200, 404, 403, 200),
    "interactions:interaction_quick_log": (403, 404, 200, 404, 403, 200),
    "interactions:lesson_search": (403, 403, 200, 200, 200, 200),
    "interactions:enablement_list": (200, 200, 200, 200, 200, 200),
    "interactions:enablement_add": (403, 403, 403, 403, 200, 200),
    "interactions:enablement_detail": (200, 404, 200, 404, 200, 200),
    "interactions:enablement_edit": (403, 404, 403, 404, 200, 200),
    "portal:timeline": (200, 404, 200, 404, 200, 200),
    "interactions-api:interaction-list": (200, 200, 200, 200, 200, 200),
    "interactions-api:interaction-detail": (200, 404, 200, 404, 200, 200),
    "interactions-api:interaction-history": (200, 404, 200, 404, 200, 200),
    "interactions-api:enablementsession-detail": (200, 404, 200, 404, 200, 200),
    "interactions-api:enablementattendance-list": (200, 200, 200, 200, 200, 200),
}


@pytest.fixture
def objects(world):
    interaction = InteractionFactory(organization=world.org_a, visibility="shared", owner=world.lead_a,
                                     summary=f"shared {MARKER_A}")
    InteractionFactory(organization=world.org_a, visibility="internal", summary="INTERNAL-ONLY")
    session = EnablementSessionFactory(topic="Org A only", audience=[world.org_a])
    AttendanceFactory(session=session, organization=world.org_a, attendee=f"{MARKER_A} attendee")
    return {"interaction": interaction, "session": session}


def _kwargs(name, world, objects):
    if name in ("interactions:interaction_quick_log", "portal:timeline"):
        return {"slug": world.org_a.slug}
    if "enablement" in name and ("detail" in name or "edit" in name):
        return {"pk": objects["session"].pk}
    if name.endswith(("_detail", "_edit", "-detail", "-history")) and "enablementattendance" not in name:
        return {"pk": objects["interaction"].pk}
    return {}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_role(client, world, objects, name):
    url = reverse(name, kwargs=_kwargs(name, world, objects))
    for role, expected in zip(ROLES, EXPECTED[name], strict=True):
        client.force_login(getattr(world, role))
        response = client.get(url)
        assert response.status_code == expected, f"{role} on {name}: {response.status_code}"
        if response.status_code == 200 and role.startswith("customer"):
            text = response.content.decode()
            assert "INTERNAL-ONLY" not in text, f"{role} sees an internal interaction on {name}"
            if role == "customer_b":
                assert MARKER_A not in text, f"{role} sees organization A on {name}"
