"""``{% submission_key form %}``: the hidden one-time key every form that creates something carries (beside
``{% csrf_token %}``), so a double click or a resent POST lands on the first submission's row
(``portal.core.submissions``). A form sent back with errors keeps the key it was posted with, so the corrected
submission still counts as the first; an unbound form gets a fresh one."""
from django import template
from django.utils.html import format_html

from portal.core import submissions

register = template.Library()


@register.simple_tag
def submission_key(form=None):
    key = ""
    if form is not None and getattr(form, "is_bound", False):
        posted = form.data.get(submissions.FIELD, "")
        key = posted if submissions.KEY.fullmatch(posted or "") else ""
    return format_html('<input type="hidden" name="{}" value="{}">', submissions.FIELD, key or submissions.new_key())
