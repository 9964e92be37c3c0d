"""Health pages: a cluster's health dashboard, the program-wide panel, validation upload and runs,
the ingestion settings for lead SAs."""
from __future__ import annotations

import logging
from datetime import timedelta

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Case, Count, IntegerField, Q, Sum, When
from django.db.models.functions import Coalesce
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext, gettext_lazy
from django.views.generic import TemplateView

from clusters.choices import ClusterState
from clusters.health import current
from clusters.health.choices import RunVerdict
from clusters.health.faults import links
from clusters.health.forms import (
    ClusterHealthConfigForm,
    GpuFaultLinkForm,
    ValidationStartForm,
    ValidationUploadForm,
)
from clusters.health.ingest import service as services
from clusters.health.models import (
    ClusterHealthConfig,
    GpuFault,
    HealthPush,
    HealthReport,
    NodeHealth,
    PushStatus,
    ValidationJob,
    ValidationRun,
)
from clusters.health.validation import agent, readiness
from clusters.health.validation import service as validation
from clusters.models import Cluster
from portal.core import access, aws, generic, submissions, versions
from portal.core.choices import VERDICT_RANK, VERDICTS
from portal.core.generic import ObjectActionView, ObjectPageView, ObjectView, RestrictedQuerysetMixin

log = logging.getLogger(__name__)

NOT_REPORTING, NEVER = "not_reporting", "never_reported"
TREND_REPORTS = 60
PUSHES_SHOWN = 10
NODES_PER_PAGE = 100
FAULTS_SHOWN = 200


def _latest_report(cluster) -> HealthReport | None:
    return HealthReport.objects.filter(cluster=cluster).defer("state").order_by("-received_at", "-pk").first()


def _trend(cluster) -> dict:
    rows = list(HealthReport.objects.filter(cluster=cluster).order_by("-received_at", "-pk").values_list(
        "received_at", "healthy_gpu_share", "xid_errors", "missing_gpus", "row_remap_failures", "thermal_violations",
        "node_count", "nodes_healthy")[:TREND_REPORTS])
    rows.reverse()
    return {
        "labels": [timezone.localtime(r[0]).strftime("%m-%d %H:%M") for r in rows],
        "healthy_share": [None if r[1] is None else round(r[1] * 100, 2) for r in rows],
        "xid_errors": [r[2] for r in rows],
        "missing_gpus": [r[3] for r in rows],
        "row_remap_failures": [r[4] for r in rows],
        "thermal_violations": [r[5] for r in rows],
        "unhealthy_nodes": [r[6] - r[7] for r in rows],
    }


class ClusterHealthView(ObjectView):
    """The case study's GPU health dashboard for one cluster."""

    queryset = Cluster.objects.select_related("organization")
    template_name = "health/cluster_health.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        cluster, user = self.object, self.request.user
        report = _latest_report(cluster)
        ctx["report"] = report
        if report is not None:
            collected = (report.summary or {}).get("collected", {})  # reports stored before it: all collected
            ctx["panels"] = [(key, label, value, collected.get(key, True)) for key, label, value in report.panels]
            ctx["efa_collected"] = collected.get("efa", True)
            nodes = NodeHealth.objects.filter(cluster=cluster).order_by("-rank", "hostname")
            ctx["nodes_page"] = Paginator(nodes, NODES_PER_PAGE).get_page(self.request.GET.get("page"))
            ctx["not_reporting"] = current.not_reporting([cluster.pk]).get(cluster.pk, 0)
            ctx["silent_since"] = current.silent_cutoff()
        ctx["pushes"] = list(self.visible(HealthPush.objects.filter(cluster=cluster)).exclude(status=PushStatus.DONE)
                             .filter(received_at__gte=timezone.now() - timedelta(days=1))[:PUSHES_SHOWN])
        open_faults = self.visible(GpuFault.objects.filter(cluster=cluster, cleared_at__isnull=True))
        shown = links.with_remediation(links.with_visible_interaction(open_faults, user), user)
        shown = shown.order_by("-severity_rank", "hostname", "gpu", "kind")
        ctx["faults"] = list(shown[:FAULTS_SHOWN])
        ctx["fault_total"] = open_faults.count() if len(ctx["faults"]) == FAULTS_SHOWN else len(ctx["faults"])
        ctx["trend"] = _trend(cluster)
        runs = self.visible(ValidationRun.objects.filter(cluster=cluster)).defer("raw_text", "rows", "result")
        ctx["runs"] = list(runs.select_related("uploaded_by")[:10])
        ctx["validated"] = runs.filter(verdict=RunVerdict.PASS).exists()
        ctx["bandwidth_trend"] = validation.trend(self.visible(ValidationRun.objects.filter(cluster=cluster)))
        org_id = cluster.organization_id
        ctx["can_upload"] = access.can_in_organization(user, access.CHANGE, ValidationRun, org_id)
        ctx["can_configure"] = access.can_in_organization(user, access.CHANGE, ClusterHealthConfig, org_id)
        ctx["can_link"] = access.can_in_organization(user, access.CHANGE, GpuFault, org_id)
        if ctx["can_link"] and ctx["faults"]:
            ctx["link_choices"] = links.link_choices(user, org_id)
        if ctx["can_configure"]:
            ctx["config"] = ClusterHealthConfig.objects.filter(cluster=cluster).first()
        return ctx


class GpuFaultLinkView(ObjectActionView):
    """Lead SAs: link an open fault to a support interaction of its organization (htmx: answers the
    table cell; otherwise back to the cluster's health page)."""

    queryset = GpuFault.objects.select_related("cluster__organization")
    action = access.CHANGE
    refusal = gettext_lazy("Only the organization's lead SAs link faults to interactions.")
    partial_template_name = "health/htmx/fault_interaction.html"

    def lookup_queryset(self):
        return links.with_visible_interaction(self.queryset, self.request.user)

    def act(self, request, fault):
        form = GpuFaultLinkForm(request.POST, instance=fault, user=request.user)
        if form.is_valid():
            links.link(fault, form.cleaned_data["interaction"], request.user)
            if not request.htmx:
                messages.success(request, gettext("Linked the fault.") if fault.interaction_id else gettext("Unlinked the fault."))
                return redirect("health:cluster_health", pk=fault.cluster_id)
        else:
            fault.refresh_from_db(fields=["interaction"])  # the table shows what is saved
        context = {"f": fault, "object": fault.cluster, "can_link": True, "form": form, "saved": form.is_valid(),
                   "link_choices": links.link_choices(request.user, fault.cluster.organization_id)}
        if request.htmx:
            return render(request, self.partial_template_name, context)
        return render(request, "health/gpufault_link.html", context, status=400)


class _ConfigurableCluster(ObjectPageView):
    """A cluster whose health ingestion the user manages (lead SAs of its organization): any other is a 403."""

    queryset = Cluster.objects.select_related("organization")

    def refuse(self, cluster):
        if not access.can_in_organization(self.request.user, access.CHANGE, ClusterHealthConfig,
                                          cluster.organization_id):
            raise PermissionDenied(gettext("Only the organization's lead SAs manage health ingestion."))


NEW_TOKEN_SESSION_KEY = "health-new-token-{pk}"


def _settings_form(config):
    form = ClusterHealthConfigForm(instance=config)
    versions.add_field(form, config)
    return form


class ClusterHealthSettingsView(_ConfigurableCluster):
    """Lead SAs: where to pull from (and with which credentials), and the push token. A token just made is
    kept in the session by the rotation and shown by the next GET only, so a refresh never shows it again."""

    template_name = "health/cluster_health_settings.html"

    def get(self, request, pk):
        cluster = self.object
        config = services.config_for(cluster)
        new_token = request.session.pop(NEW_TOKEN_SESSION_KEY.format(pk=cluster.pk), None)
        response = render(request, self.template_name, {"cluster": cluster, "config": config, "new_token": new_token,
                                                        "form": _settings_form(config)})
        add_never_cache_headers(response)  # a new token is on this response only
        return response

    def post(self, request, pk):
        cluster = self.object
        access.refuse_archived(cluster)
        config = services.config_for(cluster)
        form = ClusterHealthConfigForm(request.POST, instance=config)
        versions.add_field(form, config)
        if not form.is_valid():
            return render(request, self.template_name, {"cluster": cluster, "config": config, "form": form})
        with transaction.atomic():
            changes = versions.conflict(form, config)  # locks the settings' row
            if changes is None:
                form.save()
        if changes is not None:  # changed since the page was opened: the user's values on the stored version
            stored = form.current_instance
            again = ClusterHealthConfigForm(versions.reapply_data(form, stored), instance=stored)
            versions.add_field(again, stored)
            return render(request, self.template_name, {"cluster": cluster, "config": stored, "form": again,
                                                        "version_conflict": changes}, status=409)
        messages.success(request, gettext("Saved the health ingestion settings."))
        return redirect("health:cluster_health_settings", pk=cluster.pk)


class RotateTokenView(_ConfigurableCluster):
    """Lead SAs: a new push token. GET asks for confirmation (rotating cuts off every exporter that uses the
    current token); POST rotates and redirects to the settings page, which shows the token once."""

    template_name = "health/rotate_token_confirm.html"

    def get(self, request, pk):
        cluster = self.object
        return render(request, self.template_name, {"cluster": cluster, "config": services.config_for(cluster)})

    def post(self, request, pk):
        cluster = self.object
        access.refuse_archived(cluster)  # a token for an archived cycle's cluster would let it push again
        try:
            token = agent.rotate_token(cluster)
        except aws.AwsError:
            log.warning("the agent token of cluster %s was not written to its SSM parameter", cluster.pk, exc_info=True)
            messages.error(request, gettext(
                "The new token could not be written to the cluster's SSM parameter, where the controller's agent "
                "reads it, so nothing changed: the current token still works. Check the organization's role "
                "(ssm:PutParameter) and try again."))
            return redirect("health:cluster_health_settings", pk=cluster.pk)
        request.session[NEW_TOKEN_SESSION_KEY.format(pk=cluster.pk)] = token
        return redirect("health:cluster_health_settings", pk=cluster.pk)



class ProgramHealthView(RestrictedQuerysetMixin, TemplateView):
    """The program's clusters, problems first, one page at a time: program managers see the program,
    lead SAs their organizations. Customers use their clusters' pages.

    Sorting and filtering read each cluster's ``ClusterHealthState`` (kept by ingestion), so the
    page costs the same at 50 clusters or 5,000: a count, one page of rows, and a few queries on
    that page's ids; the totals are one aggregate."""

    queryset = Cluster.objects.all()
    template_name = "health/program_health.html"
    paginate_by = 50
    FILTER_VERDICTS = (*VERDICTS, NOT_REPORTING, NEVER)

    def get(self, request, *args, **kwargs):
        user = request.user
        if not (access.is_program_manager(user) or access.is_staff(user) or access.led_organizations(user)):
            raise PermissionDenied(gettext("The program-wide health panel is for program managers and lead SAs."))
        return super().get(request, *args, **kwargs)

    def filtered(self, clusters):
        params = self.request.GET
        organization = params.get("organization", "")
        if organization:
            clusters = clusters.filter(organization__slug=organization)
        if params.get("instance_type"):
            clusters = clusters.filter(instance_type=params["instance_type"])
        verdict = params.get("verdict", "")
        if verdict in VERDICTS:
            clusters = clusters.filter(health_state__worst_rank=VERDICT_RANK[verdict])
        elif verdict == NOT_REPORTING:
            clusters = clusters.filter(current.silent_q())
        elif verdict == NEVER:
            clusters = clusters.filter(Q(health_state__isnull=True) | Q(health_state__last_report__isnull=True))
        return clusters

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        visible = self.get_queryset().exclude(state=ClusterState.DELETED)
        clusters = self.filtered(visible)
        ordered = (clusters.select_related("organization", "health_state__last_report")
                   .defer("health_state__state", "health_state__totals", "health_state__last_report__summary",
                          "health_state__last_report__state", "parameters", "outputs")
                   .annotate(problem=Coalesce("health_state__worst_rank", -1),
                             silent=Case(When(current.silent_q(), then=1), default=0, output_field=IntegerField()),
                             critical=Coalesce("health_state__critical_faults", 0))
                   .order_by("-problem", "-critical", "-silent", "organization__name", "name", "pk"))
        page = Paginator(ordered, self.paginate_by).get_page(self.request.GET.get("page"))
        ids = [c.pk for c in page]
        silent = current.not_reporting(ids)
        validated = set(ValidationRun.objects.filter(cluster_id__in=ids, verdict=RunVerdict.PASS)
                        .values_list("cluster_id", flat=True).distinct())
        rows = []
        for c in page:
            state = getattr(c, "health_state", None)
            report = state.last_report if state is not None else None
            worst = VERDICTS[state.worst_rank] if state is not None and state.worst_rank >= 0 else None
            rows.append({"cluster": c, "report": report, "critical": c.critical, "validated": c.pk in validated,
                         "worst": worst, "not_reporting": silent.get(c.pk, 0)})
        ctx["rows"], ctx["page_obj"] = rows, page
        panel_keys = [key for key, _ in HealthReport.PANELS]
        sums = clusters.aggregate(
            n=Count("pk"), reporting=Count("health_state__last_report"),
            nodes=Sum("health_state__last_report__node_count"),
            healthy=Sum("health_state__last_report__nodes_healthy"),
            critical_faults=Sum("health_state__critical_faults"),
            **{key: Sum(f"health_state__last_report__{key}") for key in panel_keys})
        ctx["totals"] = {
            "clusters": sums["n"], "reporting": sums["reporting"], "nodes": sums["nodes"] or 0,
            "unhealthy_nodes": (sums["nodes"] or 0) - (sums["healthy"] or 0),
            "critical_faults": sums["critical_faults"] or 0,
            "not_reporting": sum(current.not_reporting_by_organization(clusters).values()),
            **{key: sums[key] or 0 for key in panel_keys},
        }
        ctx["panels"] = [(key, label, ctx["totals"][key]) for key, label in HealthReport.PANELS]
        ctx["organizations"] = (visible.values_list("organization__slug", "organization__name").distinct()
                                .order_by("organization__name"))
        ctx["instance_types"] = visible.values_list("instance_type", flat=True).distinct().order_by("instance_type")
        ctx["verdicts"] = [(v, v.replace("_", " ")) for v in self.FILTER_VERDICTS]
        ctx["filters"] = {k: self.request.GET.get(k, "") for k in ("organization", "verdict", "instance_type")}
        query = self.request.GET.copy()
        query.pop("page", None)
        ctx["filter_query"] = query.urlencode()
        return ctx


class ValidationRunCreateView(ObjectPageView):
    """Upload nccl-tests output for a cluster (customers and lead SAs of its organization)."""

    queryset = Cluster.objects.select_related("organization")
    template_name = "health/validationrun_form.html"

    def refuse(self, cluster):
        if not access.can_in_organization(self.request.user, access.CHANGE, ValidationRun, cluster.organization_id):
            raise PermissionDenied(gettext("You may view this cluster but not upload validation runs for it."))
        access.refuse_archived(cluster)

    def get(self, request, pk):
        cluster = self.object
        return render(request, self.template_name, {"cluster": cluster, "form": ValidationUploadForm(cluster=cluster)})

    @submissions.once
    def post(self, request, pk):
        cluster = self.object
        form = ValidationUploadForm(request.POST, request.FILES, cluster=cluster)
        if not form.is_valid():
            return render(request, self.template_name, {"cluster": cluster, "form": form})
        with transaction.atomic():
            if not access.can_in_organization(request.user, access.CHANGE, ValidationRun, cluster.organization_id):
                raise PermissionDenied(gettext("You may not write in this organization."))
            run = services.store_validation(cluster, form.raw, form.result, user=request.user,
                                            notes=form.cleaned_data.get("notes", ""))
            submissions.record(request, run)
        messages.success(request, gettext("Validation run stored: %(verdict)s.") % {"verdict": run.get_verdict_display()})
        return redirect(run.get_absolute_url())


class ValidationRunView(ObjectView):
    queryset = ValidationRun.objects.select_related("cluster__organization", "uploaded_by")
    template_name = "health/validationrun_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        run = self.object
        ctx["chart"] = {
            "labels": [row["size"] for row in run.rows],
            "oop_busbw": [row["oop_busbw"] for row in run.rows],
            "ip_busbw": [row["ip_busbw"] for row in run.rows],
            "expected": run.expected_busbw,
        }
        ctx["can_upload"] = access.can_in_organization(self.request.user, access.CHANGE, ValidationRun,
                                                       run.cluster.organization_id)
        ctx["cluster_validated"] = readiness.is_validated(run.cluster)
        return ctx


# --- validation started from the portal -------------------------------------------------------------

JOBS_SHOWN = 5


class _ValidationPanel:
    """The validation panel of a cluster's pages: the latest jobs, the start form or why it cannot start."""

    template_name = "health/htmx/validation_panel.html"

    def panel(self, cluster, form=None, error: str = "", status: int = 200):
        return render(self.request, self.template_name, self.panel_context(cluster, form, error), status=status)

    def panel_context(self, cluster, form=None, error: str = "") -> dict:
        user = self.request.user
        jobs = list(self.visible(ValidationJob.objects.filter(cluster=cluster)).select_related("requested_by")
                    [:JOBS_SHOWN])
        for job in jobs:
            job.shown_error = validation.shown_error(job, user)
        can_start = validation.may_start(user, cluster)
        refusal = validation.startable(cluster)
        if can_start and not refusal and form is None:
            form = ValidationStartForm(hostnames=validation.known_hosts(cluster))
        return {"object": cluster, "cluster": cluster, "jobs": jobs, "form": form, "can_start": can_start,
                "refusal": refusal, "error": error,
                "open_job": next((j for j in jobs if j.is_open), None)}


class ValidationPanelView(_ValidationPanel, ObjectPageView):
    """The validation panel of a cluster's pages (htmx loads it): start a validation, the latest jobs."""

    queryset = Cluster.objects.select_related("organization")

    def get(self, request, pk):
        return self.panel(self.object)


class ValidationStartView(_ValidationPanel, ObjectActionView):
    """Customers and lead SAs of the cluster's organization (and staff): start a validation. Answers the panel
    to htmx, otherwise redirects to the job."""

    queryset = Cluster.objects.select_related("organization")
    once = True

    def refuse(self, cluster):
        if not validation.may_start(self.request.user, cluster):
            raise PermissionDenied(gettext("Only the organization's customers and lead SAs start validations."))

    def act(self, request, cluster):
        form = ValidationStartForm(request.POST, hostnames=validation.known_hosts(cluster))
        # htmx swaps no 4xx answer: a refusal it is to show answers 200 to htmx (the panel, with the reason in an
        # alert), 400 to anything else.
        refused = 200 if request.htmx else 400
        if not form.is_valid():
            return self.panel(cluster, form, status=refused)
        data = form.cleaned_data
        try:
            job, _created = validation.start(cluster, actor=request.user, collectives=data["collectives"],
                                             nodes=data["nodes"], pairwise_sweep=data["pairwise"],
                                             upload_base=request.build_absolute_uri("/"))
        except validation.ValidationRefused as exc:
            return self.panel(cluster, form, error=str(exc), status=refused)
        submissions.record(request, job, job.get_absolute_url())
        if request.htmx:
            return self.panel(cluster)
        messages.info(request, gettext("Validation %(number)s: %(state)s.") % {"number": job.pk, "state": job.get_state_display().lower()})
        return redirect(job)

    def replay_submission(self, request, earlier):
        if request.htmx:
            return self.panel(generic.get_object(request, self.queryset, pk=self.kwargs["pk"]))
        return submissions.replay_page(request, earlier)


class ValidationJobView(ObjectView):
    """A validation job: where it stands, its runs or pairs (outliers and the slow node named), the reason it
    failed. htmx polls the status part while the job is open; 286 stops the polling once it is finished."""

    queryset = ValidationJob.objects.select_related("cluster__organization", "requested_by", "cancelled_by")
    template_name = "health/validationjob_detail.html"
    partial_template_name = "health/htmx/validation_job_status.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        job = self.object
        ctx["job"] = job
        ctx["runs"] = list(job.runs.defer("raw_text", "rows", "result").order_by("pk"))
        ctx["shown_error"] = validation.shown_error(job, self.request.user)
        ctx["can_cancel"] = validation.may_cancel(self.request.user, job)
        if job.mode == "pairwise":
            ctx["sweep"] = validation.sweep_of(job)
            outliers = {p.hosts for p in ctx["sweep"].outliers}
            ctx["pair_rows"] = [(p, p.hosts in outliers) for p in sorted(ctx["sweep"].pairs, key=lambda p: p.deviation)]
        ctx["summary"] = validation.shown_summary(job, sweep=ctx.get("sweep"), runs=ctx["runs"])
        return ctx

    def render_to_response(self, context, **kwargs):
        response = super().render_to_response(context, **kwargs)
        if self.request.htmx and not self.object.is_open:
            response.status_code = 286
        return response


class ValidationCancelView(ObjectActionView):
    """Cancel an open validation (whoever may start one on its cluster): the job ends "cancelled" at once and the
    worker sends ``scancel`` on the head node. Back to the job, or its status part to htmx."""

    queryset = ValidationJob.objects.select_related("cluster__organization", "requested_by")

    def act(self, request, job):
        pk = job.pk
        try:
            validation.cancel(job, request.user)
        except validation.ValidationRefused as exc:
            if request.htmx:
                return HttpResponse(str(exc), status=409)
            messages.error(request, str(exc))
        else:
            if not request.htmx:
                messages.info(request, gettext("Validation %(pk)s cancelled.") % {"pk": job.pk})
        if request.htmx:
            job = ValidationJob.objects.select_related("cluster__organization", "requested_by", "cancelled_by").get(pk=pk)
            return render(request, "health/htmx/validation_job_status.html",
                          {"job": job, "object": job, "shown_error": validation.shown_error(job, request.user),
                           "summary": validation.shown_summary(job), "can_cancel": False}, status=286)
        return redirect(job)

