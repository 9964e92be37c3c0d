"""Markup typed into a name, a note or a summary prints as text in both PDFs (the cycle report and the
weekly review): reportlab would otherwise open ``<img src>`` files on the server, restyle with ``<font>``
and ``<b>``, and choke on a bare ``&``."""
from __future__ import annotations

import datetime
import re
import zlib

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.core.models import Cycle, CycleParticipation
from portal.engagement.models import TrainedModel
from portal.review import services
from portal.review.models import ActionItem
from tests.workloads.factories_workloads import WorkloadFactory
from workloads.interactions.models import ChallengeTag, Interaction

pytestmark = pytest.mark.django_db

# Each field gets its own label, so a miss names the field.
MARKUP = '<img src="/etc/hostname"/> <font color="red">R&D</font> <b>bold</b> &amp;'


def _value(label: str) -> str:
    return f"{label} {MARKUP}"


def _unescape(literal: bytes) -> str:
    """A PDF string literal's characters (``\\(``, ``\\)``, ``\\\\`` and octal ``\\ddd``; WinAnsi text)."""
    out = re.sub(rb"\\([0-7]{1,3}|.)", lambda m: bytes([int(m[1], 8)]) if m[1][:1].isdigit() else m[1], literal,
                 flags=re.S)
    return out.decode("cp1252")


def _strings(pdf: bytes) -> str:
    """The text a reportlab PDF draws, in order (page streams: ASCII85 then Flate). reportlab draws one
    line as several strings (``Tj``) and ends each line with ``T*``: strings of a line are joined as
    they are, lines and text blocks by a space."""
    from reportlab.lib.rl_accel import asciiBase85Decode

    text = []
    for stream in re.findall(rb"stream\r?\n(.*?)endstream", pdf, flags=re.S):
        try:
            content = zlib.decompress(asciiBase85Decode(stream.strip().decode("latin-1")))
        except (zlib.error, ValueError, UnicodeError):
            continue
        for token in re.finditer(rb"\(((?:[^()\\]|\\.)*)\)\s*Tj|T\*|ET", content, flags=re.S):
            text.append(_unescape(token[1]) if token[1] is not None else " ")
    return "".join(text)


def _assert_prints(pdf: bytes, labels: list[str]) -> None:
    assert pdf.startswith(b"%PDF")
    assert b"/Subtype /Image" not in pdf and b"/XObject" not in pdf  # nothing was read from the server's disk
    # A narrow cell wraps lines, and splits a word too long for it: compare without whitespace.
    text = "".join(_strings(pdf).split())
    for label in labels:
        assert "".join(_value(label).split()) in text, label


@pytest.fixture
def marked_up(world):
    """Every free-text field that reaches either PDF holds markup."""
    for user, label in ((world.pm, "pm"), (world.lead_a, "lead")):
        user.first_name, user.last_name = label, MARKUP
        user.save()
    world.org_a.name = _value("org-a")
    world.org_a.save()
    world.org_b.name = _value("org-b")
    world.org_b.save()
    Cycle.objects.filter(status="active").update(status="archived")
    cycle = Cycle.objects.create(number=60, name=_value("cycle"), status="active",
                                 starts_on=timezone.localdate() - datetime.timedelta(days=30))
    for org in (world.org_a, world.org_b):
        CycleParticipation.objects.create(cycle=cycle, organization=org).lead_sas.set([world.lead_a])
    WorkloadFactory(organization=world.org_a, name=_value("workload"))
    TrainedModel.objects.create(organization=world.org_a, name=_value("model"), parameters_billions=8,
                                instance_type="p5.48xlarge", instance_count=1)
    tag = ChallengeTag.objects.create(slug="markup", name=_value("tag"))
    item = Interaction.objects.create(organization=world.org_a, summary=_value("summary"), lesson=_value("lesson"),
                                      owner=world.lead_a, occurred_at=timezone.now() - datetime.timedelta(hours=2),
                                      status="waiting_customer", severity="high", visibility="internal")
    item.tags.set([tag])
    Interaction.objects.create(organization=world.org_b, summary="b", owner=world.lead_a, occurred_at=timezone.now(),
                               status="open", severity="normal", visibility="internal")
    return cycle


def test_the_cycle_report_prints_markup_as_text(client, world, marked_up):
    client.force_login(world.pm)
    response = client.get(reverse("engagement:cycle_report_pdf", args=[marked_up.pk]))
    assert response.status_code == 200
    _assert_prints(response.content, ["cycle", "org-a", "org-b", "model"])


def test_the_weekly_review_prints_markup_as_text(client, world, marked_up):
    review = services.freeze(world.pm, notes=_value("notes") + "\n" + _value("second-line"))
    ActionItem.objects.create(review=review, title=_value("action"), owner=world.lead_a)
    client.force_login(world.pm)
    response = client.get(reverse("review:review_pdf", kwargs={"pk": review.pk}))
    assert response.status_code == 200
    _assert_prints(response.content, ["notes", "second-line", "action", "org-a", "org-b", "workload", "summary",
                                      "lesson", "tag", "model"])
    text = "".join(_strings(response.content).split())
    assert "".join(f"by pm {MARKUP}".split()) in text  # the freezer's name
    assert text.count("".join(f"lead {MARKUP}".split())) >= 4  # the action's and interactions' owner, the lead SA


def test_markup_escapes_every_markup_character():
    from portal.core.pdf import markup

    assert markup('<img src="x"/> & <b>') == '&lt;img src="x"/&gt; &amp; &lt;b&gt;'
    assert markup(None) == "" and markup(3) == "3"
