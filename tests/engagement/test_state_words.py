"""An escalation's state reads as a state in Japanese ("依頼済み"), not as the column of when it happened
("依頼日時"), which the same English word heads."""
from django.utils import translation

from portal.engagement.choices import EscalationState


def test_escalation_states_are_states_in_japanese():
    with translation.override("ja"):
        assert [str(s.label) for s in EscalationState] == ["依頼済み", "受付済み", "回答済み", "完了"]
        assert translation.gettext("Requested") == "依頼日時"  # the column keeps its word
    with translation.override("en"):
        assert [str(s.label) for s in EscalationState] == ["Requested", "Accepted", "Answered", "Closed"]
