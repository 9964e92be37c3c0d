from rest_framework import serializers

from portal.core import access
from portal.core.choices import Severity
from portal.core.models import Membership, Organization, TimelineEntry


class OrganizationSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="portal-api:organization-detail")

    class Meta:
        model = Organization
        fields = ["id", "url", "name", "slug", "description", "aws_account_id", "home_region",
                  "role_arn", "external_id", "created"]
        read_only_fields = ["created"]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        request = self.context.get("request")
        # The role and its external id are the organization's trust with the portal: never for customers.
        if request is None or not access.sees_internal(request.user, instance.pk):
            data.pop("role_arn", None)
            data.pop("external_id", None)
        return data


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "user", "username", "organization", "role", "created"]
        read_only_fields = fields


class TimelineEntrySerializer(serializers.ModelSerializer):
    severity = serializers.ChoiceField(choices=Severity.choices, allow_blank=True, read_only=True)  # "" for none

    class Meta:
        model = TimelineEntry
        fields = ["id", "organization", "occurred_at", "kind", "title", "body", "visibility",
                  "severity", "tags", "url"]
        read_only_fields = fields
