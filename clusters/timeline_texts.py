"""What the launch service and a cluster's state changes write on the timeline, as codes with parameters
(``portal.core.stored_text``), read in each reader's language."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from clusters.choices import ClusterState
from portal.core import provider_errors
from portal.core.stored_text import define


def state_label(value) -> str:
    """'creating', 'ready': a state in the middle of a sentence."""
    try:
        return str(ClusterState(value).label).lower()
    except ValueError:
        return str(value)


LAUNCH_REQUESTED = define("cluster.launch_requested",
                          gettext_noop("Launch of cluster %(name)s requested (%(blueprint)s)"))
STATE_CHANGED = define("cluster.state_changed", gettext_noop("Cluster %(name)s: %(before)s → %(after)s"),
                       {"before": state_label, "after": state_label})
FAILURE = define("cluster.failure", "%(reason)s", {"reason": provider_errors.cluster_failure})
