"""What an NVIDIA XID code means and what an operator should do about it.

dcgm-exporter reports the last XID a GPU raised (``DCGM_FI_DEV_XID_ERRORS``); the
number alone tells a user nothing. This table, taken from the program's DOMAIN notes
(which summarise NVIDIA's XID catalog, https://docs.nvidia.com/deploy/xid-errors/),
turns it into a meaning, an action, a severity and the consequence for the node.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

INFO = "info"
WARNING = "warning"
CRITICAL = "critical"
SEVERITIES = (INFO, WARNING, CRITICAL)

# Node-level consequences, mildest first: callers compare their positions.
NONE = "none"
RESTART_JOB = "restart job"
RESET_GPU = "reset GPU"
REBOOT_NODE = "reboot node"
REPLACE_NODE = "replace node"
CONSEQUENCES = (NONE, RESTART_JOB, RESET_GPU, REBOOT_NODE, REPLACE_NODE)

CATALOG_URL = "https://docs.nvidia.com/deploy/xid-errors/"


@dataclass(frozen=True)
class XidInfo:
    """One XID code with its meaning and the action the program recommends."""

    code: int
    meaning: str
    action: str
    severity: str
    consequence: str
    known: bool = True

    def to_dict(self) -> dict:
        """JSON-safe dict."""
        return asdict(self)


def _entry(codes: tuple[int, ...], meaning: str, action: str, severity: str, consequence: str) -> dict:
    return {code: XidInfo(code, meaning, action, severity, consequence) for code in codes}


XIDS: dict[int, XidInfo] = {
    **_entry((13,), "graphics engine exception", "application error: restart the job", WARNING, RESTART_JOB),
    **_entry((31,), "GPU memory page fault", "application error: restart the job", WARNING, RESTART_JOB),
    **_entry((43,), "GPU stopped processing", "application error: restart the job", WARNING, RESTART_JOB),
    **_entry((45,), "preemptive cleanup after earlier errors", "monitor", INFO, NONE),
    **_entry((48,), "double-bit ECC error", "reset the GPU", CRITICAL, RESET_GPU),
    **_entry((54,), "hardware fault (auxiliary power / board)", "drain and replace the node", CRITICAL, REPLACE_NODE),
    **_entry((61,), "internal micro-controller breakpoint", "monitor; reset the GPU if it repeats", WARNING, NONE),
    **_entry((62,), "internal micro-controller halt", "monitor; reset the GPU if it repeats", WARNING, NONE),
    **_entry((63,), "row-remap / page-retirement recorded", "monitor", INFO, NONE),
    **_entry((64,), "row-remap / page-retirement recording failed", "reset the GPU", CRITICAL, RESET_GPU),
    **_entry((74,), "NVLink error", "reset the GPU", CRITICAL, RESET_GPU),
    **_entry((79,), "GPU has fallen off the bus", "reboot the node; replace it if it recurs", CRITICAL, REBOOT_NODE),
    **_entry((92,), "high single-bit ECC error rate", "monitor", WARNING, NONE),
    **_entry((94,), "contained ECC error", "restart the job", WARNING, RESTART_JOB),
    **_entry((95,), "uncontained ECC error", "reset the GPU", CRITICAL, RESET_GPU),
    **_entry((119,), "GSP RPC timeout", "reset the GPU", CRITICAL, RESET_GPU),
    **_entry((120,), "GSP error", "reset the GPU", CRITICAL, RESET_GPU),
    **_entry((140,), "unrecovered ECC error", "reset the GPU", CRITICAL, RESET_GPU),
}

# Codes whose advice escalates when the same code comes back on the same node ("replace it if it recurs"): the
# first occurrence gets the table's consequence, a recurrence a replacement.
REPLACE_IF_RECURS = frozenset({79})


def describe(code: int) -> XidInfo:
    """Return the entry for ``code``; an unknown code gets a generic entry pointing to NVIDIA's catalog.

    Unknown codes are treated as warnings: a GPU raised an error we cannot classify,
    which is worth a look but not worth draining a node for.
    """
    code = int(code)
    info = XIDS.get(code)
    if info is not None:
        return info
    return XidInfo(
        code=code,
        meaning=f"unknown XID {code}, see NVIDIA's XID catalog ({CATALOG_URL})",
        action="look the code up in NVIDIA's XID catalog and check the driver log (dmesg)",
        severity=WARNING,
        consequence=NONE,
        known=False,
    )
