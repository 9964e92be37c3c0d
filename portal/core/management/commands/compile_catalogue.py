"""Compile locale/*/LC_MESSAGES/django.po into the .mo files the portal ships (committed beside them).

Pure Python (polib, a development requirement), so it needs no gettext tools: a machine without msgfmt still
builds the catalogue, and CI checks that the committed .mo holds exactly what the .po says
(tests/portal/test_i18n.py). Run ``make messages`` after changing marked text: it extracts, then compiles.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Compile the translation catalogues (.po) into .mo files without gettext's msgfmt."

    def handle(self, *args, **options):
        try:
            import polib  # deferred: polib is a development dependency
        except ImportError as exc:  # production installs only requirements.lock
            raise CommandError("polib is a development requirement: install requirements-dev.lock") from exc
        for root in settings.LOCALE_PATHS:
            for po_path in sorted(Path(root).glob("*/LC_MESSAGES/*.po")):
                catalogue = polib.pofile(str(po_path))
                untranslated = [e.msgid for e in catalogue.untranslated_entries()]
                fuzzy = [e.msgid for e in catalogue.fuzzy_entries()]
                catalogue.save_as_mofile(str(po_path.with_suffix(".mo")))
                self.stdout.write(f"{po_path}: {len(catalogue.translated_entries())} translated, "
                                  f"{len(untranslated)} untranslated, {len(fuzzy)} fuzzy")
