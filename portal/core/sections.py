"""Sections that apps add to the portal's shared pages (the organization page, the lead SA's home).

Each app registers its sections from its ``AppConfig.ready()`` with an explicit ``order``, so a page's layout is
decided here by numbers anyone can read, not by the order of ``INSTALLED_APPS``. A builder takes the request (and
the organization, on the organization page) and returns the section template's context.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

ORGANIZATION_PAGE = "organization"
LEAD_HOME = "lead_home"
PAGES = (ORGANIZATION_PAGE, LEAD_HOME)


@dataclass(frozen=True, order=True)
class Section:
    order: int
    template: str
    builder: Callable = field(compare=False)


_REGISTRY: dict[str, dict[str, Section]] = {page: {} for page in PAGES}


def register(page: str, template: str, builder: Callable, *, order: int) -> None:
    """Add (or replace: registering twice is harmless) the section rendered by ``template`` on ``page``."""
    if page not in _REGISTRY:
        raise ValueError(f"unknown page {page!r}; pages are {', '.join(PAGES)}")
    _REGISTRY[page][template] = Section(order, template, builder)


def sections(page: str) -> list[Section]:
    """The page's sections, in their declared order."""
    return sorted(_REGISTRY[page].values())
