from django.contrib import admin

from portal.engagement.models import Escalation, Milestone, SlackCapture, SlackChannelLink, SlackUserLink, TrainedModel


@admin.register(Escalation)
class EscalationAdmin(admin.ModelAdmin):
    list_display = ("interaction", "target", "state", "assignee", "requested_at")
    list_filter = ("state", "target")
    raw_id_fields = ("interaction", "assignee", "requested_by")


@admin.register(SlackChannelLink)
class SlackChannelLinkAdmin(admin.ModelAdmin):
    """Staff link a Slack channel to its organization; the bridge logs messages of linked channels only."""

    list_display = ("name", "channel_id", "organization", "customer_facing")
    list_filter = ("customer_facing",)


@admin.register(SlackUserLink)
class SlackUserLinkAdmin(admin.ModelAdmin):
    """A Slack user sees nothing through the bridge until staff map them to a portal user here."""

    list_display = ("slack_user_id", "team_id", "user")
    autocomplete_fields = ["user"]


@admin.register(SlackCapture)
class SlackCaptureAdmin(admin.ModelAdmin):
    """Messages logged from Slack with the shortcut, and why a refused or failed one was not (as told in Slack)."""

    list_display = ("created", "channel_id", "message_ts", "user", "status", "attempts", "interaction")
    list_filter = ("status",)
    readonly_fields = [f.name for f in SlackCapture._meta.fields]
    search_fields = ("channel_id", "message_ts", "error")


@admin.register(Milestone)
class MilestoneAdmin(admin.ModelAdmin):
    list_display = ("organization", "cycle", "kind", "reached_on")
    list_filter = ("cycle", "kind")


@admin.register(TrainedModel)
class TrainedModelAdmin(admin.ModelAdmin):
    list_display = ("name", "organization", "cycle", "parameters_billions", "instance_type", "instance_count")
    list_filter = ("cycle", "modality")
