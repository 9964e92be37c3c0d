"""The overview's accelerator-hours table is built in Python (``{% capacity_rows %}``); the template loop it
replaced is kept here as the oracle: the same markup for every shape of row, a frozen week's older rows included."""
import pytest
from django.template import Context, Template
from django.utils import translation

from portal.review.templatetags.review_tables import capacity_rows

ORACLE = Template(
    '{% for o in organizations %}{% if o.gpu_hours_reserved or o.gpu_hours_held or o.cost_usd %}<tr><th scope="row">'
    '{{ o.name }}</th><td>{{ o.gpu_hours_reserved|floatformat:"0g" }}</td><td>{{ o.gpu_hours_held|floatformat:"0g" }}'
    '</td><td>{{ o.gpu_hours_healthy|floatformat:"0g" }}</td><td>{{ o.gpu_hours_busy|floatformat:"0g" }}</td><td>'
    '{% if o.goodput is not None %}{% widthratio o.goodput 1 100 %} %{% else %}—{% endif %}</td><td>'
    '{{ o.cost_usd|floatformat:"2g"|default:"—" }}{% if o.cost_from %} <small>({{ o.cost_from }} – {{ o.cost_to }})'
    '</small>{% endif %}</td><td>{{ o.cost_per_busy_gpu_hour|floatformat:"2g"|default:"—" }}'
    '</td><td>{{ o.reservations_flagged|default:"" }}</td></tr>{% endif %}{% endfor %}'
)


def row(name, **figures):
    base = {"name": name, "gpu_hours_reserved": 0.0, "gpu_hours_held": 0.0, "gpu_hours_healthy": 0.0,
            "gpu_hours_busy": 0.0, "goodput": None, "cost_usd": None, "cost_per_busy_gpu_hour": None,
            "reservations_flagged": 0}
    return {**base, **figures}


ROWS = [
    row("Alpha Labs", gpu_hours_reserved=36864.0, gpu_hours_held=30000.5, gpu_hours_healthy=29000.49,
        gpu_hours_busy=20000.0, goodput=0.5425, cost_usd=123456.785, cost_per_busy_gpu_hour=6.17284,
        reservations_flagged=2),
    row("<Beta> & \"Co\"", gpu_hours_held=2.5, gpu_hours_healthy=1.5, gpu_hours_busy=0.5, goodput=0.0),
    row("Idle org"),  # neither reserved nor held nor cost: no row
    row("Billed without hours", cost_usd=2210.5, cost_from="2026-11-10", cost_to="2026-12-07"),
    row("Reserved only", gpu_hours_reserved=1e6, goodput=0.000004, cost_usd=0.0),
    {"name": "Frozen before costs", "gpu_hours_reserved": 8.0, "gpu_hours_held": 8.0, "gpu_hours_healthy": 8.0,
     "gpu_hours_busy": 4.0, "goodput": 0.5},
]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_rows_are_the_templates_rows(language):
    with translation.override(language):
        assert capacity_rows(ROWS) == ORACLE.render(Context({"organizations": ROWS}))
    assert capacity_rows(ROWS).count("<tr>") == 5


def test_no_organization_with_hours_means_no_rows():
    assert capacity_rows([row("Idle org")]) == "" == capacity_rows([])
