"""Forms of the health pages."""
from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from clusters.health.choices import AuthKind
from clusters.health.ingest import pull as prometheus_pull
from clusters.health.ingest import service as services
from clusters.health.models import ClusterHealthConfig, GpuFault
from clusters.health.readers import nccl
from portal.core import access, outbound
from portal.core.choices import REGION_CODES
from portal.core.field_labels import FIELD_LABELS
from workloads.interactions.models import Interaction


class ValidationUploadForm(forms.Form):
    """nccl-tests or nccom-test output, as a file or pasted. Nothing the log shows is asked for.

    On an error the content is never lost: pasted text is shown again, and an uploaded file's
    text is put into the text box (a browser cannot be made to keep the chosen file), with a
    message saying so.
    """

    file = forms.FileField(required=False, label=_("nccl-tests or nccom-test output file"),
                           help_text=_("What the launcher captured (srun, mpirun, pdsh or DeepSpeed prefixes are fine)."))
    text = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 8}), strip=False,
                           label=_("…or paste the output"))
    collective = forms.ChoiceField(required=False, label=_("Collective"), choices=[("", _("read from the output")),
                                                             *[(c, c) for c in nccl.COLLECTIVES]])
    nodes = forms.IntegerField(required=False, min_value=1, max_value=10000, label=_("Nodes"),
                               help_text=_("Only needed when the output has neither rank lines nor a rank count."))
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), label=_("Notes"),
                            help_text=_("What was run and why."))

    def __init__(self, *args, cluster=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.cluster = cluster
        self.raw = None
        self.result = None
        self.kept_file = None

    def clean(self):
        data = super().clean()
        upload, text = data.get("file"), data.get("text")
        if upload and text:
            raise forms.ValidationError(_("Upload a file or paste the output, not both."))
        if upload:
            limit = settings.HEALTH_VALIDATION_MAX_BYTES
            if upload.size > limit:
                self.add_error("file", gettext("The file is over %(limit)s bytes.") % {"limit": f"{limit:,}"})
                return data
            self.raw = upload.read()
        elif text:
            self.raw = text
        else:
            raise forms.ValidationError(_("Upload the nccl-tests output or paste it."))
        try:
            self.result = services.parse_validation(self.cluster, self.raw, data.get("collective"), data.get("nodes"))
        except (nccl.NcclParseError, services.TooLarge) as exc:
            if upload:
                self.add_error("file", self._keep_file(upload.name, str(exc)))
            else:
                self.add_error("text", str(exc))
        return data

    def _keep_file(self, name: str, error: str) -> str:
        """Put the uploaded file's text into the text box so it survives the error; say what happened."""
        try:
            text = bytes(self.raw).decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\x00" in text:
            return f"{error}. The file {name} was not kept: it is not text."
        self.data = self.data.copy()
        self.data["text"] = text
        self.kept_file = name
        return (f"{error}. The content of {name} is kept in the text box below: "
                "correct or complete it there (or choose the collective) and send again.")


class ClusterHealthConfigForm(forms.ModelForm):
    secret = forms.CharField(required=False, widget=forms.PasswordInput(render_value=False),
                             label=_("Password or bearer token"),
                             help_text=_("Write-only: leave blank to keep the one stored."))

    pull_url = forms.URLField(required=False, assume_scheme="https", label=_("Prometheus endpoint"),
                              help_text=_("Base URL; /api/v1/query is appended (for AMP: the workspace URL)."))

    class Meta:
        model = ClusterHealthConfig
        labels = FIELD_LABELS
        fields = ["pull_enabled", "pull_url", "auth_kind", "username", "secret", "aws_region"]

    def clean_secret(self):
        value = self.cleaned_data.get("secret")
        return value if value else self.instance.secret

    def clean_pull_url(self):
        url = self.cleaned_data.get("pull_url")
        if url:
            try:
                outbound.parse(url)
            except outbound.OutboundError as exc:
                raise forms.ValidationError(exc.reason) from None
        return url

    def clean(self):
        data = super().clean()
        kind = data.get("auth_kind")
        # A stored secret stays with the endpoint and auth kind it was given for.
        if self.instance.pk and not self["secret"].value() and (
                data.get("pull_url") != self.instance.pull_url or kind != self.instance.auth_kind):
            data["secret"] = ""
            self._secret_dropped = bool(self.instance.secret)
        if kind == AuthKind.SIGV4 and data.get("pull_url") and prometheus_pull.amp_region(data["pull_url"]) is None:
            self.add_error("pull_url", gettext("SigV4 signing is only for Amazon Managed Prometheus workspace URLs "
                                               "(https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>)."))
        if data.get("pull_enabled") and not data.get("pull_url"):
            self.add_error("pull_url", gettext("Give the Prometheus endpoint to pull from."))
        if kind == AuthKind.BASIC and not data.get("username"):
            self.add_error("username", gettext("Basic auth needs a user name."))
        if kind in (AuthKind.BASIC, AuthKind.BEARER) and not data.get("secret"):
            self.add_error("secret", gettext("Give the secret again: the stored one is kept only for the same endpoint "
                                             "and auth kind.") if getattr(self, "_secret_dropped", False)
                           else gettext("This auth kind needs a secret."))
        if kind == AuthKind.SIGV4 and data.get("aws_region") not in REGION_CODES:
            self.add_error("aws_region", gettext("Give the AMP workspace's region, one of %(regions)s")
                           % {"regions": ", ".join(sorted(REGION_CODES))})
        return data


class GpuFaultLinkForm(forms.ModelForm):
    """Link a fault to an interaction the user can see; the model's clean() refuses another
    organization's interaction. Empty unlinks."""

    class Meta:
        model = GpuFault
        labels = FIELD_LABELS
        fields = ["interaction"]

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["interaction"]
        field.queryset = Interaction.objects.restrict(user, access.VIEW)
        field.required = False
        field.error_messages["invalid_choice"] = gettext("Pick one of the organization's interactions.")


class ValidationStartForm(forms.Form):
    """What a validation started from the portal runs: the operations, the nodes, and a pairwise sweep."""

    OPERATIONS = (("all_reduce", "all_reduce"), ("all_gather", "all_gather"), ("reduce_scatter", "reduce_scatter"),
                  ("alltoall", "alltoall"))

    collectives = forms.MultipleChoiceField(choices=OPERATIONS, initial=["all_reduce"], required=False,
                                            widget=forms.CheckboxSelectMultiple, label=_("Operations"),
                                            help_text=_("Run across the nodes, one after the other (all_reduce if none)."))
    nodes = forms.MultipleChoiceField(choices=(), required=False, label=_("Nodes"),
                                      help_text=_("Leave empty for all of the cluster's nodes."))
    pairwise = forms.BooleanField(required=False, label=_("Pairwise sweep: run all_reduce on each pair of nodes to "
                                                          "find a slow one"))

    def __init__(self, *args, hostnames=(), **kwargs):
        # The results upload form on the same page has a "nodes" field too: ids of their own, so each label
        # points at its own control (the names posted stay the same).
        kwargs.setdefault("auto_id", "id_start_%s")
        super().__init__(*args, **kwargs)
        self.fields["nodes"].choices = [(h, h) for h in hostnames]
        self.fields["nodes"].widget.attrs["size"] = min(max(len(hostnames), 2), 8)
