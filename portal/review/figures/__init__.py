"""The overview's figures, one module per source (organizations, clusters, quotas, interactions, health),
every queryset restricted by the access policy; :func:`overview` puts them together and :func:`diff` compares
two snapshots."""
from portal.review.figures.diff import diff
from portal.review.figures.overview import SOURCES, TABLE_FIGURES, overview, table_figures
from portal.review.figures.scope import DEFAULT_WINDOW, Scope, clean_window

__all__ = ["DEFAULT_WINDOW", "SOURCES", "TABLE_FIGURES", "Scope", "clean_window", "diff", "overview", "table_figures"]
