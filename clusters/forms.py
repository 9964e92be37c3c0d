"""The launch form, generated from the blueprint's Parameters plus the portal's guardrails."""
from __future__ import annotations

from django import forms
from django.core.validators import RegexValidator

from clusters import catalog, guards, labels, launch
from clusters.choices import StackRole
from clusters.models import Cluster
from portal import access
from portal.choices import REGION_CHOICES
from portal.models import Organization

NAME_VALIDATOR = RegexValidator(r"^[a-z][a-z0-9-]{0,39}$", "Lowercase letters, digits and hyphens, starting with a letter (at most 40).")


def field_for(spec, role: str) -> forms.Field:
    """One form field for one CloudFormation parameter: type, allowed values, default, range, NoEcho."""
    help_text = f"{spec.description} (parameter {spec.name})" if spec.description else f"Parameter {spec.name}."
    common = {"required": spec.required, "label": labels.parameter_label(spec.name), "help_text": help_text,
              "initial": spec.default}
    if spec.type == "AWS::EC2::AvailabilityZone::Name":
        # Picked from the program's regions' zones rather than typed (a widget: the value stays a string).
        return forms.CharField(widget=forms.Select(choices=labels.zone_choices()), max_length=spec.max_length,
                               strip=True, empty_value="", **common)
    if spec.allowed_values:
        return forms.ChoiceField(choices=[(v, v) for v in spec.allowed_values], **common)
    if spec.type == "Number":
        return forms.IntegerField(min_value=None if spec.min_value is None else int(spec.min_value),
                                  max_value=None if spec.max_value is None else int(spec.max_value), **common)
    widget = forms.PasswordInput(render_value=False) if spec.no_echo else None
    common["required"] = spec.required and spec.default is None
    return forms.CharField(max_length=spec.max_length, min_length=spec.min_length, strip=True,
                           widget=widget, empty_value="", **common)


class LaunchForm(forms.Form):
    organization = forms.ModelChoiceField(queryset=Organization.objects.none())
    name = forms.CharField(max_length=40, validators=[NAME_VALIDATOR], help_text="Unique in the organization.")
    region = forms.ChoiceField(choices=REGION_CHOICES)
    full_stack = forms.BooleanField(required=False, initial=True, label="Full stack",
                                    help_text="Create the network and storage stacks first and wire their outputs in.")

    def __init__(self, *args, blueprint_slug: str, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.blueprint_slug = blueprint_slug
        self.entry = catalog.entry(blueprint_slug)
        ids = access.organization_ids(user, access.LAUNCH, Cluster)
        orgs = Organization.objects.all() if ids is None else Organization.objects.filter(pk__in=ids)
        self.fields["organization"].queryset = orgs.order_by("name")
        if self.entry.kind not in catalog.CLUSTER_KINDS:
            del self.fields["full_stack"]
        self.param_fields: list[tuple[str, str]] = []  # (role, parameter name)
        wanted_full = self._full_stack_requested()
        p = launch.plan(blueprint_slug, wanted_full)
        wired = p.wired()
        for role, slug in p.stacks:
            for spec in catalog.entry(slug).parameters:
                if spec.name in wired[role] or (role == StackRole.CLUSTER and spec.name == "ClusterName"):
                    continue
                key = f"{role}__{spec.name}"
                self.fields[key] = field_for(spec, role)
                self.fields[key].label = labels.parameter_label(spec.name)  # grouped by stack in the page
                self.param_fields.append((role, spec.name))
        self.plan = p
        self.quota: guards.QuotaCheck | None = None
        # Reservations of the organization being launched for, once it is known (never another's).
        org_id = self._chosen_organization_id()
        self.reservations = _reservations(orgs.filter(pk=org_id) if org_id is not None else orgs)
        key = "cluster__CapacityReservationId"
        if key in self.fields and self.reservations is not None:
            field = self.fields[key]
            self.fields[key] = forms.ChoiceField(
                required=False, label=field.label, initial="",
                help_text="The organization's capacity reservations and capacity blocks (ODCR ids cr-…).",
                choices=[("", "None (on demand)")] + [(r.reservation_id, _reservation_label(r)) for r in self.reservations])

    def _chosen_organization_id(self) -> int | None:
        raw = self.data.get("organization") if self.is_bound else self.initial.get("organization")
        try:
            return int(getattr(raw, "pk", raw))
        except (TypeError, ValueError):
            return None

    def _full_stack_requested(self) -> bool:
        if "full_stack" not in self.fields:
            return False
        if self.is_bound:
            return self.data.get("full_stack") in ("on", "true", "True", "1", True)
        return bool(self.fields["full_stack"].initial)

    def parameter_groups(self):
        """Fields grouped by stack role, for the template."""
        groups: dict[str, list] = {}
        for role, name in self.param_fields:
            groups.setdefault(role, []).append(self[f"{role}__{name}"])
        return groups.items()

    def parameters(self) -> dict[str, dict[str, str]]:
        values: dict[str, dict[str, str]] = {}
        for role, name in self.param_fields:
            value = self.cleaned_data.get(f"{role}__{name}")
            if value is None or value == "":
                default = next(s.default for s in catalog.entry(dict(self.plan.stacks)[role]).parameters if s.name == name)
                if default is None:
                    continue
                value = default
            values.setdefault(role, {})[name] = str(value)
        if self.entry.kind in catalog.CLUSTER_KINDS:
            values.setdefault(StackRole.CLUSTER, {})["ClusterName"] = self.cleaned_data.get("name", "")
        return values

    def clean(self):
        data = super().clean()
        org, name = data.get("organization"), data.get("name")
        if org and name and Cluster.objects.filter(organization=org, name=name).exists():
            self.add_error("name", f"{org.name} already has a cluster named {name}.")
        if self.errors:
            return data
        params = self.parameters()
        for key, message in launch.validate(self.plan, params).items():
            self.add_error(key if key in self.fields else None, f"{key.split('__', 1)[-1]} {message}")
        instance_type, count = launch.size_of(self.blueprint_slug, params)
        if org and instance_type:
            self.quota = guards.check_quota(org, instance_type, data.get("region") or org.home_region, count)
            if not self.quota.allowed:
                key = next((f"cluster__{n}" for n in launch.SIZE_PARAMETERS[self.entry.kind][1:]), None)
                self.add_error(key if key in self.fields else None, f"Over quota: {self.quota.message}.")
        reservation_id = params.get(StackRole.CLUSTER, {}).get("CapacityReservationId")
        if org and reservation_id and self.reservations is not None:
            chosen = next((r for r in self.reservations if r.reservation_id == reservation_id), None)
            if chosen is None or chosen.organization_id != org.pk:
                self.add_error("cluster__CapacityReservationId", f"{reservation_id} is not a reservation of {org.name}.")
            elif instance_type and chosen.instance_type_name.removeprefix("ml.") != instance_type.removeprefix("ml."):
                self.add_error("cluster__CapacityReservationId",
                               f"{reservation_id} reserves {chosen.instance_type_name}, not {instance_type}.")
        data["parameters"] = params
        return data


def _reservations(orgs):
    """The capacity reservations of the organizations the user launches in (None without the model)."""
    try:
        from workloads.models import CapacityReservation
    except ImportError:
        return None
    return list(CapacityReservation.objects.filter(organization__in=orgs).select_related("organization")
                .order_by("organization__name", "start"))


def _reservation_label(r) -> str:
    return (f"{r.reservation_id} · {r.organization.name} · {r.count} × {r.instance_type_name} · "
            f"{r.availability_zone} · {r.start} → {r.end}")
