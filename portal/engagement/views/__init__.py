"""Pages of the engagement app: escalations (escalations.py), cycles and their reports (cycles.py), outcomes
and trained models (outcomes.py), and Slack's interactivity and command endpoints (slack.py)."""
