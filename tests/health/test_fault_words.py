"""The faults the health summary finds outside the XID table (a missing GPU, remapped rows, throttling, EFA) and an
XID fault's meaning stored behind its code read in the reader's language, as the XID table's words do."""
import ast
from pathlib import Path

from django.utils import translation

from clusters.health.readers import fault_words, summary
from portal.core.templatetags.portal_display import stored_words


def _summary_words() -> set[str]:
    """The fixed meanings and advice the summary passes to ``_add`` (f-strings are made per fault: not listed)."""
    tree = ast.parse(Path(summary.__file__).read_text())
    words = set()
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "_add":
            words |= {a.value for a in call.args[4:6] if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return words


def test_every_fixed_word_of_the_summary_is_marked_and_reads_in_japanese():
    words = _summary_words()
    assert "GPU not reported by dcgm-exporter" in words  # the parse finds them
    assert words <= set(fault_words.WORDS) | {"drain and replace the node", "monitor"}, sorted(
        words - set(fault_words.WORDS))
    with translation.override("ja"):
        assert sorted(w for w in words if stored_words(w) == w) == []
        assert stored_words("GPU not reported by dcgm-exporter") == "dcgm-exporter が GPU を報告していません"


def test_an_xid_meaning_keeps_its_code_and_translates_its_words():
    with translation.override("ja"):
        assert stored_words("XID 79: GPU has fallen off the bus") == "XID 79: GPU がバスから外れた"
        assert stored_words("XID 999: something the driver said") == "XID 999: something the driver said"
    with translation.override("en"):
        assert stored_words("XID 79: GPU has fallen off the bus") == "XID 79: GPU has fallen off the bus"
