"""Serializers of enablement sessions (with their attendance count and average score) and attendance."""
from __future__ import annotations

from rest_framework import serializers

from workloads.enablement.models import EnablementAttendance, EnablementSession


class EnablementSessionSerializer(serializers.ModelSerializer):
    attendance_count = serializers.IntegerField(read_only=True)
    average_score = serializers.FloatField(read_only=True, allow_null=True)

    class Meta:
        model = EnablementSession
        fields = ["id", "kind", "topic", "description", "date", "audience", "attendance_count", "average_score"]


class EnablementAttendanceSerializer(serializers.ModelSerializer):
    class Meta:
        model = EnablementAttendance
        fields = ["id", "session", "organization", "attendee", "satisfaction", "comment"]

    def validate(self, attrs):
        session, org = attrs.get("session"), attrs.get("organization")
        if session and org and not session.audience.filter(pk=org.pk).exists():
            raise serializers.ValidationError({"organization": "This organization was not invited to the session."})
        return attrs
