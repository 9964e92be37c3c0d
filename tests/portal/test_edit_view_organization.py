"""`ObjectEditView` re-checks the organization inside the transaction that saves, whatever the form offers.

Every form of the portal narrows its organization choices to those the user may write in, so the pages'
tests never reach the view's own check. This form is deliberately wide (every organization, as a careless
form would be): the view alone must refuse a row moved or created in an organization the user may not write
in, and keep nothing of it.
"""
from __future__ import annotations

import pytest
from django import forms
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from portal.core.generic import ObjectEditView
from portal.core.models import Organization
from portal.engagement.models import TrainedModel
from tests.engagement.factories_engagement import TrainedModelFactory


class WideTrainedModelForm(forms.ModelForm):
    organization = forms.ModelChoiceField(queryset=Organization.objects.all())  # not narrowed to the user's

    class Meta:
        model = TrainedModel
        fields = ["organization", "name", "parameters_billions", "modality", "instance_type", "instance_count"]


class WideEditView(ObjectEditView):
    queryset = TrainedModel.objects.all()
    form_class = WideTrainedModelForm
    template_name = "engagement/trainedmodel_form.html"


def _post(user, data, pk=None):
    request = RequestFactory().post("/wide/", data)
    SessionMiddleware(lambda r: None).process_request(request)
    request._messages = FallbackStorage(request)
    request.user = user
    kwargs = {"pk": pk} if pk is not None else {}
    return WideEditView.as_view()(request, **kwargs)


def _data(organization, name):
    return {"organization": organization.pk, "name": name, "parameters_billions": "8", "modality": "text",
            "instance_type": "p5.48xlarge", "instance_count": "2"}


@pytest.fixture
def trained(world):
    return TrainedModelFactory(organization=world.org_a, name="ours")


def test_the_wide_form_saves_within_the_users_own_organization(world, trained):
    response = _post(world.customer_a, _data(world.org_a, "renamed"), pk=trained.pk)
    assert response.status_code == 302
    trained.refresh_from_db()
    assert (trained.name, trained.organization_id) == ("renamed", world.org_a.pk)


def test_an_edit_moving_the_row_to_another_organization_is_refused_and_nothing_changes(world, trained):
    with pytest.raises(PermissionDenied, match="You may not write in this organization"):
        _post(world.customer_a, _data(world.org_b, "moved"), pk=trained.pk)
    trained.refresh_from_db()
    assert (trained.name, trained.organization_id) == ("ours", world.org_a.pk)
    assert not TrainedModel.objects.filter(organization=world.org_b).exists()


def test_a_create_in_another_organization_is_refused_and_nothing_is_written(world):
    with pytest.raises(PermissionDenied, match="You may not write in this organization"):
        _post(world.lead_a, _data(world.org_b, "planted"))
    assert not TrainedModel.objects.filter(name="planted").exists()
    response = _post(world.lead_a, _data(world.org_a, "kept"))
    assert response.status_code == 302
    assert TrainedModel.objects.get(name="kept").organization_id == world.org_a.pk
