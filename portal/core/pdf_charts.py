"""Charts for the portal's PDFs, drawn with reportlab's own graphics (no browser, no image files).

Each function returns a ``Drawing``, a flowable a platypus story takes like a table, so any PDF that prints a
series can chart it: ``bar_chart`` for one or more series over labels (weeks, states, instance types),
``heat_map`` for a matrix of counts (challenges by organization), ``waterfall`` for a quantity and what each
step loses of it (GPU-hours reserved → held → healthy → busy). Text in them is the portal's own or the
figures' (names, labels); reportlab's graphics draw strings as text, never as markup, in the active language's font
(``portal.core.pdf.font``).
"""
from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext as _
from reportlab.graphics.charts.barcharts import VerticalBarChart
from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.shapes import Drawing, Rect, String
from reportlab.lib import colors

from portal.core.characters import holdable
from portal.core.pdf import font

PALETTE = (colors.HexColor("#2f6db5"), colors.HexColor("#d9822b"), colors.HexColor("#3a9e5a"),
           colors.HexColor("#b83b3b"))


def bar_chart(title: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], *,
              width: float = 360, height: float = 170) -> Drawing:
    """Vertical bars of ``series`` (name, values) over ``labels``, a legend when there is more than one series.
    An empty chart says so instead of drawing empty axes."""
    drawing = Drawing(width, height)
    drawing.add(String(0, height - 12, title, fontName=font(bold=True), fontSize=9))
    values = [list(v) for _, v in series]
    if not labels or not any(any(row) for row in values):
        drawing.add(String(0, height - 30, _("Nothing to chart yet."), fontName=font(), fontSize=8))
        return drawing
    chart = VerticalBarChart()
    chart.x, chart.y = 30, 36
    chart.width, chart.height = width - 40 - (90 if len(series) > 1 else 0), height - 60
    chart.data = values
    chart.categoryAxis.categoryNames = [holdable(str(label)) for label in labels]
    chart.categoryAxis.labels.fontName = font()
    chart.categoryAxis.labels.fontSize = 6
    chart.categoryAxis.labels.angle = 30 if len(labels) > 6 else 0
    chart.categoryAxis.labels.boxAnchor = "ne" if len(labels) > 6 else "n"
    chart.valueAxis.valueMin = 0
    top = max(max(row) for row in values)
    chart.valueAxis.valueStep = max(1, round(top / 4)) if top >= 4 else 1
    chart.valueAxis.labels.fontName = font()
    chart.valueAxis.labels.fontSize = 6
    chart.barSpacing = 1
    for i in range(len(values)):
        chart.bars[i].fillColor = PALETTE[i % len(PALETTE)]
        chart.bars[i].strokeColor = None
    drawing.add(chart)
    if len(series) > 1:
        legend = Legend()
        legend.x, legend.y = width - 85, height - 30
        legend.fontName, legend.fontSize = font(), 7
        legend.alignment = "right"
        legend.colorNamePairs = [(PALETTE[i % len(PALETTE)], name) for i, (name, _) in enumerate(series)]
        drawing.add(legend)
    return drawing


def heat_map(title: str, rows: Sequence[str], columns: Sequence[str], counts: Sequence[Sequence[int]], *,
             width: float = 760, cell_height: float = 14, label_width: float = 150) -> Drawing:
    """A grid of ``counts`` (one list per row, one count per column), shaded by count, each cell printed."""
    header = 40
    height = header + cell_height * max(len(rows), 1) + 4
    drawing = Drawing(width, height)
    drawing.add(String(0, height - 12, title, fontName=font(bold=True), fontSize=9))
    if not rows or not columns:
        drawing.add(String(0, height - 30, _("Nothing to chart yet."), fontName=font(), fontSize=8))
        return drawing
    cell_width = min(60.0, (width - label_width) / len(columns))
    top_count = max((c for row in counts for c in row), default=0) or 1
    top = height - header
    for j, name in enumerate(columns):
        drawing.add(String(label_width + j * cell_width + cell_width / 2, top + 4, _fit(name, cell_width),
                           fontName=font(), fontSize=6, textAnchor="middle"))
    for i, (name, row) in enumerate(zip(rows, counts, strict=True)):
        y = top - (i + 1) * cell_height
        drawing.add(String(0, y + 4, _fit(name, label_width), fontName=font(), fontSize=7))
        for j, count in enumerate(row):
            shade = count / top_count
            fill = colors.linearlyInterpolatedColor(colors.HexColor("#f4f6f9"), colors.HexColor("#b83b3b"), 0, 1, shade)
            drawing.add(Rect(label_width + j * cell_width, y, cell_width, cell_height, fillColor=fill,
                             strokeColor=colors.white, strokeWidth=0.5))
            drawing.add(String(label_width + j * cell_width + cell_width / 2, y + 4, str(count), fontName=font(),
                               fontSize=7, textAnchor="middle",
                               fillColor=colors.white if shade > 0.6 else colors.black))
    return drawing


def waterfall(title: str, steps: Sequence[tuple[str, float]], losses: Sequence[str], *, width: float = 360,
              height: float = 170) -> Drawing:
    """One bar per step (``steps``: label and value), and above each after the first, outlined in the loss
    colour, what it lost of the one before (where it is less), named by ``losses`` (one per step after the
    first). Each bar is printed with its value on top of itself. A step of nothing draws no shape at all: its
    "0" and what it lost are labels at the axis, never a bar (an outline as tall as the step before would read
    as a full-height bar of its own)."""
    drawing = Drawing(width, height)
    drawing.add(String(0, height - 12, title, fontName=font(bold=True), fontSize=9))
    top = max((v for _, v in steps), default=0)
    if not steps or top <= 0:
        drawing.add(String(0, height - 30, _("Nothing to chart yet."), fontName=font(), fontSize=8))
        return drawing
    base, room = 30, height - 30 - 34
    slot = (width - 10) / len(steps)
    bar = slot * 0.6
    loss_colour = colors.HexColor("#b83b3b")
    previous = None
    for i, (label, value) in enumerate(steps):
        x = 5 + i * slot + (slot - bar) / 2
        shown = max(0.0, value or 0.0)
        if shown > 0:
            drawing.add(Rect(x, base, bar, room * shown / top, fillColor=PALETTE[0], strokeColor=None))
        if previous is not None and previous > shown and shown > 0:
            # The loss is an outline, never a filled bar, topping the step up to the one before.
            drawing.add(Rect(x, base + room * shown / top, bar, room * (previous - shown) / top,
                             fillColor=None, strokeColor=loss_colour, strokeWidth=0.75, strokeDashArray=[2, 2]))
            drawing.add(String(x + bar / 2, base + room * previous / top + 2, _fit(losses[i - 1], slot, 6),
                               fontName=font(), fontSize=6, textAnchor="middle", fillColor=loss_colour))
        elif previous is not None and previous > shown:
            # All of the step before is lost: said in words above the "0", at the axis.
            drawing.add(String(x + bar / 2, base + 12, _fit(losses[i - 1], slot, 6),
                               fontName=font(), fontSize=6, textAnchor="middle", fillColor=loss_colour))
        drawing.add(String(x + bar / 2, base + room * shown / top + 2, f"{value:,.0f}",
                           fontName=font(), fontSize=7, textAnchor="middle"))
        drawing.add(String(x + bar / 2, base - 10, _fit(label, slot), fontName=font(), fontSize=7, textAnchor="middle"))
        previous = shown
    return drawing


def _fit(text: str, width: float, size: float = 7) -> str:
    """``text`` cut to about what fits in ``width`` points at ``size`` (an ellipsis marks a cut)."""
    most = max(3, int(width / (size * 0.5)))
    text = holdable(str(text))
    return text if len(text) <= most else text[: most - 1] + "…"
