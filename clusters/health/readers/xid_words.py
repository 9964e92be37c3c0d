"""The XID table's words (``clusters/health/readers/xid.py``, a table without Django) marked for translation, so a fault's
meaning and advice, stored in English as ingestion wrote them, are shown in the reader's language
(``stored_words`` in ``portal/core/templatetags/portal_display.py``). ``tests/health/test_xid_words.py`` fails when the
table gains a word this list lacks."""
from django.utils.translation import gettext_noop

WORDS = (
    gettext_noop("GPU has fallen off the bus"),
    gettext_noop("GPU memory page fault"),
    gettext_noop("GPU stopped processing"),
    gettext_noop("GSP RPC timeout"),
    gettext_noop("GSP error"),
    gettext_noop("NVLink error"),
    gettext_noop("contained ECC error"),
    gettext_noop("double-bit ECC error"),
    gettext_noop("graphics engine exception"),
    gettext_noop("hardware fault (auxiliary power / board)"),
    gettext_noop("high single-bit ECC error rate"),
    gettext_noop("internal micro-controller breakpoint"),
    gettext_noop("internal micro-controller halt"),
    gettext_noop("preemptive cleanup after earlier errors"),
    gettext_noop("row-remap / page-retirement recorded"),
    gettext_noop("row-remap / page-retirement recording failed"),
    gettext_noop("uncontained ECC error"),
    gettext_noop("unrecovered ECC error"),
    gettext_noop("application error: restart the job"),
    gettext_noop("drain and replace the node"),
    gettext_noop("monitor"),
    gettext_noop("monitor; reset the GPU if it repeats"),
    gettext_noop("reboot the node; replace it if it recurs"),
    gettext_noop("reset the GPU"),
    gettext_noop("restart the job"),
)
