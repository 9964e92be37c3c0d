"""The words the health summary (``clusters/health/readers/summary.py``) gives the faults it finds outside the XID
table (missing GPUs, remapped rows, ECC, throttling, EFA), marked for translation as ``xid_words`` marks the XID
table's: ingestion stores them in English and ``stored_words`` shows them in the reader's language.
``tests/health/test_fault_words.py`` fails when the summary gains a fixed word this list lacks."""
from django.utils.translation import gettext_noop

WORDS = (
    gettext_noop("GPU held at its power cap since the last report"),
    gettext_noop("GPU not reported by dcgm-exporter"),
    gettext_noop("GPU throttled for heat since the last report"),
    gettext_noop("check `fi_info -p efa` on the node; reboot it if a device stays missing"),
    gettext_noop("check cooling and the GPU temperature"),
    gettext_noop("check that this node belongs to the cluster and that the exporter's modelName is right"),
    gettext_noop("double-bit ECC errors since the driver loaded"),
    gettext_noop("none while training at full load; check the power limit otherwise"),
    gettext_noop("reboot the node; replace it if the GPU stays missing"),
    gettext_noop("reset the GPU; replace the node if they recur"),
    gettext_noop("row remapping failed"),
    gettext_noop("rows remapped after correctable errors"),
    gettext_noop("rows remapped after uncorrectable errors"),
)
