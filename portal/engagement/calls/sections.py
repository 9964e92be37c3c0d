"""The organization page's section: its applications to calls, with the decision once made (registered in
apps.py ready())."""
from __future__ import annotations

from portal.engagement.calls.models import Application


def organization_applications_section(request, organization) -> dict:
    rows = list(Application.objects.restrict(request.user).filter(organization=organization)
                .select_related("call").order_by("-call__opens_on", "-id")[:10])
    return {"applications": rows, "organization": organization}
