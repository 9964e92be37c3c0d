"""Replies in an interaction's Slack thread are notification deliveries (channel "thread"): kept when the
broker is down and sent by the sweep, retried on Slack's rate limits, recorded when Slack refuses. A local HTTP
server stands in for Slack's Web API; the broker is a private, real Redis stopped and started by the test."""
from __future__ import annotations

import pytest

from portal.celery import app
from portal.core.models import NotificationDelivery
from portal.core.notifications import MAX_RETRIES, Event, deliver, notify, sweep_pending
from portal.engagement.models import SlackThread
from tests.faults.test_broker_down import private_redis  # noqa: F401 - fixture
from tests.interactions.factories_interactions import InteractionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def thread(world, linked):
    interaction = InteractionFactory(organization=world.org_a, visibility="shared")
    return SlackThread.objects.create(interaction=interaction, channel=linked, thread_ts="1764000000.000100",
                                      permalink="https://geniac.slack.com/archives/C0ALPHA/p1764000000000100")


def _event(thread, title="Support case is now resolved", visibility="shared"):
    return Event(kind="interaction.status", title=title, visibility=visibility,
                 organization_id=thread.interaction.organization_id, extra={"interaction": thread.interaction_id})


def _posts(slack_api):
    return [c[1] for c in slack_api.calls if c[0] == "chat.postMessage"]


def test_a_reply_the_broker_missed_is_kept_and_sent_by_the_sweep(
        world, thread, slack_api, private_redis, django_capture_on_commit_callbacks):  # noqa: F811 - fixture
    import redis as redis_lib

    private_redis.stop()
    app._pool = None
    app.amqp._producer_pool = None  # a pool made by an earlier test would still reach the machine's Redis
    with django_capture_on_commit_callbacks(execute=True):
        notify(_event(thread))
    delivery = NotificationDelivery.objects.get()
    assert (delivery.channel, delivery.status, delivery.dispatched_at) == ("thread", "pending", None)
    assert delivery.setting is None and delivery.payload["thread"] == thread.pk
    assert sweep_pending() == 0 and NotificationDelivery.objects.get().dispatched_at is None  # still down: kept

    private_redis.start()
    app._pool = None
    app.amqp._producer_pool = None
    assert sweep_pending() == 1
    assert redis_lib.Redis.from_url(private_redis.url).llen("notifications") == 1  # on its queue
    assert sweep_pending() == 0  # claimed once
    assert _posts(slack_api) == []  # nothing posted before a worker takes it
    assert deliver.apply(args=[delivery.pk]).get() == "sent"  # what the worker runs
    (post,) = _posts(slack_api)
    assert (post["channel"], post["thread_ts"]) == ("C0ALPHA", "1764000000.000100")
    assert post["text"].startswith("Support case is now resolved")
    assert thread.interaction.get_absolute_url() in post["text"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.error) == ("sent", 1, "")


def test_internal_events_stay_out_of_a_customer_channels_thread(world, thread, slack_api):
    assert notify(_event(thread, title="Escalated internally", visibility="internal")) == []
    assert not NotificationDelivery.objects.exists()
    thread.channel.customer_facing = False
    thread.channel.save()
    notify(_event(thread, title="Escalated internally", visibility="internal"))
    assert NotificationDelivery.objects.get().channel == "thread"


def test_events_about_other_interactions_post_nothing(world, thread, slack_api):
    notify(Event(kind="interaction.status", title="elsewhere", visibility="shared", organization_id=world.org_a.pk,
                 extra={"interaction": InteractionFactory(organization=world.org_a).pk}))
    notify(Event(kind="x", title="no interaction", visibility="shared", organization_id=world.org_a.pk))
    assert not NotificationDelivery.objects.exists()


def test_rate_limits_are_retried_and_a_refusal_is_recorded_at_once(world, thread, slack_api):
    limited = (429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
    slack_api.script = {"chat.postMessage": [limited, limited]}
    notify(_event(thread))
    delivery = NotificationDelivery.objects.get()
    assert deliver.apply(args=[delivery.pk]).get() == "sent"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("sent", 3) and len(_posts(slack_api)) == 3

    slack_api.calls.clear()
    slack_api.script = {"chat.postMessage": [(200, {"ok": False, "error": "channel_not_found"}, {})]}
    notify(_event(thread, title="Second"))
    second = NotificationDelivery.objects.exclude(pk=delivery.pk).get()
    assert deliver.apply(args=[second.pk]).get() == "failed"
    second.refresh_from_db()
    assert second.status == "failed" and second.attempts == 1 and len(_posts(slack_api)) == 1
    assert "channel_not_found" in second.error


def test_slack_unreachable_is_retried_then_recorded(world, thread, slack_api, settings):
    settings.SLACK_API_URL = "http://127.0.0.1:9/api/"  # nothing listens on the discard port
    notify(_event(thread))
    delivery = NotificationDelivery.objects.get()
    assert deliver.apply(args=[delivery.pk]).get() == "failed"
    delivery.refresh_from_db()
    assert delivery.attempts == MAX_RETRIES + 1 and "could not be reached" in delivery.error


def test_a_deleted_thread_link_fails_the_delivery_with_its_reason(world, thread, slack_api):
    notify(_event(thread))
    delivery = NotificationDelivery.objects.get()
    thread.delete()
    assert deliver.apply(args=[delivery.pk]).get() == "failed"
    delivery.refresh_from_db()
    assert "no longer linked" in delivery.error and delivery.attempts == 1 and _posts(slack_api) == []
