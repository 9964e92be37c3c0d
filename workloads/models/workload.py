"""An organization's workload record: the program's tracking document, with its full change history."""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from portal.core.choices import MembershipRole
from portal.core.models import Membership
from portal.core.querysets import RestrictedQuerySet
from workloads import validators
from workloads.choices import (
    FRAMEWORKS,
    LANGUAGES,
    SOFTWARE_COMPONENTS,
    Architecture,
    FsxThroughput,
    Modality,
    Orchestrator,
    TrainingStage,
    WorkloadStatus,
)

FSX_STEP_GIB = 1200
S3_BUCKET_RE = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"


class Workload(models.Model):
    """What an organization trains, with what software, on which infrastructure.

    Frameworks and software components are lists of ``{"name", "version"}`` validated against a vocabulary
    (``"other"`` with a ``label``), so they stay structured and their history diffs per item.
    """

    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT, related_name="workloads")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # Model
    model_family = models.CharField(max_length=100, blank=True, help_text=_("For example Llama 3.1, Qwen2.5, own architecture."))
    architecture = models.CharField(max_length=20, choices=Architecture.choices, default=Architecture.DENSE)
    architecture_other = models.CharField(_("other architecture"), max_length=100, blank=True)
    parameters_billions = models.DecimalField(
        _("parameters (billions)"), max_digits=8, decimal_places=2,
        validators=[MinValueValidator(Decimal("0.01")), MaxValueValidator(Decimal("100000"))],
    )
    modality = models.CharField(max_length=20, choices=Modality.choices, default=Modality.TEXT)
    target_languages = models.JSONField(default=list, blank=True, help_text=_("Language codes, e.g. ja, en."))
    training_stage = models.CharField(max_length=24, choices=TrainingStage.choices, default=TrainingStage.PRETRAINING)
    # Software
    frameworks = models.JSONField(default=list, blank=True)
    software = models.JSONField(_("software components"), default=list, blank=True)
    # Infrastructure
    orchestrator = models.CharField(max_length=24, choices=Orchestrator.choices, default=Orchestrator.PCLUSTER_SLURM)
    orchestrator_other = models.CharField(_("other orchestrator"), max_length=100, blank=True)
    target_instance_type = models.CharField(max_length=32, validators=[validators.validate_instance_type])
    target_instance_count = models.PositiveIntegerField(validators=[validators.validate_positive])
    # Storage
    fsx_lustre_size_gib = models.PositiveIntegerField(_("FSx for Lustre size (GiB)"), null=True, blank=True)
    fsx_lustre_throughput = models.PositiveIntegerField(
        _("FSx for Lustre throughput"), choices=FsxThroughput.choices, null=True, blank=True
    )
    s3_bucket = models.CharField(_("S3 bucket"), max_length=63, blank=True,
                                 validators=[RegexValidator(S3_BUCKET_RE, _("Not a valid S3 bucket name."))])
    s3_prefix = models.CharField(_("S3 prefix"), max_length=500, blank=True)
    data_repository_path = models.CharField(
        _("data repository association path"), max_length=200, blank=True,
        help_text=_("The Lustre path linked to the S3 bucket and prefix, e.g. /data."),
    )
    openzfs_home_gib = models.PositiveIntegerField(_("FSx for OpenZFS /home (GiB)"), null=True, blank=True)
    # Program
    status = models.CharField(max_length=16, choices=WorkloadStatus.choices, default=WorkloadStatus.PLANNING, db_index=True)
    lead_sa = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="led_workloads",
        verbose_name=_("lead SA"),
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["organization__name", "name"]
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="unique_workload_name_per_org")]
        indexes = [models.Index(fields=["target_instance_type"], name="workload_instance_type")]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("workloads:workload_detail", kwargs={"pk": self.pk})

    @property
    def architecture_display(self) -> str:
        return self.architecture_other if self.architecture == Architecture.OTHER else self.get_architecture_display()

    @property
    def orchestrator_display(self) -> str:
        return self.orchestrator_other if self.orchestrator == Orchestrator.OTHER else self.get_orchestrator_display()

    def framework_list(self) -> list[str]:
        return [validators.component_display(i, FRAMEWORKS) for i in self.frameworks or []]

    def software_list(self) -> list[str]:
        return [validators.component_display(i, SOFTWARE_COMPONENTS) for i in self.software or []]

    def frameworks_text(self) -> str:
        return "; ".join(self.framework_list())

    def software_text(self) -> str:
        return "; ".join(self.software_list())

    def language_list(self) -> list[str]:
        return [str(LANGUAGES.get(code, code)) for code in self.target_languages or []]

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}

        def add(field, message):
            errors.setdefault(field, []).append(message)

        for field, vocabulary, what in (("frameworks", FRAMEWORKS, "Framework"),
                                        ("software", SOFTWARE_COMPONENTS, "Software component")):
            try:
                validators.validate_components(getattr(self, field), vocabulary, what)
            except ValidationError as exc:
                add(field, exc.messages[0])
        langs = self.target_languages
        if not isinstance(langs, list) or any(code not in LANGUAGES for code in langs):
            add("target_languages", gettext("Use language codes from: %(codes)s.") % {"codes": ", ".join(LANGUAGES)})
        if self.architecture == Architecture.OTHER and not self.architecture_other.strip():
            add("architecture_other", gettext("Name the architecture when it is 'other'."))
        if self.orchestrator == Orchestrator.OTHER and not self.orchestrator_other.strip():
            add("orchestrator_other", gettext("Name the orchestrator when it is 'other'."))
        if self.fsx_lustre_size_gib is not None:
            if self.fsx_lustre_size_gib <= 0 or self.fsx_lustre_size_gib % FSX_STEP_GIB:
                add("fsx_lustre_size_gib",
                    gettext("FSx for Lustre storage comes in steps of %(step)s GiB.") % {"step": f"{FSX_STEP_GIB:,}"})
            if self.fsx_lustre_throughput is None:
                add("fsx_lustre_throughput", gettext("Choose the throughput of the Lustre file system."))
        if self.data_repository_path:
            if not self.data_repository_path.startswith("/"):
                add("data_repository_path", gettext("A file system path starts with /."))
            if not self.s3_bucket:
                add("s3_bucket", gettext("A data repository association needs an S3 bucket."))
        if self.lead_sa_id and self.organization_id and not Membership.objects.filter(
            user_id=self.lead_sa_id, organization_id=self.organization_id, role=MembershipRole.LEAD_SA
        ).exists():
            add("lead_sa", gettext("The lead SA must be a lead solutions architect of this organization."))
        if errors:
            raise ValidationError(errors)
