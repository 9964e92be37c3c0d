"""API shapes of the overview figures and of frozen reviews (described in /api/schema/)."""
from rest_framework import serializers

from portal.review import figures, services
from portal.review.models import ActionItem, WeeklyReview


class OverviewSerializer(serializers.Serializer):
    """The overview's figures (see docs/review.md for every key)."""

    generated_at = serializers.DateTimeField()
    week_start = serializers.DateField()
    window = serializers.IntegerField(help_text="Days of the heat map's window.")
    organizations = serializers.ListField(child=serializers.DictField(), help_text="One row per organization.")
    totals = serializers.DictField()
    week = serializers.DictField(child=serializers.IntegerField())
    heatmap = serializers.DictField()
    outstanding = serializers.ListField(child=serializers.DictField())
    lessons = serializers.ListField(child=serializers.DictField())
    charts = serializers.DictField()
    capacity = serializers.DictField(required=False, help_text="Accelerator-hours of the program: window, weeks, "
                                     "idle clusters (each organization row carries its gpu_hours_* numbers).")


class ActionItemSerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ActionItem
        fields = ["id", "title", "owner", "due", "done", "done_at", "carried_from"]


class WeeklyReviewSerializer(serializers.ModelSerializer):
    frozen_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    action_items = ActionItemSerializer(many=True, read_only=True)

    class Meta:
        model = WeeklyReview
        fields = ["id", "week_start", "frozen_at", "frozen_by", "notes", "action_items"]


class ChangeSerializer(serializers.Serializer):
    label = serializers.CharField()
    before = serializers.IntegerField()
    after = serializers.IntegerField()
    delta = serializers.IntegerField()


class WeeklyReviewDetailSerializer(WeeklyReviewSerializer):
    figures = serializers.JSONField(read_only=True)
    changes = serializers.SerializerMethodField()

    class Meta(WeeklyReviewSerializer.Meta):
        fields = [*WeeklyReviewSerializer.Meta.fields, "figures", "changes"]

    def get_changes(self, obj) -> list[dict]:
        previous = services.previous_of(obj)
        return ChangeSerializer(figures.diff(previous.figures if previous else None, obj.figures), many=True).data
