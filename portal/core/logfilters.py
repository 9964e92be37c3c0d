"""Log filters for the demo's console (``manage.py run_demo`` turns them on with ``DEMO_QUIET_CONSOLE``).

A refused page (403, 404) is the portal working as meant: Django's ``django.request`` logger prints it with
the exception's traceback, which reads like a crash. In the demo it is one line. Real errors (5xx) keep
their traceback. The embedded AWS endpoint's expected ``400`` answers are filtered by ``expected_aws_line``.
"""
from __future__ import annotations

import logging
import re

# moto answers 400 to the calls the portal makes to learn that something is absent (a stack not created
# yet, a quota not applied): werkzeug logs each one as `"POST / HTTP/1.1" 400 -`.
_AWS_EXPECTED = re.compile(r'"POST / HTTP/1\.[01]" 400 ')
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # werkzeug colours a 4xx line when the console is a terminal


class OneLineRefusals(logging.Filter):
    """Drop the traceback of a 4xx record (kept: the one line saying what was refused and where)."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if status is not None and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True


def expected_aws_line(line: str) -> bool:
    """True for an embedded AWS endpoint's log line the demo does not show (an expected 400)."""
    return bool(_AWS_EXPECTED.search(_ANSI.sub("", line)))
