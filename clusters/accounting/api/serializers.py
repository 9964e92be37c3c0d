from __future__ import annotations

from rest_framework import serializers

from clusters.accounting.models import AccountingSettings, ReservationCheck


class ReservationCheckSerializer(serializers.ModelSerializer):
    reservation_id = serializers.CharField(source="reservation.reservation_id", read_only=True)
    kind = serializers.CharField(source="reservation.kind", read_only=True)
    count = serializers.IntegerField(source="reservation.count", read_only=True)

    class Meta:
        model = ReservationCheck
        fields = ["id", "organization", "reservation", "reservation_id", "kind", "count", "checked_at", "status",
                  "failure_reason", "aws_state", "aws_total", "aws_in_use", "portal_held", "flagged"]
        read_only_fields = fields


class AccountingSettingsSerializer(serializers.ModelSerializer):
    class Meta:
        model = AccountingSettings
        fields = ["id", "organization", "idle_busy_percent", "idle_hours", "stall_minutes", "updated"]
        read_only_fields = fields
