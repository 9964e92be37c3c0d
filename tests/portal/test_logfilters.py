"""The demo's console: a refused page is one line, moto's expected 400s are left out, real errors keep their
traceback."""
from __future__ import annotations

import io
import logging
import sys

from django.core.exceptions import PermissionDenied

from portal.core.logfilters import OneLineRefusals, expected_aws_line
from sandbox.management.commands.run_demo import _pass_lines


def _logged(status: int) -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(OneLineRefusals())
    logger = logging.getLogger("tests.logfilters")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise PermissionDenied("The weekly review is for program managers.")
        except PermissionDenied:
            logger.warning("Forbidden (Permission denied): /overview/", exc_info=sys.exc_info(),
                           extra={"status_code": status})
    finally:
        logger.removeHandler(handler)
    return out.getvalue()


def test_a_refused_page_is_one_line_and_an_error_keeps_its_traceback():
    assert _logged(403) == "Forbidden (Permission denied): /overview/\n"
    assert "Traceback" in _logged(500)


def test_the_embedded_endpoints_expected_400s_are_left_out():
    lines = [b'127.0.0.1 - - [02/Dec/2026 01:00:00] "POST / HTTP/1.1" 400 -\n',
             b'127.0.0.1 - - [02/Dec/2026 01:00:00] "POST / HTTP/1.1" 200 -\n',
             b'127.0.0.1 - - [02/Dec/2026 01:00:00] "GET /moto-api/ HTTP/1.1" 400 -\n',
             b'127.0.0.1 - - [02/Dec/2026 01:00:01] "\x1b[31m\x1b[1mPOST / HTTP/1.1\x1b[0m" 400 -\n']
    out = io.StringIO()
    _pass_lines(io.BytesIO(b"".join(lines)), out, expected_aws_line)
    assert out.getvalue().splitlines() == [lines[1].decode().strip(), lines[2].decode().strip()]
