"""Child processes that cannot outlive the process that started them."""
from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """``preexec_fn`` for subprocess.Popen: on Linux the child gets SIGTERM when its parent dies, so a
    killed demo runner or test session leaves no worker behind consuming the queues."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    os.setsid()
