"""CloudFormation as the launch pipeline needs it: create, describe, events, resources, delete.

Wraps boto3 (through ``portal.core.aws.client``, so the organization's role is assumed with its external
id) and turns botocore's errors into ``portal.core.aws.AwsError`` with AWS's code. Nothing here touches
the database.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from botocore.exceptions import ClientError

from portal.core import aws

LAUNCH_TAG = "geniac:launch-id"
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]


@dataclass
class StackState:
    stack_id: str
    name: str
    status: str
    reason: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class Event:
    event_id: str
    timestamp: datetime
    logical_id: str
    physical_id: str
    resource_type: str
    status: str
    reason: str


def _state(raw: dict) -> StackState:
    return StackState(
        stack_id=raw["StackId"], name=raw["StackName"], status=raw["StackStatus"],
        reason=raw.get("StackStatusReason", ""),
        tags={t["Key"]: t["Value"] for t in raw.get("Tags", [])},
        outputs={o["OutputKey"]: o["OutputValue"] for o in raw.get("Outputs", [])},
    )


def _not_found(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    return error.get("Code") == "ValidationError" and "does not exist" in error.get("Message", "")


class CloudFormation:
    """One organization's CloudFormation in one region."""

    def __init__(self, organization=None, region: str | None = None, client=None):
        try:
            self.client = client or aws.client("cloudformation", organization=organization, region=region)
        except aws.AWS_EXCEPTIONS as exc:
            raise aws.translate(exc) from exc

    def _call(self, method: str, **kwargs):
        try:
            return getattr(self.client, method)(**kwargs)
        except aws.AWS_EXCEPTIONS as exc:
            raise aws.translate(exc) from exc

    def find(self, name_or_id: str) -> StackState | None:
        """The stack, or ``None`` when CloudFormation has no live stack by that name."""
        try:
            stacks = self.client.describe_stacks(StackName=name_or_id)["Stacks"]
        except ClientError as exc:
            if _not_found(exc):
                return None
            raise aws.translate(exc) from exc
        except aws.AWS_EXCEPTIONS as exc:
            raise aws.translate(exc) from exc
        return _state(stacks[0]) if stacks else None

    def create(self, name: str, template_body: str, parameters: dict[str, str], launch_id: str,
               tags: dict[str, str] | None = None) -> str:
        all_tags = {LAUNCH_TAG: launch_id, **(tags or {})}
        response = self._call(
            "create_stack",
            StackName=name,
            TemplateBody=template_body,
            Parameters=[{"ParameterKey": k, "ParameterValue": str(v)} for k, v in parameters.items()],
            Tags=[{"Key": k, "Value": v} for k, v in all_tags.items()],
            Capabilities=CAPABILITIES,
            OnFailure="ROLLBACK",
            ClientRequestToken=f"{launch_id}-{name}"[:128],
        )
        return response["StackId"]

    def events(self, stack_id: str, known: set[str]) -> list[Event]:
        """Events not in ``known``, oldest first; stops paging at the first known event."""
        found: list[Event] = []
        kwargs = {"StackName": stack_id}
        while True:
            page = self._call("describe_stack_events", **kwargs)
            for raw in page.get("StackEvents", []):  # newest first
                if raw["EventId"] in known:
                    return list(reversed(found))
                found.append(Event(
                    event_id=raw["EventId"], timestamp=raw["Timestamp"], logical_id=raw.get("LogicalResourceId", ""),
                    physical_id=raw.get("PhysicalResourceId", ""), resource_type=raw.get("ResourceType", ""),
                    status=raw.get("ResourceStatus", ""), reason=raw.get("ResourceStatusReason", ""),
                ))
            token = page.get("NextToken")
            if not token:
                return list(reversed(found))
            kwargs["NextToken"] = token

    def resources_done(self, stack_id: str) -> int:
        """How many of the stack's resources are complete."""
        summaries = []
        kwargs = {"StackName": stack_id}
        while True:
            page = self._call("list_stack_resources", **kwargs)
            summaries.extend(page.get("StackResourceSummaries", []))
            if not page.get("NextToken"):
                break
            kwargs["NextToken"] = page["NextToken"]
        return sum(1 for s in summaries if s.get("ResourceStatus") in ("CREATE_COMPLETE", "UPDATE_COMPLETE"))

    def delete(self, stack_id: str) -> None:
        self._call("delete_stack", StackName=stack_id)

    def change_set_preview(self, name: str, template_body: str, parameters: dict[str, str]) -> list[dict]:
        """Create a CREATE change set, read its changes, and remove it (real AWS only)."""
        change_set = f"{name}-preview"
        self._call("create_change_set", StackName=name, ChangeSetName=change_set, ChangeSetType="CREATE",
                   TemplateBody=template_body, Capabilities=CAPABILITIES,
                   Parameters=[{"ParameterKey": k, "ParameterValue": str(v)} for k, v in parameters.items()])
        self.client.get_waiter("change_set_create_complete").wait(
            StackName=name, ChangeSetName=change_set, WaiterConfig={"Delay": 2, "MaxAttempts": 30})
        changes = self._call("describe_change_set", StackName=name, ChangeSetName=change_set)["Changes"]
        self._call("delete_change_set", StackName=name, ChangeSetName=change_set)
        self._call("delete_stack", StackName=name)  # the REVIEW_IN_PROGRESS placeholder stack
        return [c["ResourceChange"] for c in changes if "ResourceChange" in c]
