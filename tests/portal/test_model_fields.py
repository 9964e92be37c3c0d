"""A link typed without a scheme is read as https in every form built from a model, the admin's included."""
from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import models
from django.test import RequestFactory

from portal.core.model_fields import HttpsURLField
from portal.core.models import NotificationSetting


def _url_fields():
    for model in apps.get_models():
        if model._meta.app_config.name.split(".")[0] not in {"portal", "workloads", "clusters"}:
            continue
        for field in model._meta.get_fields():
            if isinstance(field, models.URLField) and not model.__name__.startswith("Historical"):
                yield model, field


def test_every_url_field_of_the_project_assumes_https():
    found = list(_url_fields())
    assert len(found) >= 5
    for model, field in found:
        assert isinstance(field, HttpsURLField), f"{model.__name__}.{field.name} is a plain URLField"
        assert field.formfield().clean("example.org/a/b") == "https://example.org/a/b"
        # A scheme given stays as given.
        assert field.formfield().clean("http://example.org/") == "http://example.org/"


def test_the_migrations_record_a_plain_url_field():
    field = NotificationSetting._meta.get_field("slack_webhook_url")
    _name, path, _args, kwargs = field.deconstruct()
    assert path == "django.db.models.URLField" and kwargs["max_length"] == 500


@pytest.mark.django_db
def test_the_admin_form_reads_a_bare_host_as_https(django_user_model):
    request = RequestFactory().get("/")
    request.user = django_user_model(is_superuser=True, is_staff=True)
    form_class = admin.site._registry[NotificationSetting].get_form(request)
    assert form_class.base_fields["slack_webhook_url"].clean("hooks.slack.com/services/T0/B0/x") == \
        "https://hooks.slack.com/services/T0/B0/x"


def test_the_trained_model_form_reads_a_bare_release_link_as_https():
    from portal.engagement.forms import TrainedModelForm

    assert TrainedModelForm.base_fields["release_url"].clean("huggingface.co/org/model") == \
        "https://huggingface.co/org/model"
