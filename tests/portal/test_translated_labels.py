"""The Python labels in Japanese: vocabularies, model and form labels, filters, messages; and the Japanese
catalogue itself (every entry translated, none fuzzy, the same placeholders as its English)."""
from __future__ import annotations

import inspect
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import models
from django.test import RequestFactory
from django.utils import translation
from django.utils.functional import Promise

from tests.catalogue import CATALOGUE, compile_to, parse, placeholders

OUR_APPS = ("portal", "workloads", "clusters")


@pytest.fixture
def japanese(settings, tmp_path, client):
    """The catalogue as it stands in the tree, compiled afresh, as the only project catalogue; the test client's
    browser asks for Japanese (the pages pick their language per request)."""
    settings.LOCALE_PATHS = [compile_to(tmp_path)]
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "ja"
    with translation.override("ja"):
        yield


def _our_classes(base: type) -> list[type]:
    """Every subclass of ``base`` defined in the portal's own packages (API modules left out: their
    filters' labels are the API's, in English)."""
    import importlib
    import pkgutil

    found = {}
    for package in OUR_APPS:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            if any(part in info.name for part in (".migrations", ".management", "portal.settings", "sandbox.aws",
                                                  "portal.wsgi", "portal.celery")):
                continue
            try:
                module = importlib.import_module(info.name)
            except Exception:  # noqa: BLE001, S112 - a module that needs a service to import defines no label
                continue
            for _name, item in inspect.getmembers(module, inspect.isclass):
                if issubclass(item, base) and item.__module__.startswith(OUR_APPS) and ".api." not in item.__module__:
                    found[f"{item.__module__}.{item.__qualname__}"] = item
    return list(found.values())


def _our_choices() -> list[type[models.Choices]]:
    return _our_classes(models.Choices)


# --- the catalogue ---

def test_every_entry_of_the_catalogue_is_translated_and_none_is_fuzzy_or_obsolete():
    fields, entries = parse()
    assert fields["Language"] == "ja"
    assert fields["Plural-Forms"].startswith("nplurals=1;")
    assert len(entries) > 400
    untranslated = [e.msgid for e in entries if not all(t.strip() for t in e.translations())]
    fuzzy = [e.msgid for e in entries if "fuzzy" in e.flags]
    obsolete = [e.msgid for e in entries if e.obsolete]
    assert (untranslated, fuzzy, obsolete) == ([], [], [])
    assert "\n#| " not in CATALOGUE.read_text(encoding="utf-8")  # no leftover of a fuzzy match


def test_each_translation_keeps_the_placeholders_of_its_english():
    _fields, entries = parse()
    wrong = []
    for e in entries:
        english = placeholders(e.msgid)
        if e.msgid_plural and placeholders(e.msgid_plural) != english:
            wrong.append((e.line, e.msgid, "plural"))
        for text in e.translations():
            if placeholders(text) != english:
                wrong.append((e.line, e.msgid, text))
    assert wrong == []


def test_the_placeholder_check_catches_a_dropped_or_renamed_placeholder():
    assert placeholders("Saved %(object)s.") != placeholders("保存しました。")
    assert placeholders("Saved %(object)s.") != placeholders("%(obj)s を保存しました。")
    assert placeholders("e.g. “{example} 1.0”") != placeholders("例: 1.0")
    assert placeholders("10 % of each cluster")[0] == frozenset()


def test_the_catalogue_has_no_entry_twice():
    _fields, entries = parse()
    keys = [e.key for e in entries]
    assert len(keys) == len(set(keys))
    assert ("a link to a page", "open", "") in keys  # a context is read, and is part of the key
    assert CATALOGUE.read_text(encoding="utf-8").count('msgid "Waiting on AWS"') == 1


# --- the vocabularies ---

def test_every_choice_label_of_the_portal_is_marked_and_translated(japanese):
    classes = _our_choices()
    assert len(classes) > 30
    _fields, entries = parse()
    translated = {e.msgid for e in entries}
    unmarked, missing = [], []
    for choices in classes:
        for member in choices:
            label = member._label_ if hasattr(member, "_label_") else member.label
            if not isinstance(label, Promise):
                unmarked.append(f"{choices.__qualname__}.{member.name}")
                continue
            with translation.override("en"):
                english = str(label)
            if english not in translated:
                missing.append(english)
    assert (unmarked, missing) == ([], [])


def test_choice_labels_read_japanese_and_stay_english_by_default(japanese):
    from clusters.choices import ClusterState
    from portal.core.choices import REGION_CHOICES, InteractionStatus, NodeVerdict, Severity
    from workloads.choices import LANGUAGES, ReservationKind

    assert InteractionStatus.WAITING_CUSTOMER.label == "顧客の回答待ち"
    assert ClusterState.READY.label == "利用可能"
    assert ReservationKind.CAPACITY_BLOCK.label == "ML 向けキャパシティブロック"
    assert NodeVerdict.REPLACE.label == "交換"
    assert dict(Severity.choices)["critical"] == "緊急"
    assert str(LANGUAGES["ja"]) == "日本語"
    assert str(dict(REGION_CHOICES)["ap-northeast-1"]) == "アジアパシフィック (東京) · ap-northeast-1"
    with translation.override("en"):
        assert InteractionStatus.WAITING_CUSTOMER.label == "Waiting on customer"
        assert str(dict(REGION_CHOICES)["ap-northeast-1"]) == "Asia Pacific (Tokyo) · ap-northeast-1"


# --- models, forms and filters ---

def test_verbose_names_read_japanese(japanese):
    from portal.core.models import TimelineEntry
    from workloads.models import Workload

    assert str(Workload._meta.get_field("lead_sa").verbose_name) == "リード SA"
    assert str(TimelineEntry._meta.verbose_name_plural) == "タイムラインの項目"
    assert str(apps.get_app_config("health").verbose_name) == "クラスターヘルス"
    assert str(Workload._meta.get_field("model_family").help_text).startswith("例: Llama 3.1")
    with translation.override("en"):
        assert str(Workload._meta.get_field("lead_sa").verbose_name) == "lead SA"


@pytest.mark.django_db
def test_a_form_renders_its_labels_choices_and_errors_in_japanese(japanese, world):
    from workloads.forms import DecisionForm, WorkloadForm

    form = WorkloadForm(user=world.pm)
    html = form.as_div()
    assert "分散学習フレームワーク" in html and "ソフトウェアコンポーネント" in html and "対象言語" in html
    assert "日本語" in html and "英語" in html  # the target languages' choices
    assert "Dense Transformer" in html and "Mixture of Experts (MoE)" in html and "事前学習" in html
    assert "1 行に 1 つ、名前とバージョンを書きます（例: 「megatron-lm 1.0」）" in html
    assert "組織" in html and "アーキテクチャ" in html and "FSx for Lustre の容量（GiB）" in html

    decision = DecisionForm(data={"decision": "approve"})
    assert "承認" in decision.as_div() and "却下" in decision.as_div()

    bad = WorkloadForm(user=world.pm, data={"organization": world.org_a.pk, "frameworks": "nosuch 1.0"})
    assert not bad.is_valid()
    assert bad.errors["frameworks"] == ["1 行目: 「nosuch」は不明な名前です。megatron-lm, nemo, torchtitan, deepspeed, "
                                        "pytorch-fsdp, nxd, hf-transformers, other のいずれかを使ってください。"]


@pytest.mark.django_db
def test_a_filterset_renders_its_labels_and_choices_in_japanese(japanese, world):
    from workloads.interactions.filtersets import InteractionFilterSet
    from workloads.interactions.models import Interaction

    request = RequestFactory().get("/interactions/")
    request.user = world.lead_a
    form = InteractionFilterSet(data={}, queryset=Interaction.objects.all(), request=request).form
    html = form.as_div()
    for text in ("未解決 / 解決済み", "担当者", "開始日", "顧客の回答待ち", "AWS の回答待ち", "解決済み", "社内限定",
                 "顧客と共有", "サポートケース", "緊急"):
        assert text in html, text
    assert '<option value="unknown" selected>すべて</option>' in str(form["open"])


@pytest.mark.django_db
def test_the_filters_keep_their_english_by_default(world):
    from workloads.interactions.filtersets import InteractionFilterSet
    from workloads.interactions.models import Interaction

    request = RequestFactory().get("/interactions/")
    request.user = world.lead_a
    html = InteractionFilterSet(data={}, queryset=Interaction.objects.all(), request=request).form.as_div()
    assert "Open or resolved" in html and "Waiting on customer" in html and "Shared with the customer" in html


def test_every_form_field_and_filter_of_the_pages_has_a_marked_label():
    import django_filters
    from django import forms

    from portal.core.field_labels import FIELD_LABELS
    from portal.core.forms import RestrictedFilterSet

    forms_found = [f for f in _our_classes(forms.BaseForm) if hasattr(f, "base_fields")]
    filtersets = _our_classes(django_filters.FilterSet)
    assert len(forms_found) > 15 and len(filtersets) > 10
    unmarked = [f"{form.__qualname__}.{name}" for form in forms_found for name, field in form.base_fields.items()
                if not field.widget.is_hidden and not isinstance(field.label, Promise)]
    for filterset in filtersets:
        for name, flt in filterset.base_filters.items():
            by_name = (issubclass(filterset, RestrictedFilterSet) and flt.lookup_expr == "exact"
                       and flt.field_name in FIELD_LABELS)
            if not isinstance(flt._label, Promise) and not by_name:
                unmarked.append(f"{filterset.__qualname__}.{name}")
    assert unmarked == []


def test_the_field_labels_keep_the_english_django_derives():
    """``FIELD_LABELS`` replaces labels Django derived from field names: in English they read as before."""
    from django.utils.text import capfirst

    from portal.core.field_labels import FIELD_LABELS

    compared, differ = set(), []
    for model in apps.get_models():
        if not model.__module__.startswith(OUR_APPS):
            continue
        for field in model._meta.get_fields():
            if field.name in FIELD_LABELS and getattr(field, "verbose_name", None) is not None:
                compared.add(field.name)
                with translation.override("en"):
                    if capfirst(str(field.verbose_name)) != str(FIELD_LABELS[field.name]):
                        differ.append((model.__name__, field.name))
    assert differ == []
    assert compared == set(FIELD_LABELS)  # no label for a field no model has


@pytest.mark.django_db
def test_filters_named_after_model_fields_read_japanese(japanese, world):
    from workloads.filtersets import CapacityReservationFilterSet
    from workloads.models import CapacityReservation

    with translation.override("en"):  # a label read once (by another page, the API schema) stays translatable
        assert [str(CapacityReservationFilterSet.base_filters[name].label) for name in ("kind", "region")] == [
            "Kind", "Region"]
    request = RequestFactory().get("/reservations/")
    request.user = world.pm
    form = CapacityReservationFilterSet(data={}, queryset=CapacityReservation.objects.all(), request=request).form
    assert [str(form[name].label) for name in ("organization", "kind", "region", "quota")] == [
        "組織", "種類", "リージョン", "クォータ"]
    assert "オンデマンドキャパシティ予約" in str(form["kind"])


def test_every_blueprint_parameter_has_a_japanese_label(japanese):
    from pathlib import Path

    from clusters.blueprints import cfn
    from clusters.launches import labels

    _fields, entries = parse()
    translated = {e.msgid for e in entries}
    names = {spec.name for path in sorted(Path(cfn.BLUEPRINTS_DIR).glob("*.yaml"))
             for spec in cfn.parameters(cfn.load(path))}
    assert len(names) > 40
    with translation.override("en"):
        english = {name: labels.parameter_label(name) for name in names}
    assert sorted(name for name, label in english.items() if label not in translated) == []
    assert labels.parameter_label("HeadNodeInstanceType") == "ヘッドノードのインスタンスタイプ"
    assert labels.parameter_label("LustreStorageCapacity") == "Lustre のストレージ容量（GiB）"
    assert english["HeadNodeInstanceType"] == "Head node instance type"


@pytest.mark.django_db
def test_sort_choices_read_japanese_and_keep_their_english(japanese, world):
    from workloads.filtersets import WorkloadFilterSet
    from workloads.models import Workload

    request = RequestFactory().get("/workloads/")
    request.user = world.pm
    choices = dict(WorkloadFilterSet(data={}, queryset=Workload.objects.all(), request=request).form["ordering"]
                   .field.choices)
    assert (str(choices["parameters"]), str(choices["-parameters"])) == ("パラメータ数", "パラメータ数（降順）")
    with translation.override("en"):
        assert (str(choices["parameters"]), str(choices["-parameters"])) == ("Parameters", "Parameters (descending)")
        assert str(choices[""]) == "Default order"


@pytest.mark.django_db
def test_a_csv_export_stays_english_for_a_japanese_reader(japanese, client, world):
    from django.urls import reverse

    from tests.workloads.factories_workloads import CapacityReservationFactory

    CapacityReservationFactory(organization=world.org_a, kind="capacity_block")
    client.force_login(world.pm)
    page = client.get(reverse("workloads:reservation_list")).content.decode()
    assert "ML 向けキャパシティブロック" in page  # the page, for comparison, in the reader's language
    csv = b"".join(client.get(reverse("workloads:reservation_list"), {"export": "csv"}).streaming_content).decode()
    assert csv.splitlines()[0].startswith("Organization,Reservation,Kind")
    assert "Capacity Block for ML" in csv and "キャパシティ" not in csv
    assert translation.get_language() == "ja"  # the export's English ends with the export


def test_the_health_verdict_reads_japanese(japanese):
    from portal.review.figures.health import verdict_text

    assert verdict_text(3, "replace", True) == "未解決の障害 3 件（最も重い対処: ノード交換）"
    assert verdict_text(0, None, True) == "正常"
    with translation.override("en"):
        assert verdict_text(3, "replace", True) == "3 open faults (worst: replace node)"
        assert verdict_text(1, "healthy", True) == "1 open fault"


PM_PAGES = ["/", "/organizations/", "/overview/", "/workloads/", "/quotas/", "/quotas/new/", "/reservations/",
            "/reservations/new/", "/quota-requests/", "/clusters/", "/clusters/blueprints/", "/interactions/",
            "/escalations/", "/outcomes/", "/cycles/", "/cycles/start-next/", "/health/", "/reviews/"]
LEAD_PAGES = ["/lead/", "/workloads/new/", "/quota-requests/new/", "/clusters/blueprints/parallelcluster/launch/",
              "/interactions/new/"]


@pytest.mark.django_db
def test_the_pages_render_with_the_japanese_labels(japanese, client, world):
    """Every list and form a program manager opens, in Japanese: nothing a lazy label reaches breaks (a page
    answers as in English) and the pages' own forms show their Japanese labels."""
    from tests.workloads.factories_workloads import CapacityReservationFactory, InstanceQuotaFactory, WorkloadFactory

    WorkloadFactory(organization=world.org_a)
    InstanceQuotaFactory(organization=world.org_a)
    CapacityReservationFactory(organization=world.org_a)
    answers = {}
    customer_pages = ["/", f"/organizations/{world.org_a.slug}/", f"/organizations/{world.org_a.slug}/timeline/",
                      "/interactions/", "/clusters/launch-day/", "/quotas/"]
    for user, pages in ((world.pm, PM_PAGES), (world.lead_a, LEAD_PAGES), (world.customer_a, customer_pages)):
        client.force_login(user)
        answers.update({(user.username, path): client.get(path, follow=True).status_code for path in pages})
    assert [key for key, status in answers.items() if status != 200] == []
    assert len(answers) == len(PM_PAGES) + len(LEAD_PAGES) + len(customer_pages)
    client.force_login(world.lead_a)
    assert "ヘッドノードのインスタンスタイプ" in client.get(LEAD_PAGES[3]).content.decode()
    client.force_login(world.pm)
    assert "インスタンスタイプ名" in client.get("/quotas/new/").content.decode()
    assert "継続する組織" in client.get("/cycles/start-next/").content.decode()
    refused = client.get("/interactions/new/")
    assert refused.status_code == 403 and "問い合わせを記録する権限がありません。" in refused.content.decode()


def test_what_customers_read_of_a_provider_failure_is_japanese_and_plain_text(japanese):
    from portal.core import provider_errors

    text = provider_errors.cluster_failure("throttling")
    assert type(text) is str and text == "AWS がポータルのリクエストをスロットリングしました。リード SA が起動を再試行します。"
    assert provider_errors.remediation_failure("no such reason").startswith("操作に失敗しました。")
    with translation.override("en"):
        assert provider_errors.cost_failure("throttling") == ("Cost Explorer slowed down the portal's requests; "
                                                               "the portal will ask again.")


def test_run_time_messages_fill_their_placeholders_in_japanese(japanese):
    from django.utils.translation import gettext, ngettext

    assert gettext("Launch of %(name)s started.") % {"name": "kotoba-p5"} == "kotoba-p5 の起動を開始しました。"
    assert ngettext("%(count)s cluster ready", "%(count)s clusters ready", 2) % {"count": 2} == "利用可能なクラスター 2 件"
    with translation.override("en"):
        assert ngettext("%(count)s cluster ready", "%(count)s clusters ready", 1) % {"count": 1} == "1 cluster ready"


@pytest.mark.django_db
def test_the_readiness_checklist_reads_japanese(japanese, world):
    from clusters.health.validation.readiness import checklist

    items = checklist(world.org_a, clusters=[])
    assert [i.label for i in items] == ["ネットワーク", "ストレージ", "クラスター利用可能", "モニタリングの報告あり",
                                        "利用可能なクラスターの検証"]
    assert items[2].detail == "クラスターはまだありません"


@pytest.mark.django_db
def test_the_lazy_labels_make_no_migration():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
