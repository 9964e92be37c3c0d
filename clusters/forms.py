"""The launch form, generated from the blueprint's Parameters; every rule is the launch service's
(``clusters.launches.service.check``), so the form and the API cannot disagree."""
from __future__ import annotations

import uuid

from django import forms
from django.core.validators import RegexValidator
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from clusters.blueprints import catalog
from clusters.choices import StackRole
from clusters.launches import capacity, guards, labels
from clusters.launches import service as launch
from clusters.models import Cluster
from portal.core import access
from portal.core.choices import REGION_CHOICES
from portal.core.models import Organization

NAME_VALIDATOR = RegexValidator(r"^[a-z][a-z0-9-]{0,39}$", _("Lowercase letters, digits and hyphens, starting with a letter (at most 40)."))


def field_for(spec, role: str) -> forms.Field:
    """One form field for one CloudFormation parameter: type, allowed values, default, range, NoEcho."""
    help_text = (gettext("%(description)s (parameter %(name)s)") % {"description": gettext(spec.description),
                                                                     "name": spec.name}  # descriptions.py lists them
                 if spec.description else gettext("Parameter %(name)s.") % {"name": spec.name})
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
    organization = forms.ModelChoiceField(queryset=Organization.objects.none(), label=_("Organization"))
    name = forms.CharField(max_length=40, validators=[NAME_VALIDATOR], label=_("Name"), help_text=_("Unique in the organization."))
    region = forms.ChoiceField(choices=REGION_CHOICES, label=_("Region"))
    full_stack = forms.BooleanField(required=False, initial=True, label=_("Full stack"),
                                    help_text=_("Create the network and storage stacks first and wire their outputs in."))
    # Sent back with the form: a second submission of the same page (a double click) finds the first launch.
    submission_key = forms.CharField(widget=forms.HiddenInput, required=False, max_length=128)

    def __init__(self, *args, blueprint_slug: str, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.blueprint_slug = blueprint_slug
        self.entry = catalog.entry(blueprint_slug)
        ids = access.organization_ids(user, access.LAUNCH, Cluster)
        orgs = Organization.objects.all() if ids is None else Organization.objects.filter(pk__in=ids)
        self.fields["organization"].queryset = orgs.order_by("name")
        if not self.is_bound and "organization" not in self.initial and ids is not None and len(ids) == 1:
            self.initial["organization"] = next(iter(ids))  # the one organization the user launches for
        if not self.is_bound:
            self.fields["submission_key"].initial = uuid.uuid4().hex
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
        self.zone_key = f"{StackRole.NETWORK}__AvailabilityZone" if f"{StackRole.NETWORK}__AvailabilityZone" in self.fields else None
        if self.zone_key:  # the zones of the region chosen (or of the organization's home region), not all six
            self.fields[self.zone_key].widget.choices = labels.zone_choices(self._chosen_region(orgs))
        key = f"{StackRole.CLUSTER}__{capacity.parameter_for(self.entry.kind)}"
        self.reservation_key = key if key in self.fields else None
        if self.reservation_key:
            field, kinds = self.fields[key], capacity.kinds_for(self.entry.kind)
            chosen = self._chosen_organization_id() is not None
            offered = [r for r in self._offered_reservations(orgs) if r.kind in kinds]
            self.fields[key] = forms.ChoiceField(
                required=False, label=field.label, initial="",
                help_text=(gettext("The organization's SageMaker training plans not yet ended.") if "training_plan" in kinds
                           else gettext("The organization's capacity reservations and capacity blocks (ODCR ids cr-…) not yet "
                                        "ended."))
                + gettext(" It sets the capacity type, and the network is created in its availability zone.")
                + ("" if chosen else gettext(" Choose the organization first."))
                + self._unfit_hint(orgs, kinds, offered),
                error_messages={"invalid_choice": gettext("%(value)s is not one of the chosen organization's reservations "
                                                          "not yet ended; pick one of the list.")},
                choices=[("", gettext("None (on demand)"))] + [(r.reservation_id, _reservation_label(r)) for r in offered])
            zone = self.fields.get(f"{StackRole.NETWORK}__AvailabilityZone")
            if zone is not None:  # a chosen reservation fixes the zone (the launch service takes it from there)
                zone.required = False
                zone.help_text = f"{zone.help_text} Leave it empty to use the chosen reservation's zone."

    def _offered_reservations(self, orgs):
        """The reservations of the organization being launched for, once it is known (never another's).
        Unbound: those valid for the type and region shown; bound: every one of the organization's, so a
        mismatch gets the service's reason rather than "not a valid choice"."""
        org_id = self._chosen_organization_id()
        if org_id is None:  # the list follows the organization (htmx refreshes it when one is chosen)
            return []
        chosen = orgs.filter(pk=org_id)
        if self.is_bound:
            return launch.reservations_for(chosen)
        type_key = f"{StackRole.CLUSTER}__{launch.SIZE_PARAMETERS.get(self.entry.kind, ('',))[0]}"
        instance_type = self.initial.get(type_key, "")  # only once the user has chosen one
        region = self.initial.get("region") or getattr(chosen.first(), "home_region", "")
        return launch.reservations_for(chosen, instance_type or "", region)

    def _unfit_hint(self, orgs, kinds, offered) -> str:
        """The organization's reservations of the kinds this blueprint takes that the list leaves out for the
        instance type or region chosen (the HyperPod form opens on P5; a Trainium training plan shows once its
        instance type is chosen): named, so the person knows what to choose to use one."""
        org_id = self._chosen_organization_id()
        if org_id is None or self.is_bound:
            return ""
        shown = {r.pk for r in offered}
        unfit = [r for r in launch.reservations_for(orgs.filter(pk=org_id)) if r.kind in kinds and r.pk not in shown]
        if not unfit:
            return ""
        listed = gettext(", ").join(
            gettext("%(name)s (%(count)s × %(type)s in %(region)s)") % {
                "name": r.reservation_id.rsplit("/", 1)[-1], "count": r.count, "type": r.instance_type_name,
                "region": r.region} for r in unfit)
        return gettext(" For another instance type or region: %(reservations)s; choose that instance type and "
                       "region to use it.") % {"reservations": listed}

    def refresh_on(self) -> list[str]:
        """The fields whose change reloads the reservation choices (their ids, for htmx)."""
        size = launch.SIZE_PARAMETERS.get(self.entry.kind)
        names = ["organization", "region", f"{StackRole.CLUSTER}__{size[0]}" if size else ""]
        return [f"#id_{name}" for name in names if name in self.fields]

    def refresh_include(self) -> str:
        """What the reload sends: those fields and the current choice (kept when it is still offered)."""
        return ", ".join([*self.refresh_on(), f"#id_{self.reservation_key}"])

    def _chosen_region(self, orgs) -> str:
        region = self.data.get("region") if self.is_bound else self.initial.get("region")
        if not region and (org_id := self._chosen_organization_id()) is not None:
            region = orgs.filter(pk=org_id).values_list("home_region", flat=True).first() or ""
        return region or ""

    def zone_refresh_include(self) -> str:
        """What the zone list's reload sends: the region, the organization and the zone chosen."""
        return ", ".join(f"#id_{name}" for name in ("organization", "region", self.zone_key) if name in self.fields)

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

    def launch_request(self) -> launch.LaunchRequest:
        data = self.cleaned_data
        return launch.LaunchRequest(
            organization=data["organization"], name=data["name"], blueprint=self.blueprint_slug,
            region=data.get("region") or data["organization"].home_region, parameters=self.parameters(),
            full_stack=bool(data.get("full_stack", False)), user=self.user, key=data.get("submission_key", ""))

    def add_refusal(self, refusal: launch.LaunchRefused) -> None:
        """The service's reasons, each on its field (the quota's on the node count)."""
        for key, message in refusal.errors.items():
            if key in self.fields:
                plain = "__" not in key or key.endswith(tuple(capacity.PARAMETER_NAMES))
                if key == self.zone_key and message == "is required":
                    # Not the template's raw "AvailabilityZone is required": what to do, in the reader's words.
                    message = gettext("Choose an availability zone of the region, or a reservation (it sets the zone).")
                    plain = True
                self.add_error(key, message if plain else f"{self.fields[key].label}: {message}")
            else:
                self.add_error(None, message)
        if refusal.quota is not None:
            self.quota = refusal.quota
            key = launch.size_parameter(self.blueprint_slug)
            self.add_error(key if key in self.fields else None, gettext("Over quota: %(message)s.") % {"message": refusal.quota.message})

    def clean(self):
        data = super().clean()
        if self.errors or not data.get("organization"):
            return data
        try:
            checked = launch.check(self.launch_request())
        except launch.LaunchRefused as refusal:
            self.add_refusal(refusal)
            return data
        self.quota = checked.quota
        data["parameters"] = checked.parameters
        return data


def _reservation_label(r) -> str:
    return (f"{r.reservation_id} · {r.organization.name} · {r.get_kind_display()} · {r.count} × "
            f"{r.instance_type_name} · {r.availability_zone} · {r.start} → {r.end}")
