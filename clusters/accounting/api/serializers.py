from __future__ import annotations

from rest_framework import serializers

from clusters.accounting.models import AccountingSettings, ReservationCheck, ReservationRequest


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


class ReservationRequestSerializer(serializers.ModelSerializer):
    reservation_id = serializers.CharField(source="reservation.reservation_id", read_only=True, allow_null=True,
                                           default=None)

    class Meta:
        model = ReservationRequest
        fields = ["id", "organization", "cycle", "award_key", "awarded_by", "instance_type_name", "region", "count",
                  "weeks", "start", "end", "offering_kind", "offering_id", "upfront_fee", "quota", "state",
                  "reservation", "reservation_id", "note", "decided_by", "decided_at", "created", "updated"]
        read_only_fields = fields


class ReservationRequestFulfilSerializer(serializers.Serializer):
    reservation_id = serializers.CharField(max_length=200)
    availability_zone = serializers.CharField(max_length=32)
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class ReservationRequestDeclineSerializer(serializers.Serializer):
    note = serializers.CharField(max_length=2000)
