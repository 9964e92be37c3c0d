"""The forecast table's rows are built in Python (``{% forecast_rows %}``); the per-row template they replace is
kept here as the oracle: the same markup for every shape of entry, escaped the same way."""
import pytest
from django.template import Context, Template
from django.utils import translation

from clusters.accounting.templatetags.accounting import forecast_rows

# The include the tag replaced (templates/accounting/_forecast_row.html), looped as both pages looped it.
ORACLE = Template(
    '{% for e in forecast.reservations %}<tr>{% if name %}<th scope="row">{{ name }}</th>{% endif %}<td>{{ e.name }}'
    '</td><td>{{ e.end }}</td><td>{{ e.allocated|floatformat:"0g" }}</td><td>{{ e.delivered|floatformat:"0g" }}</td><td>'
    '{{ e.by_end|floatformat:"0g" }}{% if e.share is not None %} ({% widthratio e.share 1 100 %} %){% endif %}</td><td>'
    '{{ forecast.runs_out|default:"—" }}</td></tr>{% endfor %}'
    '{% for e in forecast.quotas %}<tr>{% if name %}<th scope="row">{{ name }}</th>{% endif %}<td>{{ e.name }}'
    '</td><td>{{ e.end }}</td><td>{{ e.allocated|floatformat:"0g" }}</td><td>{{ e.delivered|floatformat:"0g" }}</td><td>'
    '{{ e.by_end|floatformat:"0g" }}{% if e.share is not None %} ({% widthratio e.share 1 100 %} %){% endif %}</td><td>'
    '{{ forecast.runs_out|default:"—" }}</td></tr>{% endfor %}'
)

FORECASTS = [
    {"reservations": [{"name": "cr-0000000000000000a", "end": "2026-12-31", "allocated": 36864.0,
                       "delivered": 1234.5, "by_end": 20000.4, "share": 0.5425}],
     "quotas": [{"name": "16 × p5.48xlarge", "end": "2027-01-15", "allocated": 0.0, "delivered": 0.0,
                 "by_end": 0.0, "share": None}],
     "runs_out": "2027-01-15"},
    {"reservations": [], "quotas": [{"name": "<b>4 × trn1.32xlarge</b> & co", "end": "2026-12-07",
                                     "allocated": 2.5, "delivered": 0.5, "by_end": 1.5, "share": 0.005}],
     "runs_out": None},
    {"reservations": [{"name": "cr-1", "end": "2026-12-08", "allocated": 10.0, "delivered": 9.5, "by_end": 10.0,
                       "share": 1.0}, {"name": "cr-2", "end": "2026-12-09", "allocated": 1e6, "delivered": 2.5,
                                       "by_end": 3.5, "share": 0.0000035}], "quotas": [], "runs_out": None},
]


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("name", ["", "Alpha <Labs> & \"Sons\""])
@pytest.mark.parametrize("forecast", FORECASTS)
def test_the_rows_are_the_templates_rows(forecast, name, language):
    with translation.override(language):
        assert forecast_rows(forecast, name) == ORACLE.render(Context({"forecast": forecast, "name": name}))


def test_an_organization_without_a_forecast_has_no_rows():
    assert forecast_rows(None, "Alpha") == "" == forecast_rows({}, "Alpha")


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("value", [0, 0.0, -0.0, -0.4, -0.5, 0.5, 1.5, 2.5, 2.49999, 1234.5, 36864.0, 1e6, 123456789.5,
                                   1e-7, 10 ** 15 + 0.5, 7, -12.5])
def test_whole_numbers_are_shown_as_floatformat_shows_them(value, language):
    """Grouped as the reader's language groups them (``1,234``, not ``1234``)."""
    from django.template.defaultfilters import floatformat

    from portal.core.templatetags.portal_display import whole_number

    with translation.override(language):
        assert whole_number(value) == floatformat(value, "0g")


@pytest.mark.parametrize("language", ["en", "ja"])
def test_money_and_counts_are_grouped_for_the_reader(language):
    from django.template import Context, Template

    from portal.core.templatetags.portal_display import money, whole_number

    with translation.override(language):
        assert money(4172404.775) == "4,172,404.78" and whole_number(36864.0) == "36,864"
        assert Template("{{ v|money }}").render(Context({"v": 1234.5})) == "1,234.50"
