"""Serializers of the report to the funder. A report carries the program's figures for program managers only
(the organizations' figures are in their parts, which the policy scopes); a part's narratives are its lead SAs'
to write while the report is a draft."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from portal.core import access
from portal.core.api.base import PortalModelSerializer
from portal.review.funder.models import FunderReport, FunderReportComment, FunderReportPart, FunderReportSending


class FunderReportSerializer(PortalModelSerializer):
    program = serializers.SerializerMethodField()

    class Meta:
        model = FunderReport
        fields = ["id", "title", "kind", "version", "period_start", "period_end", "program_cycle", "status",
                  "supersedes", "change_note", "data_as_of", "content_hash", "issued_at", "program"]
        read_only_fields = fields

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_program(self, report) -> dict | None:
        request = self.context.get("request")
        if report.is_draft or request is None or not access.can(request.user, access.APPROVE, report):
            return None
        return report.figures.get("program")


class FunderReportPartSerializer(PortalModelSerializer):
    organization = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    figures = serializers.JSONField(read_only=True)

    class Meta:
        model = FunderReportPart
        fields = ["id", "report", "organization", "narrative", "narrative_ja", "figures", "updated"]
        read_only_fields = ["report", "organization", "figures", "updated"]


class FunderReportCommentSerializer(PortalModelSerializer):
    author = serializers.SerializerMethodField()

    class Meta:
        model = FunderReportComment
        fields = ["id", "part", "text", "author", "created"]
        read_only_fields = ["author", "created"]

    @extend_schema_field(OpenApiTypes.STR)
    def get_author(self, comment) -> str:
        return comment.author.get_username() if comment.author else ""


class CorrectSerializer(serializers.Serializer):
    note = serializers.CharField(max_length=4000)


@extend_schema_field({"type": "array", "items": {"type": "string", "enum": ["en", "ja"]}, "minItems": 1,
                     "uniqueItems": True})
class LanguagesField(serializers.MultipleChoiceField):
    """One language at least: the schema says so, as the field refuses an empty list."""


class SendSerializer(serializers.Serializer):
    languages = LanguagesField(choices=["en", "ja"], allow_empty=False)
    superseded_ok = serializers.BooleanField(required=False, default=False)
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class FunderReportSendingSerializer(serializers.ModelSerializer):
    sent_by = serializers.SerializerMethodField()
    state = serializers.CharField(read_only=True)
    error = serializers.SerializerMethodField()

    class Meta:
        model = FunderReportSending
        fields = ["id", "report", "version", "content_hash", "languages", "recipients", "superseded", "note",
                  "sent_by", "requested_at", "state", "error"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.STR)
    def get_sent_by(self, sending) -> str:
        return sending.sent_by.get_username() if sending.sent_by else ""

    @extend_schema_field(OpenApiTypes.STR)
    def get_error(self, sending) -> str:
        return sending.delivery.error if sending.delivery_id else ""
