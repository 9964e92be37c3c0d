"""``POST /api/health/alerts/sns/``: Amazon SNS delivers the observability stack's alerts here.

No portal credential: SNS cannot hold one. The message's SNS signature is what is trusted (see
``clusters.health.ingest.sns``). Answers: 200 when a notification was applied (or the subscription confirmed),
403 for a signature or certificate that does not verify, 409 for a message id already received, 400 for
anything else malformed or too old. A refused message stores nothing.
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from clusters.health.ingest import alert_faults, sns
from clusters.health.models import SnsMessage

MAX_BODY = 256 * 1024  # SNS messages are at most 256 KiB


class SnsAlertView(APIView):
    """Alert manager notifications through SNS: a firing alert opens the fault a push would open, a
    resolved one clears it; SubscriptionConfirmation of a topic the portal knows is confirmed."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    parser_classes: list = []  # the body is the SNS JSON, whatever Content-Type SNS sends (text/plain)

    @extend_schema(request={"text/plain": {"type": "string", "description": "an Amazon SNS HTTP(S) message"}},
                   responses={200: OpenApiResponse(description="applied or confirmed"),
                              400: OpenApiResponse(description="malformed or outside the replay window"),
                              403: OpenApiResponse(description="the SNS signature does not verify"),
                              409: OpenApiResponse(description="message id already received")})
    def post(self, request):
        raw = request.read(MAX_BODY + 1)
        try:
            if len(raw) > MAX_BODY:
                raise sns.MessageRefused("the body is larger than an SNS message")
            message = sns.verify(sns.parse_body(raw))
            if not alert_faults.clusters_of_topic(message.topic_arn):
                raise sns.MessageRefused("the topic belongs to no observability stack the portal launched", 403)
            with transaction.atomic():
                record = SnsMessage.objects.create(message_id=message.message_id, topic_arn=message.topic_arn,
                                                   kind=message.kind)
                outcome = self._handle(message)
                record.outcome = outcome[:200]
                record.save(update_fields=["outcome"])
        except sns.MessageRefused as exc:
            return Response({"detail": exc.reason}, status=exc.status)
        except IntegrityError:
            return Response({"detail": "this message id was already received"}, status=status.HTTP_409_CONFLICT)
        return Response({"detail": outcome})

    @staticmethod
    def _handle(message: sns.Message) -> str:
        if message.kind == sns.CONFIRMATION:
            sns.confirm(message)
            return "subscription confirmed"
        if message.kind == sns.UNSUBSCRIBE:
            return "unsubscribed"
        try:
            applied = alert_faults.apply(message.topic_arn, message.body)
        except ValueError as exc:
            raise sns.MessageRefused(str(exc)) from None
        return applied.describe()
