"""What deleting a cluster keeps and what it deletes, as the storage stack was launched.

The storage blueprint makes the choice explicit (``DeletionPolicy`` on every file system): the bucket and the
home file system are always kept, the Lustre scratch file system follows the launch form's
``LustreDeletionPolicy``. The delete confirmation says which, so nobody learns it from a missing file system.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _

from clusters.blueprints import catalog
from clusters.choices import StackRole

LUSTRE_POLICY = "LustreDeletionPolicy"


@dataclass(frozen=True)
class Kept:
    what: str
    kept: bool


def lustre_policy(stack_parameters: dict) -> str:
    """The storage stack's Lustre policy: its own parameter, else the blueprint's default."""
    chosen = stack_parameters.get(LUSTRE_POLICY)
    if chosen:
        return str(chosen)
    spec = next(p for p in catalog.entry("storage").parameters if p.name == LUSTRE_POLICY)
    return str(spec.default)


def on_delete(cluster) -> list[Kept]:
    """What the cluster's storage stack keeps when the cluster is deleted (empty: it has no storage stack)."""
    storage = next((s for s in cluster.stacks.all() if s.role == StackRole.STORAGE), None)
    if storage is None:
        return []
    parameters = storage.parameters or {}
    out = [Kept(_("the data bucket (training data, checkpoints, the software stack)"), True)]
    out.append(Kept(_("the FSx for Lustre scratch file system (files not yet exported to the bucket)"),
                    lustre_policy(parameters) == "Retain"))
    if str(parameters.get("CreateHomeFileSystem", "false")) == "true":
        out.append(Kept(_("the FSx for OpenZFS home file system"), True))
    return out
