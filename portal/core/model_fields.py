"""Model fields with the portal's defaults. ``HttpsURLField`` reads a link typed without a scheme as https (Django 6's
default, asked for now instead of the http that Django 5 assumes and warns about), in every form built from the model:
the admin, the ModelForms and the generic edit views. Its migrations record a plain ``URLField``: the column, its
validation and its stored values are the same."""
from __future__ import annotations

from django.db import models


class HttpsURLField(models.URLField):
    def formfield(self, **kwargs):
        return super().formfield(**{"assume_scheme": "https", **kwargs})

    def deconstruct(self):
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.URLField", args, kwargs
