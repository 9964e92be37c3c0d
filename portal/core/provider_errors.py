"""What customers read when something the portal asked of AWS fails: the portal's own words.

AWS's messages name role ARNs, account ids and the portal's own principal, and an endpoint's error
can be a whole HTML page. Lead SAs and staff (``access.sees_internal``) see the raw text, kept on the
row; customers see what failed and what to do, written here (marked with ``gettext_noop`` and translated when
read, so the constants stay plain English text for the API and for comparisons).
"""
from __future__ import annotations

from django.utils.translation import gettext, gettext_noop

from portal.core import access

CLUSTER_FAILURES = {
    "access_denied": gettext_noop("The portal could not act in your AWS account: the IAM role your organization set up for it "
                     "refused the request. Ask your AWS administrator to check that role's trust policy and "
                     "permissions; your lead SA has the details."),
    "throttling": gettext_noop("AWS slowed down the portal's requests. Your lead SA will retry the launch."),
    "parameter": gettext_noop("AWS did not accept the launch settings. Your lead SA has the details and will correct them."),
    "stack_failed": gettext_noop("AWS could not create part of the cluster. Your lead SA has the details and will retry or "
                    "adjust the launch."),
    "name_taken": gettext_noop("Your AWS account already has a stack with this cluster's name that the portal did not make. "
                  "Launch under another name, or ask your lead SA."),
    "delete_failed": gettext_noop("AWS could not delete part of the cluster. Your lead SA has the details."),
    "error": gettext_noop("The launch failed. Your lead SA has the details and will follow up."),
}
JOB_FAILED = gettext_noop("This job failed. Your lead SA has the details and will follow up.")
STACK_REASON = gettext_noop("AWS gave a reason for this step; your lead SA has the details.")
SUPPORT_SYNC_FAILED = (gettext_noop("The portal could not refresh this case from AWS Support. The case itself is unaffected; "
                       "your lead SA has the details."))


def cluster_failure(reason: str) -> str:
    return gettext(CLUSTER_FAILURES.get(reason or "error", CLUSTER_FAILURES["error"]))


def cluster_error(cluster, user) -> str:
    """The failure text ``user`` may read for ``cluster``."""
    if not cluster.error_message and not cluster.failure_reason:
        return ""
    if access.sees_internal(user, cluster.organization_id):
        return cluster.error_message
    return cluster_failure(cluster.failure_reason)


def job_error(job, organization_id: int, user) -> str:
    if not job.error:
        return ""
    return job.error if access.sees_internal(user, organization_id) else gettext(JOB_FAILED)


def support_sync_error(interaction, user) -> str:
    if not interaction.sync_error:
        return ""
    return interaction.sync_error if access.sees_internal(user, interaction.organization_id) else gettext(SUPPORT_SYNC_FAILED)


def redact(data: dict, request, organization_id: int, replacements: dict[str, str]) -> dict:
    """An API representation with raw provider fields replaced for users who may not read them."""
    user = getattr(request, "user", None)
    if user is not None and access.sees_internal(user, organization_id):
        return data
    for name, text in replacements.items():
        if data.get(name):
            data[name] = text
    return data


REMEDIATION_FAILURES = {
    "access_denied": gettext_noop("The portal could not act on the node: the IAM role your organization set up for it refused "
                     "the request. Your lead SA has the details."),
    "throttling": gettext_noop("AWS slowed down the portal's requests and the action stopped; your lead SA will propose it again."),
    "unreachable": gettext_noop("The portal could not reach AWS and the action stopped; your lead SA will propose it again."),
    "node_not_found": gettext_noop("The node was not found in the cluster (it may have been replaced already). Your lead SA has "
                      "the details."),
    "provider_refused": gettext_noop("AWS did not accept the action on the node. Your lead SA has the details."),
    "node_failed": gettext_noop("The node did not come back after the action. Your lead SA has the details and will follow up."),
    "check_failed": gettext_noop("The node failed HyperPod's deep health checks; HyperPod reports it Failure. Your lead SA "
                    "follows up."),
    "command_failed": gettext_noop("The command on the head node failed. Your lead SA has the details."),
    "cluster_deleting": gettext_noop("The cluster is being deleted: the action was stopped."),
    "deadline": gettext_noop("The action did not finish in time. Your lead SA has the details."),
    "fault_returned": gettext_noop("The fault came back after the action; your lead SA follows up (and escalates it if it repeats)."),
    "not_verified": gettext_noop("The node did not report again in time to confirm the fault is gone. Your lead SA follows up."),
    "error": gettext_noop("The action failed. Your lead SA has the details and will follow up."),
}


def aws_failure(exc) -> str:
    """The reason an AWS call failed for good, in the vocabulary of the failure texts here: an endpoint that
    could not be reached is ``unreachable`` (connection refused is not AWS slowing the portal down)."""
    if getattr(exc, "unreachable", False):
        return "unreachable"
    if getattr(exc, "retryable", False):
        return "throttling"
    return "access_denied" if "AccessDenied" in (getattr(exc, "code", "") or "") else "provider_refused"


def aws_retry_note(exc) -> str:
    """What a retried step says about the failure it retries (lead SAs read it)."""
    if getattr(exc, "unreachable", False):
        return "The AWS endpoint could not be reached"
    return "AWS slowed down the portal's requests"


def remediation_failure(reason: str) -> str:
    return gettext(REMEDIATION_FAILURES.get(reason or "error", REMEDIATION_FAILURES["error"]))
COST_FAILURES = {
    "access_denied": gettext_noop("The portal could not read this account's costs: the IAM role your organization set up for it "
                     "does not allow Cost Explorer (ce:GetCostAndUsage). Ask your AWS administrator to add it; "
                     "your lead SA has the details."),
    "throttling": gettext_noop("Cost Explorer slowed down the portal's requests; the portal will ask again."),
    "not_enabled": gettext_noop("Cost Explorer is not enabled for this account yet (it takes up to a day after it is turned on). "
                   "Your lead SA has the details."),
    "error": gettext_noop("The portal could not read this account's costs from Cost Explorer. Your lead SA has the details."),
}


def cost_failure(reason: str) -> str:
    return gettext(COST_FAILURES.get(reason or "error", COST_FAILURES["error"]))


def cost_fetch_error(fetch, user) -> str:
    """The failure text ``user`` may read for an organization's last cost fetch."""
    if fetch is None or not (fetch.error or fetch.failure_reason):
        return ""
    if access.sees_internal(user, fetch.organization_id):
        return fetch.error
    return cost_failure(fetch.failure_reason)


VALIDATION_FAILURES = {
    "access_denied": gettext_noop("The portal could not reach the cluster's head node: the IAM role your organization set up for "
                     "it refused the request (ssm:SendCommand). Your lead SA has the details."),
    "throttling": gettext_noop("AWS kept slowing down the portal's requests and the validation was not submitted; start it again."),
    "unreachable": gettext_noop("The portal could not reach AWS and the validation was not submitted; start it again."),
    "provider_refused": gettext_noop("AWS did not accept the command for the cluster's head node. Your lead SA has the details."),
    "no_head_node": gettext_noop("The portal could not find the cluster's head node (or HyperPod controller node)."),
    "command_failed": gettext_noop("Slurm did not accept the validation job on the head node. Your lead SA has the details."),
    "no_report": gettext_noop("The validation job never reported its results in time (it may still be queued behind other jobs, "
                 "or have failed before posting). Your lead SA has the details."),
    "cluster_not_ready": gettext_noop("The cluster is no longer ready: the validation was stopped."),
    "error": gettext_noop("The validation failed. Your lead SA has the details and will follow up."),
}


def validation_failure(reason: str) -> str:
    """A validation's failure in the portal's words, in the active language."""
    return gettext(VALIDATION_FAILURES.get(reason or "error", VALIDATION_FAILURES["error"]))
