"""Access cases for Django's admin (the ``admin:`` namespace): every route of the admin site and of every
registered ModelAdmin (changelist, add, change, delete, history, the bare-object redirect).

Only staff reach the admin: anonymous users and signed-in users who are not staff (customers, lead SAs,
program managers, specialists) are sent to the admin's sign-in page. Staff without model permissions
are refused (403) on model pages; a superuser is allowed wherever the ModelAdmin permits.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from tests.access_cases import LOGIN, ROLES

ADMIN_ROLES = (*ROLES, "superuser")
ADMIN_LOGIN = "admin-login"  # a redirect to /admin/login/
REDIRECT = "redirect"  # a redirect elsewhere
NOT_STAFF = ("anonymous", "customer_a", "customer_b", "lead_a", "lead_b", "pm", "specialist")


@dataclass(frozen=True)
class AdminCase:
    """``url(objs)`` builds the path; ``model`` and ``view`` name the ModelAdmin view (None for the site's own
    pages). ``expect[role]`` per role, non-staff roles default to the admin's sign-in redirect."""

    url: Callable[[dict], str]
    model: type | None = None
    view: str = ""
    expect: dict[str, int | str] = field(default_factory=dict)

    def expected(self, role: str) -> int | str:
        if role in self.expect:
            return self.expect[role]
        if role == "anonymous":
            return LOGIN  # the portal signs everyone in first (its login-required middleware)
        return ADMIN_LOGIN if role in NOT_STAFF else 200


def admin_object(objs: dict, model: type):
    """A row of ``model`` for its change/delete/history pages (organization A's where the model has one)."""
    row = model._default_manager.order_by("pk").first()
    if row is None:
        row = _new_row(objs, model._meta.label_lower)
    return row


# Logs written by the sign-in throttle: its ModelAdmins let nobody add rows.
ADMIN_READ_ONLY = ("axes.accessattempt", "axes.accesslog", "axes.accessfailurelog",
                   # Made by the portal's own flows (form, launch pipeline, blueprint sync), never added in the admin.
                   "interactions.interaction", "clusters.cluster", "clusters.blueprint",
                   # Proposed and moved by the remediation services; a policy is set on its page (versioned).
                   "remediation.remediationaction", "remediation.remediationpolicy",
                   # Started, followed and cancelled by clusters.health.validation.service, never added in the admin.
                   "health.validationjob",
                   # Appended by the portal itself: the audit trail (append-only, purged by its retention).
                   "audit.auditevent",
                   # Second factors are set up by their owner; staff only reset them (delete).
                   "otp_totp.totpdevice", "otp_static.staticdevice", "factors.passkey",
                   # Linked by signing in through a provider, never added by hand.
                   "sso.externalidentity")
# Rows no one deletes in the admin, not even a superuser (the audit trail is append-only).
ADMIN_NO_DELETE = ("audit.auditevent",)


def _new_row(objs: dict, label: str):
    """A row for a model that the world and OBJECTS leave empty."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog
    from django.apps import apps
    from django.contrib.auth.models import Group
    from django.utils import timezone
    from django_celery_beat.models import (
        ClockedSchedule,
        CrontabSchedule,
        IntervalSchedule,
        PeriodicTask,
        SolarSchedule,
    )
    from knox.models import AuthToken
    from rest_framework.authtoken.models import TokenProxy

    from clusters.health.models import ClusterHealthConfig
    from portal.core.models import NotificationDelivery, NotificationSetting
    from portal.engagement.models import SlackChannelLink, SlackUserLink

    user = objs["organization"].memberships.first().user
    builders = {
        "auth.group": lambda: Group.objects.create(name="admin-matrix"),
        "authtoken.tokenproxy": lambda: TokenProxy.objects.create(user=user),
        "knox.authtoken": lambda: AuthToken.objects.create(user=user)[0],
        "django_celery_beat.intervalschedule": lambda: IntervalSchedule.objects.create(every=2, period="days"),
        "django_celery_beat.periodictask": lambda: PeriodicTask.objects.create(
            name="admin-matrix", task="portal.core.tasks.noop",
            interval=IntervalSchedule.objects.create(every=1, period="days")),
        "django_celery_beat.crontabschedule": lambda: CrontabSchedule.objects.create(minute="5"),
        "django_celery_beat.solarschedule": lambda: SolarSchedule.objects.create(
            event="sunrise", latitude=35, longitude=139),
        "django_celery_beat.clockedschedule": lambda: ClockedSchedule.objects.create(clocked_time=timezone.now()),
        "axes.accessattempt": lambda: AccessAttempt.objects.create(username="admin-matrix", failures_since_start=1),
        "axes.accesslog": lambda: AccessLog.objects.create(username="admin-matrix"),
        "axes.accessfailurelog": lambda: AccessFailureLog.objects.create(username="admin-matrix"),
        "portal.notificationsetting": lambda: NotificationSetting.objects.create(
            name="admin-matrix", organization=objs["organization"]),
        "health.clusterhealthconfig": lambda: ClusterHealthConfig.objects.create(cluster=objs["cluster"]),
        "engagement.slackchannellink": lambda: SlackChannelLink.objects.create(
            channel_id="C0ADMIN", organization=objs["organization"]),
        "engagement.slackuserlink": lambda: SlackUserLink.objects.create(team_id="T0ADMIN", slack_user_id="U0ADMIN",
                                                                         user=user),
        "engagement.slackcapture": lambda: apps.get_model("engagement", "SlackCapture").objects.create(
            team_id="T0ADMIN", slack_user_id="U0ADMIN", channel_id="C0ADMIN", message_ts="1.0", thread_ts="1.0"),
        "portal.notificationdelivery": lambda: NotificationDelivery.objects.create(channel="email", title="admin-matrix"),
        "remediation.remediationpolicy": lambda: apps.get_model("remediation", "RemediationPolicy").objects.create(
            organization=objs["organization"]),
        "sso.identityprovider": lambda: apps.get_model("sso", "IdentityProvider").objects.create(
            organization=objs["organization"], name="admin-matrix", issuer="https://idp.example",
            client_id="c", client_secret="s"),
        "sso.externalidentity": lambda: apps.get_model("sso", "ExternalIdentity").objects.create(
            provider=apps.get_model("sso", "IdentityProvider").objects.create(
                name="admin-matrix-2", issuer="https://idp.example", client_id="c", client_secret="s"),
            subject="admin-matrix", user=user),
        "otp_totp.totpdevice": lambda: apps.get_model("otp_totp", "TOTPDevice").objects.create(
            user=user, name="admin-matrix", confirmed=True),
        "otp_static.staticdevice": lambda: apps.get_model("otp_static", "StaticDevice").objects.create(
            user=user, name="admin-matrix"),
    }
    if label not in builders:
        raise LookupError(f"no {label} row to open its admin pages with: add one to admin_cases._new_row")
    return builders[label]()


def _model_cases(model: type, model_admin) -> dict[str, AdminCase]:
    info = f"{model._meta.app_label}_{model._meta.model_name}"
    prefix = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"

    def obj_url(suffix: str) -> Callable[[dict], str]:
        return lambda objs: f"{prefix}{admin_object(objs, model).pk}/{suffix}"

    # Staff without model permissions: 403 on every model page. A superuser: what the ModelAdmin permits
    # (the portal's ModelAdmins permit everything to a superuser; read-only ones still show the form).
    staff_refused = {"staff": 403}
    no_add = model._meta.label_lower in ADMIN_READ_ONLY  # their ModelAdmins permit no adding, even to a superuser
    cases = {
        f"admin:{info}_changelist": AdminCase(lambda objs: prefix, model, "changelist", staff_refused),
        f"admin:{info}_add": AdminCase(lambda objs: f"{prefix}add/", model, "add",
                                       {**staff_refused, **({"superuser": 403} if no_add else {})}),
        f"admin:{info}_change": AdminCase(obj_url("change/"), model, "change", staff_refused),
        f"admin:{info}_delete": AdminCase(obj_url("delete/"), model, "delete", {
            **staff_refused, **({"superuser": 403} if model._meta.label_lower in ADMIN_NO_DELETE else {})}),
        f"admin:{info}_history": AdminCase(obj_url("history/"), model, "history", staff_refused),
        # The bare object URL redirects staff to its change page.
        f"admin:admin/{model._meta.app_label}/{model._meta.model_name}/<path:object_id>/": AdminCase(
            obj_url(""), model, "redirect", {"staff": REDIRECT, "superuser": REDIRECT}
        ),
    }
    if isinstance(model_admin, SimpleHistoryAdmin):  # one past version of the row
        def history_row(objs):
            obj = admin_object(objs, model)
            return f"{prefix}{obj.pk}/history/{obj.history.first().history_id}/"

        cases[f"admin:{info}_simple_history"] = AdminCase(history_row, model, "history", staff_refused)
    return cases


def _site_cases() -> dict[str, AdminCase]:
    """The admin site's own pages sign in through the admin's sign-in page, anonymous users included."""
    app_labels = sorted({m._meta.app_label for m in admin.site._registry})
    cases = {
        "admin:index": AdminCase(lambda objs: "/admin/"),
        # The sign-in page: shown to anyone who is not staff (with a note for signed-in users), staff go on.
        "admin:login": AdminCase(lambda objs: "/admin/login/", expect={**{r: 200 for r in NOT_STAFF},
                                                                       "staff": REDIRECT, "superuser": REDIRECT}),
        # Sign-out is POST only for staff; whoever is not staff is sent to the admin's index (then its sign-in).
        "admin:logout": AdminCase(lambda objs: "/admin/logout/", expect={
            **{r: REDIRECT for r in NOT_STAFF}, "anonymous": ADMIN_LOGIN, "staff": 405, "superuser": 405}),
        # Without its query parameters the autocomplete refuses every staff user.
        "admin:autocomplete": AdminCase(lambda objs: "/admin/autocomplete/", expect={"staff": 403, "superuser": 403}),
        "admin:jsi18n": AdminCase(lambda objs: "/admin/jsi18n/"),
        # Any staff user changes their own password.
        "admin:password_change": AdminCase(lambda objs: "/admin/password_change/"),
        "admin:password_change_done": AdminCase(lambda objs: "/admin/password_change/done/"),
        # Setting another user's password: the user ModelAdmin's change permission.
        "admin:auth_user_password_change": AdminCase(
            lambda objs: f"/admin/portal/user/{objs['organization'].memberships.first().user_id}/password/",
            expect={"staff": 403, "anonymous": LOGIN}),
        "admin:view_on_site": AdminCase(_view_on_site, expect={"staff": REDIRECT, "superuser": REDIRECT}),
        # An app's index: 404 for staff who hold no permission in it.
        "admin:app_list": AdminCase(lambda objs: f"/admin/{app_labels[0]}/", expect={"staff": 404}),
        "admin:admin/(?P<url>.*)$": AdminCase(lambda objs: "/admin/no-such-page/",
                                               expect={"staff": 404, "superuser": 404}),
    }
    for case in cases.values():
        case.expect.setdefault("anonymous", ADMIN_LOGIN)
    return cases


def _view_on_site(objs: dict) -> str:
    from django.contrib.contenttypes.models import ContentType

    org = objs["organization"]
    return f"/admin/r/{ContentType.objects.get_for_model(org).pk}/{org.pk}/"


def _all_cases() -> dict[str, AdminCase]:
    cases = _site_cases()
    for model, model_admin in admin.site._registry.items():
        cases.update(_model_cases(model, model_admin))
    return cases


ADMIN_ROUTES: dict[str, AdminCase] = _all_cases()
