"""Health pages: a cluster's health dashboard, the program-wide panel, validation upload and runs,
the ingestion settings for lead SAs."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.views import View
from django.views.generic import TemplateView

from clusters.choices import ClusterState
from clusters.health import links, readiness, services
from clusters.health.choices import VERDICT_RANK, RunVerdict
from clusters.health.forms import ClusterHealthConfigForm, GpuFaultLinkForm, ValidationUploadForm
from clusters.health.models import ClusterHealthConfig, GpuFault, HealthReport, NodeHealth, ValidationRun
from clusters.health.summary import VERDICTS
from clusters.models import Cluster
from portal import access
from portal.generic import ObjectView

TREND_REPORTS = 60
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
            nodes = NodeHealth.objects.filter(report=report).order_by("-rank", "hostname")
            ctx["nodes_page"] = Paginator(nodes, NODES_PER_PAGE).get_page(self.request.GET.get("page"))
        open_faults = GpuFault.objects.restrict(user).filter(cluster=cluster, cleared_at__isnull=True)
        shown = links.with_visible_interaction(open_faults, user).order_by("-severity_rank", "hostname", "gpu", "kind")
        ctx["faults"] = list(shown[:FAULTS_SHOWN])
        ctx["fault_total"] = open_faults.count() if len(ctx["faults"]) == FAULTS_SHOWN else len(ctx["faults"])
        ctx["trend"] = _trend(cluster)
        runs = ValidationRun.objects.restrict(user).filter(cluster=cluster).defer("raw_text", "rows", "result")
        ctx["runs"] = list(runs.select_related("uploaded_by")[:10])
        ctx["validated"] = runs.filter(verdict=RunVerdict.PASS).exists()
        org_id = cluster.organization_id
        ctx["can_upload"] = access.can_in_organization(user, access.CHANGE, ValidationRun, org_id)
        ctx["can_configure"] = access.can_in_organization(user, access.CHANGE, ClusterHealthConfig, org_id)
        ctx["can_link"] = access.can_in_organization(user, access.CHANGE, GpuFault, org_id)
        if ctx["can_link"] and ctx["faults"]:
            ctx["link_choices"] = links.link_choices(user, org_id)
        if ctx["can_configure"]:
            ctx["config"] = ClusterHealthConfig.objects.filter(cluster=cluster).first()
        return ctx


class GpuFaultLinkView(View):
    """Lead SAs: link an open fault to a support interaction of its organization (htmx: answers the
    table cell; otherwise back to the cluster's health page)."""

    partial_template_name = "health/htmx/fault_interaction.html"

    def post(self, request, pk):
        faults = GpuFault.objects.restrict(request.user).select_related("cluster__organization")
        fault = get_object_or_404(links.with_visible_interaction(faults, request.user), pk=pk)
        if not access.can(request.user, access.CHANGE, fault):
            raise PermissionDenied("Only the organization's lead SAs link faults to interactions.")
        form = GpuFaultLinkForm(request.POST, instance=fault, user=request.user)
        if form.is_valid():
            links.link(fault, form.cleaned_data["interaction"], request.user)
            if not request.htmx:
                messages.success(request, "Linked the fault." if fault.interaction_id else "Unlinked the fault.")
                return redirect("health:cluster_health", pk=fault.cluster_id)
        else:
            fault.refresh_from_db(fields=["interaction"])  # the table shows what is saved
        context = {"f": fault, "object": fault.cluster, "can_link": True, "form": form, "saved": form.is_valid(),
                   "link_choices": links.link_choices(request.user, fault.cluster.organization_id)}
        if request.htmx:
            return render(request, self.partial_template_name, context)
        return render(request, "health/gpufault_link.html", context, status=400)


def _configurable_cluster(request, pk):
    cluster = get_object_or_404(Cluster.objects.restrict(request.user).select_related("organization"), pk=pk)
    if not access.can_in_organization(request.user, access.CHANGE, ClusterHealthConfig, cluster.organization_id):
        raise PermissionDenied("Only the organization's lead SAs manage health ingestion.")
    return cluster


NEW_TOKEN_SESSION_KEY = "health-new-token-{pk}"


class ClusterHealthSettingsView(View):
    """Lead SAs: where to pull from (and with which credentials), and the push token. A token just made is
    kept in the session by the rotation and shown by the next GET only, so a refresh never shows it again."""

    template_name = "health/cluster_health_settings.html"

    def get(self, request, pk):
        cluster = _configurable_cluster(request, pk)
        config = services.config_for(cluster)
        new_token = request.session.pop(NEW_TOKEN_SESSION_KEY.format(pk=cluster.pk), None)
        response = render(request, self.template_name, {"cluster": cluster, "config": config, "new_token": new_token,
                                                        "form": ClusterHealthConfigForm(instance=config)})
        add_never_cache_headers(response)  # a new token is on this response only
        return response

    def post(self, request, pk):
        cluster = _configurable_cluster(request, pk)
        config = services.config_for(cluster)
        form = ClusterHealthConfigForm(request.POST, instance=config)
        if not form.is_valid():
            return render(request, self.template_name, {"cluster": cluster, "config": config, "form": form})
        form.save()
        messages.success(request, "Saved the health ingestion settings.")
        return redirect("health:cluster_health_settings", pk=cluster.pk)


class RotateTokenView(View):
    """Lead SAs: a new push token. GET asks for confirmation (rotating cuts off every exporter that uses the
    current token); POST rotates and redirects to the settings page, which shows the token once."""

    template_name = "health/rotate_token_confirm.html"

    def get(self, request, pk):
        cluster = _configurable_cluster(request, pk)
        return render(request, self.template_name, {"cluster": cluster, "config": services.config_for(cluster)})

    def post(self, request, pk):
        cluster = _configurable_cluster(request, pk)
        request.session[NEW_TOKEN_SESSION_KEY.format(pk=cluster.pk)] = services.rotate_token(cluster)
        return redirect("health:cluster_health_settings", pk=cluster.pk)


class ProgramHealthView(TemplateView):
    """Every cluster the user may see, worst first: program managers see the program, lead SAs their
    organizations. Customers use their clusters' pages."""

    template_name = "health/program_health.html"

    def get(self, request, *args, **kwargs):
        user = request.user
        if not (access.is_program_manager(user) or access.is_staff(user) or access._roles(user).get(access.LEAD_SA)):
            raise PermissionDenied("The program-wide health panel is for program managers and lead SAs.")
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        user = self.request.user
        latest = HealthReport.objects.filter(cluster=OuterRef("pk")).order_by("-received_at", "-pk").values("pk")[:1]
        clusters = list(Cluster.objects.restrict(user).exclude(state=ClusterState.DELETED)
                        .select_related("organization").annotate(latest_report_id=Subquery(latest)))
        ids = [c.pk for c in clusters]
        reports = HealthReport.objects.defer("summary", "state").in_bulk(
            [c.latest_report_id for c in clusters if c.latest_report_id])
        faults = dict(GpuFault.objects.filter(cluster_id__in=ids, cleared_at__isnull=True).values("cluster_id")
                      .annotate(n=Count("pk", filter=Q(severity="critical"))).values_list("cluster_id", "n"))
        validated = set(ValidationRun.objects.filter(cluster_id__in=ids, verdict=RunVerdict.PASS)
                        .values_list("cluster_id", flat=True).distinct())
        rows = []
        for c in clusters:
            report = reports.get(c.latest_report_id)
            worst = next((v for v in reversed(VERDICTS) if report and getattr(report, f"nodes_{v}")), None)
            rows.append({"cluster": c, "report": report, "critical": faults.get(c.pk, 0), "validated": c.pk in validated,
                         "worst": worst, "rank": VERDICT_RANK.get(worst, -1)})
        rows.sort(key=lambda r: (-r["rank"], -r["critical"], r["cluster"].organization.name, r["cluster"].name))
        ctx["rows"] = rows
        with_reports = [r["report"] for r in rows if r["report"]]
        ctx["totals"] = {
            "clusters": len(rows),
            "reporting": len(with_reports),
            "validated": sum(1 for r in rows if r["validated"]),
            "nodes": sum(r.node_count for r in with_reports),
            "unhealthy_nodes": sum(r.unhealthy_nodes for r in with_reports),
            "critical_faults": sum(faults.values()),
            **{key: sum(getattr(r, key) for r in with_reports) for key, _ in HealthReport.PANELS},
        }
        ctx["panels"] = [(key, label, ctx["totals"][key]) for key, label in HealthReport.PANELS]
        return ctx


class ValidationRunCreateView(View):
    """Upload nccl-tests output for a cluster (customers and lead SAs of its organization)."""

    template_name = "health/validationrun_form.html"

    def _cluster(self, request, pk):
        cluster = get_object_or_404(Cluster.objects.restrict(request.user).select_related("organization"), pk=pk)
        if not access.can_in_organization(request.user, access.CHANGE, ValidationRun, cluster.organization_id):
            raise PermissionDenied("You may view this cluster but not upload validation runs for it.")
        return cluster

    def get(self, request, pk):
        cluster = self._cluster(request, pk)
        return render(request, self.template_name, {"cluster": cluster, "form": ValidationUploadForm(cluster=cluster)})

    def post(self, request, pk):
        cluster = self._cluster(request, pk)
        form = ValidationUploadForm(request.POST, request.FILES, cluster=cluster)
        if not form.is_valid():
            return render(request, self.template_name, {"cluster": cluster, "form": form})
        with transaction.atomic():
            if not access.can_in_organization(request.user, access.CHANGE, ValidationRun, cluster.organization_id):
                raise PermissionDenied("You may not write in this organization.")
            run = services.store_validation(cluster, form.raw, form.result, user=request.user,
                                            notes=form.cleaned_data.get("notes", ""))
        messages.success(request, f"Validation run stored: {run.get_verdict_display()}.")
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
