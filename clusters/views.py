"""Pages of the launch pipeline: blueprints, the launch form and its preview, cluster pages with
live progress, retry and delete, and the launch-day board."""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Sum
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseStopPolling

from clusters.blueprints import catalog, cfn, pcluster_config
from clusters.choices import ClusterState, StackRole
from clusters.filtersets import ClusterFilterSet
from clusters.forms import LaunchForm
from clusters.health.models import ClusterHealthConfig, ValidationRun
from clusters.launches import board, retention
from clusters.launches import service as launch
from clusters.launches.backend import CloudFormation
from clusters.launches.pipeline.steps import REASONS
from clusters.models import Blueprint, Cluster, StackEvent
from clusters.software import release
from portal.core import access
from portal.core.aws import AwsError
from portal.core.cycle_filter import in_active_cycle
from portal.core.generic import ObjectListView, ObjectPageView, ObjectView, RestrictedQuerysetMixin, get_object

BROKER_DOWN = _("The task queue is unreachable: the request is saved as scheduled and will be sent "
                "automatically when the queue is back.")


class BlueprintListView(ObjectListView):
    queryset = Blueprint.objects.all()
    template_name = "clusters/blueprint_list.html"
    paginate_by = None

    def get_queryset(self):
        catalog.sync()
        return super().get_queryset()

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        entries = catalog.entries()
        ctx["rows"] = [(bp, entries.get(bp.slug)) for bp in ctx["object_list"]]
        ctx["can_launch"] = access.organization_ids(self.request.user, access.LAUNCH, Cluster) != frozenset()
        return ctx


class BlueprintView(ObjectView):
    queryset = Blueprint.objects.all()
    template_name = "clusters/blueprint_detail.html"
    slug_url_kwarg = "slug"

    def get_queryset(self):
        catalog.sync()
        return super().get_queryset()

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        entry = catalog.entry(self.object.slug)
        ctx["entry"] = entry
        ctx["resources"] = cfn.resources_summary(catalog.template(self.object.slug))
        ctx["can_launch"] = access.organization_ids(self.request.user, access.LAUNCH, Cluster) != frozenset()
        return ctx


class LaunchView(ObjectPageView):
    """GET the form; POST with ``preview`` to see resolved parameters and config; POST to launch."""

    queryset = Blueprint.objects.only("pk", "slug")
    slug_url_kwarg = "slug"
    template_name = "clusters/launch_form.html"

    def dispatch(self, request, *args, **kwargs):
        catalog.sync()
        return super().dispatch(request, *args, **kwargs)

    def refuse(self, blueprint):
        if access.organization_ids(self.request.user, access.LAUNCH, Cluster) == frozenset():
            raise PermissionDenied(gettext("Only lead solutions architects launch clusters."))

    def get(self, request, slug):
        # A link may preset the organization, region and cluster parameters (?cluster__ComputeInstanceType=…).
        initial = {key: value for key, value in request.GET.items()
                   if value and (key in ("organization", "region") or key.startswith(f"{StackRole.CLUSTER}__"))}
        form = LaunchForm(blueprint_slug=slug, user=request.user, initial=initial)
        return render(request, self.template_name, {"form": form, "entry": form.entry})

    def post(self, request, slug):
        submitting = "preview" not in request.POST
        if submitting and (earlier := _earlier_submission(request)):  # the same page submitted twice (a double click)
            return _show_earlier(request, earlier)
        form = LaunchForm(request.POST, blueprint_slug=slug, user=request.user)
        ctx = {"form": form, "entry": form.entry}
        if not form.is_valid():
            # The other click of a double click may have committed while this one was validated (outside the
            # launch service's lock): its cluster holds the name now, so this click answers with that cluster.
            if submitting and (earlier := _earlier_submission(request)):
                return _show_earlier(request, earlier)
            return render(request, self.template_name, ctx, status=400)
        if not submitting:
            ctx["preview"] = preview(form)
            return render(request, self.template_name, ctx)
        try:
            submitted = launch.submit(form.launch_request())
        except launch.LaunchRefused as refusal:  # lost a race for the quota or the name since the form's check
            form.add_refusal(refusal)
            return render(request, self.template_name, ctx, status=400)
        cluster = submitted.cluster
        if not submitted.created:  # the key seen under the service's lock
            return _show_earlier(request, cluster)
        if submitted.dispatched:
            messages.success(request, gettext("Launch of %(name)s started.") % {"name": cluster.name})
        else:
            messages.warning(request, BROKER_DOWN)
        return redirect(cluster.get_absolute_url())


def _show_earlier(request, cluster: Cluster):
    messages.info(request, gettext("This launch was already submitted: %(name)s.") % {"name": cluster.name})
    return redirect(cluster.get_absolute_url())


def _earlier_submission(request) -> Cluster | None:
    org, key = request.POST.get("organization", ""), request.POST.get("submission_key", "")
    return launch.previous_submission(int(org), key, request.user) if org.isdigit() and key else None


def preview(form: LaunchForm) -> dict:
    """Resolved parameters per stack, the ParallelCluster config, and (real AWS only) a change set."""
    params = form.cleaned_data["parameters"]
    wired = form.plan.wired()
    stacks = []
    for role, slug in form.plan.stacks:
        values = dict(params.get(role, {}))
        for name in sorted(wired[role]):
            values[name] = "← output of an earlier stack"
        stacks.append({"role": role, "blueprint": catalog.entry(slug), "parameters": sorted(values.items())})
    result = {"stacks": stacks, "quota": form.quota, "config": None, "change_set": None, "change_set_error": ""}
    if form.entry.kind == "parallelcluster":
        result["config"] = pcluster_config.generate(form.cleaned_data["region"],
                                           {k: str(v) for k, v in params.get("cluster", {}).items()}, {})
    if not settings.AWS_ENDPOINT_URL:
        role, slug = form.plan.stacks[0]
        try:
            cf = CloudFormation(organization=form.cleaned_data["organization"], region=form.cleaned_data["region"])
            result["change_set"] = cf.change_set_preview(
                f"geniac-preview-{form.cleaned_data['name']}-{role}", catalog.template_body(slug), params.get(role, {}))
        except AwsError as exc:
            result["change_set_error"] = str(exc)
    return result


class ClusterListView(ObjectListView):
    queryset = Cluster.objects.select_related("organization", "blueprint").annotate(
        resources_total=Sum("stacks__resources_total"), resources_done=Sum("stacks__resources_done")
    ).order_by("organization__name", "name")
    filterset_class = ClusterFilterSet
    template_name = "clusters/cluster_list.html"
    partial_template_name = "clusters/htmx/cluster_table.html"
    csv_fields = (("Organization", "organization.slug"), ("Name", "name"), ("State", "state"),
                  ("Blueprint", "blueprint.slug"), ("Region", "region"), ("Instance type", "instance_type"),
                  ("Nodes", "node_count"), ("Stack status", "stack_status"), ("Error", "error_message"))
    csv_filename = "clusters.csv"

    def get(self, request, *args, **kwargs):
        if not access.sees_internal(request.user):  # AWS's own error text is for lead SAs and staff
            self.csv_fields = tuple(f for f in self.csv_fields if f[1] != "error_message")
        return super().get(request, *args, **kwargs)


def _detail_context(request, cluster: Cluster) -> dict:
    stacks = list(cluster.stacks.select_related("blueprint").order_by("order"))
    total = sum(s.resources_total for s in stacks)
    done = sum(s.resources_done for s in stacks)
    return {
        "object": cluster, "cluster": cluster, "stacks": stacks,
        "resources_total": total, "resources_done": done,
        "events": StackEvent.objects.filter(stack__cluster=cluster).select_related("stack")[:50],
        "job": cluster.jobs.select_related("requested_by").first(),
        "can_launch": access.can(request.user, access.LAUNCH, cluster),
        "can_tear_down": access.can(request.user, access.TEAR_DOWN, cluster),  # also once its cycle is archived
        "sees_internal": access.sees_internal(request.user, cluster.organization_id),
        "has_config": cluster.blueprint is not None and cluster.blueprint.kind == "parallelcluster",
        "failure": cluster.failure_reason and REASONS.get(cluster.failure_reason, cluster.failure_reason),
    }


class ClusterView(ObjectView):
    queryset = Cluster.objects.select_related("organization", "blueprint", "created_by")
    template_name = "clusters/cluster_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx.update(_detail_context(self.request, self.object))
        ctx["software"] = release.for_cluster(self.object)
        user, org_id = self.request.user, self.object.organization_id
        writable = not access.in_archived_cycle(self.object)  # an archived cycle's cluster takes no upload
        ctx["can_validate"] = writable and access.can_in_organization(user, access.CHANGE, ValidationRun, org_id)
        ctx["can_configure_health"] = writable and access.can_in_organization(
            user, access.CHANGE, ClusterHealthConfig, org_id)
        return ctx


@require_safe
def cluster_progress(request, pk):
    """The live part of the cluster page, polled by htmx; 286 stops the polling once it is settled."""
    cluster = get_object(request, Cluster.objects.select_related("organization", "blueprint"), pk=pk)
    ctx = _detail_context(request, cluster)
    ctx["polling"] = cluster.is_busy
    response = render(request, "clusters/htmx/cluster_progress.html", ctx)
    if getattr(request, "htmx", False) and not cluster.is_busy:
        stop = HttpResponseStopPolling(response.content)
        return stop
    return response


@require_safe
def cluster_config(request, pk):
    """The cluster's generated ParallelCluster configuration as a YAML download."""
    cluster = get_object(request, Cluster.objects.select_related("organization", "blueprint"), pk=pk)
    text = pcluster_config.for_cluster(cluster)
    if text is None:
        raise Http404("This cluster is not a ParallelCluster cluster.")
    response = HttpResponse(text, content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{cluster.organization.slug}-{cluster.name}-pcluster.yaml"'
    return response


def _launchable(request, pk, action: str = access.LAUNCH) -> Cluster:
    cluster = get_object(request, Cluster.objects.select_related("organization"), pk=pk)
    if not access.can(request.user, action, cluster):  # the archived cycle's reason first, then the role's
        raise PermissionDenied(access.archived_refusal(cluster, action)
                               or "Only the organization's lead solutions architects act on its clusters.")
    return cluster


@require_POST
def cluster_retry(request, pk):
    cluster = _launchable(request, pk)
    outcome: dict = {}
    try:
        launch.request_retry(cluster, user=request.user, outcome=outcome)
    except launch.ActionRefused as exc:
        messages.error(request, str(exc))
        return redirect(cluster.get_absolute_url())
    messages.success(request, gettext("Retry started.")) if outcome.get("dispatched") else messages.warning(request, BROKER_DOWN)
    return redirect(cluster.get_absolute_url())


class ClusterDeleteView(View):
    """GET asks for confirmation (typing the name for a ready cluster); POST deletes."""

    def get(self, request, pk):
        cluster = _launchable(request, pk, access.TEAR_DOWN)
        return render(request, "clusters/cluster_confirm_delete.html",
                      {"object": cluster, "cluster": cluster, "retention": retention.on_delete(cluster)})

    def post(self, request, pk):
        cluster = _launchable(request, pk, access.TEAR_DOWN)
        confirmed = request.POST.get("confirm_name", "").strip() == cluster.name
        outcome: dict = {}
        try:
            launch.request_delete(cluster, user=request.user, confirmed=confirmed, outcome=outcome)
        except launch.ActionRefused as exc:
            return render(request, "clusters/cluster_confirm_delete.html",
                          {"object": cluster, "cluster": cluster, "error": str(exc),
                           "retention": retention.on_delete(cluster)}, status=400)
        (messages.success(request, gettext("Deleting the cluster's stacks.")) if outcome.get("dispatched")
         else messages.warning(request, BROKER_DOWN))
        return redirect(cluster.get_absolute_url())


class LaunchDayView(RestrictedQuerysetMixin, View):
    """Every launch the user may see on one live page: counts, progress per organization, failures."""

    queryset = Cluster.objects.all()
    http_method_names = ["get", "head"]

    def get(self, request):
        return _launch_day(request, self.get_queryset())


def _launch_day(request, clusters):
    counts = dict(clusters.values_list("state").annotate(n=Count("id")).order_by())
    per_org = board.organizations(request.user)
    failures = (clusters.filter(state=ClusterState.FAILED).values("failure_reason")
                .annotate(n=Count("id")).order_by("-n", "failure_reason"))
    failed_rows = clusters.filter(state=ClusterState.FAILED).select_related("organization").order_by("failure_reason", "-updated")[:100]
    groups: dict[str, dict] = {}
    for row in failures:
        code = row["failure_reason"] or "error"
        groups[code] = {"label": REASONS.get(code, code), "count": row["n"], "clusters": []}
    for cluster in failed_rows:
        code = cluster.failure_reason or "error"
        groups.setdefault(code, {"label": REASONS.get(code, code), "count": 0, "clusters": []})["clusters"].append(cluster)
    busy = sum(counts.get(s, 0) for s in (ClusterState.SCHEDULED, ClusterState.CREATING, ClusterState.DELETING))
    ctx = {
        "counts": [(state, label, counts.get(state, 0)) for state, label in ClusterState.choices],
        "per_org": per_org, "failure_groups": groups.values(), "busy": busy, "total": sum(counts.values()),
        "by_type": board.instances_by_type(request.user), "own_quota": board.measures_own_quota(request.user),
    }
    if getattr(request, "htmx", False):
        response = render(request, "clusters/htmx/launch_day_board.html", ctx)
        return HttpResponseStopPolling(response.content) if busy == 0 else response
    return render(request, "clusters/launch_day.html", ctx)


def organization_clusters_section(request, organization) -> dict:
    """The organization page's "Clusters" section."""
    # restrict: a section of the organization's page (portal.core.sections), not a view of its own
    rows = (in_active_cycle(Cluster.objects.restrict(request.user).filter(organization=organization))
            .select_related("blueprint").order_by("-created")[:20])
    return {"clusters": rows, "organization": organization,
            "can_launch": access.can_in_organization(request.user, access.LAUNCH, Cluster, organization.pk)}


