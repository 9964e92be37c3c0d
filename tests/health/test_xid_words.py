"""A fault's meaning and advice are stored in English as the XID table gives them and shown in the reader's
language: every word of the table is marked (``clusters/health/readers/xid_words.py``) and has its Japanese."""
from django.utils import translation

from clusters.health.readers import xid, xid_words
from portal.core.templatetags.portal_display import stored_words


def test_every_word_of_the_xid_table_is_marked_and_reads_in_japanese():
    words = {i.meaning for i in xid.XIDS.values()} | {i.action for i in xid.XIDS.values()}
    assert words <= set(xid_words.WORDS), sorted(words - set(xid_words.WORDS))
    with translation.override("ja"):
        untranslated = sorted(w for w in words if stored_words(w) == w)
        assert untranslated == []
        assert stored_words(xid.describe(79).action) == "ノードを再起動する。再発したら交換する"
        assert stored_words("a lead SA's own words") == "a lead SA's own words"  # unknown text as it is
    with translation.override("en"):
        assert stored_words(xid.describe(79).meaning) == "GPU has fallen off the bus"
