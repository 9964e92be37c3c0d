"""Every API error is JSON: what DRF does not turn into a response itself is answered here.

DRF answers its own exceptions (validation, permission, not found, throttling). Anything else would
reach Django's HTML 500 page, which an API client cannot read: a unique constraint lost to a
concurrent request becomes 409, a model validation error 400, and anything unexpected a logged 500
with a JSON body that names no internals.
"""
from __future__ import annotations

import logging

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, OperationalError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

logger = logging.getLogger(__name__)


def exception_handler(exc, context):
    response = drf_exception_handler(exc, context)
    if response is not None:
        return response
    set_rollback()
    view = context.get("view")
    where = type(view).__name__ if view is not None else "API"
    if isinstance(exc, IntegrityError):
        logger.info("%s: integrity error answered 409: %s", where, exc)
        return Response({"detail": "This conflicts with a change made at the same time; reload and try again."},
                        status=status.HTTP_409_CONFLICT)
    if isinstance(exc, DjangoValidationError):
        body = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, OperationalError):
        logger.exception("%s: database unavailable", where)
        return Response({"detail": "The database is busy or unavailable; try again shortly."},
                        status=status.HTTP_503_SERVICE_UNAVAILABLE)
    logger.exception("%s: unexpected error", where)
    return Response({"detail": "Internal error. It has been logged."}, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
