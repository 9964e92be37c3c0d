"""Workload validation (bad input is refused with a clear message) and the readable change history."""
import pytest
from django.core.exceptions import ValidationError

from portal.core.models import TimelineEntry
from tests.workloads.factories_workloads import WorkloadFactory
from workloads import history
from workloads.forms import WorkloadForm
from workloads.models import Workload


def _clean(**changes):
    w = WorkloadFactory.build(**changes)
    with pytest.raises(ValidationError) as exc:
        w.full_clean()
    return exc.value.message_dict


def test_valid_workload_passes(world):
    w = WorkloadFactory.build(organization=world.org_a, lead_sa=world.lead_a)
    w.full_clean()


@pytest.mark.parametrize(
    ("changes", "field", "text"),
    [
        ({"target_instance_count": 0}, "target_instance_count", "at least 1"),
        ({"target_instance_type": "p9.mega"}, "target_instance_type", "Unknown instance type"),
        ({"frameworks": [{"name": "caffe", "version": "1"}]}, "frameworks", "unknown name 'caffe'"),
        ({"frameworks": [{"name": "other", "version": "1"}]}, "frameworks", "label"),
        ({"software": [{"name": "nccl", "version": "2"}, {"name": "nccl", "version": "3"}]}, "software", "listed twice"),
        ({"fsx_lustre_size_gib": 1000, "fsx_lustre_throughput": 250}, "fsx_lustre_size_gib", "steps of 1,200 GiB"),
        ({"architecture": "other"}, "architecture_other", "Name the architecture"),
        ({"target_languages": ["xx"]}, "target_languages", "language codes"),
        ({"data_repository_path": "/data"}, "s3_bucket", "needs an S3 bucket"),
        ({"parameters_billions": -1}, "parameters_billions", "greater than or equal"),
    ],
)
def test_bad_input_is_refused(world, changes, field, text):
    errors = _clean(organization=world.org_a, **changes)
    assert field in errors, errors
    assert text in " ".join(errors[field])


def test_lead_sa_must_lead_the_organization(world):
    errors = _clean(organization=world.org_a, lead_sa=world.lead_b)
    assert "lead solutions architect of this organization" in errors["lead_sa"][0]


def test_ml_prefixed_sagemaker_names_are_accepted(world):
    WorkloadFactory.build(organization=world.org_a, target_instance_type="ml.p5.48xlarge").full_clean()


def test_form_parses_component_lines(world):
    w = WorkloadFactory(organization=world.org_a)
    form = WorkloadForm({"frameworks": "nemo 2.0\nother:Modulus 0.4", "software": "cuda 12.4"}, instance=w,
                        user=world.lead_a, section="software")
    assert form.is_valid(), form.errors
    saved = form.save()
    assert saved.frameworks == [{"name": "nemo", "version": "2.0"}, {"name": "other", "label": "Modulus", "version": "0.4"}]
    assert saved.framework_list() == ["NVIDIA NeMo 2.0", "Modulus 0.4"]


def test_form_reports_unknown_component_line(world):
    w = WorkloadFactory(organization=world.org_a)
    form = WorkloadForm({"frameworks": "caffe 1.0", "software": ""}, instance=w, user=world.lead_a, section="software")
    assert not form.is_valid()
    assert "Line 1: unknown name" in form.errors["frameworks"][0]


def test_history_records_the_changed_fields_readably(world):
    w = WorkloadFactory(organization=world.org_a, status="planning", target_instance_count=4)
    w.status = "training"
    w.target_instance_count = 16
    w.frameworks = [{"name": "megatron-lm", "version": "0.9.0"}, {"name": "nemo", "version": "2.0"}]
    w._history_user = world.lead_a
    w.save()
    entries = history.entries(Workload, Workload.history.filter(id=w.pk).select_related("history_user"))
    assert [e.action for e in entries] == ["changed", "created"]
    latest = entries[0]
    assert latest.who == "lead_a"
    by_field = {c.field: c for c in latest.changes}
    assert set(by_field) == {"status", "target_instance_count", "frameworks"}
    assert (by_field["status"].old, by_field["status"].new) == ("Planning", "Training")
    assert (by_field["target_instance_count"].old, by_field["target_instance_count"].new) == ("4", "16")
    assert by_field["frameworks"].items == [("changed", "Megatron-LM 0.8.0 → 0.9.0"), ("added", "NVIDIA NeMo 2.0")]


def test_change_is_appended_to_the_timeline(world):
    w = WorkloadFactory(organization=world.org_a, status="planning")
    w.status = "training"
    w.save()
    entry = TimelineEntry.objects.filter(organization=world.org_a, kind="workload").first()
    assert entry.title.startswith(f"Workload updated: {w.name} (status)")
    assert entry.body == "Status: Planning → Training"
    assert TimelineEntry.objects.filter(organization=world.org_a, kind="workload").count() == 2  # created + updated


def test_save_without_change_adds_no_timeline_entry(world):
    w = WorkloadFactory(organization=world.org_a)
    before = TimelineEntry.objects.count()
    w.save()
    assert TimelineEntry.objects.count() == before
