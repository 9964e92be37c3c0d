"""Alerting and logging resources of the blueprints on the embedded endpoint (moto lacks them in CloudFormation).

``AWS::APS::RuleGroupsNamespace`` is created in moto's Managed Prometheus backend (``describe_rule_groups_namespace``
sees it); its rule file must be YAML with ``groups`` whose rules carry ``alert``/``record`` and ``expr``, as AMP
checks. ``AWS::SNS::TopicPolicy`` is set as the topic's ``Policy`` attribute. ``AWS::SNS::Subscription`` is kept on
its stack only: moto's SNS would post notifications to the endpoint from inside the server, which the tests do
themselves with signed messages. ``AWS::S3::BucketPolicy`` (the storage stack's access-log bucket) is put on moto's
bucket, and a bucket's ``VersioningConfiguration`` and ``LoggingConfiguration`` (which moto's CloudFormation
ignores) are applied to it, with moto's own checks of the log bucket's permissions. Loaded by :func:`sandbox.aws.moto_install.install`.
"""
from __future__ import annotations

import base64
import json
from typing import Any

import yaml
from moto.amp.models import amp_backends
from moto.cloudformation.exceptions import ValidationError
from moto.core.common_models import CloudFormationModel
from moto.s3.models import FakeBucket, s3_backends
from moto.sns.models import sns_backends

from sandbox.aws.moto_common import _Attributes, _hex, _tags


def check_rules(data: str) -> None:
    """What AMP refuses in a rule file: not YAML, no groups, a rule without a name or an expression."""
    try:
        parsed = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise ValidationError(message=f"rule groups namespace data is not YAML: {exc}") from exc
    groups = parsed.get("groups") if isinstance(parsed, dict) else None
    if not isinstance(groups, list) or not groups:
        raise ValidationError(message="rule groups namespace data needs a list of groups")
    for group in groups:
        for rule in group.get("rules") or []:
            if not (rule.get("alert") or rule.get("record")) or not rule.get("expr"):
                raise ValidationError(message=f"rule {rule!r} needs alert (or record) and expr")


def check_alert_manager_definition(text: str) -> None:
    """AMP's shape: YAML with ``alertmanager_config`` (YAML text); SNS receivers name a topic ARN and sign with SigV4."""
    try:
        definition = yaml.safe_load(text)
        config = yaml.safe_load(definition["alertmanager_config"])
    except (yaml.YAMLError, KeyError, TypeError) as exc:
        raise ValidationError(message=f"alert manager definition is not valid: {exc}") from exc
    if not isinstance(config, dict) or "route" not in config:
        raise ValidationError(message="alert manager definition needs a route")
    for receiver in config.get("receivers") or []:
        for sns in receiver.get("sns_configs") or []:
            if not str(sns.get("topic_arn", "")).startswith("arn:aws") or "sigv4" not in sns:
                raise ValidationError(message="an sns_configs receiver needs topic_arn (an SNS ARN) and sigv4")


class RuleGroupsNamespace(_Attributes, CloudFormationModel):
    """``AWS::APS::RuleGroupsNamespace`` in moto's Managed Prometheus backend."""

    CFN_TYPE = "AWS::APS::RuleGroupsNamespace"
    ATTRIBUTES = ("Arn",)

    def __init__(self, workspace_id: str, name: str, arn: str) -> None:
        self.workspace_id, self.name, self.ref = workspace_id, name, arn
        self.attributes = {"Arn": arn}

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> RuleGroupsNamespace:
        props = cloudformation_json["Properties"]
        data = str(props.get("Data", ""))
        check_rules(data)
        workspace_id = str(props.get("Workspace", "")).rsplit("/", 1)[-1]
        tags = {t["Key"]: t["Value"] for t in _tags(props)}
        group = amp_backends[account_id][region_name].create_rule_groups_namespace(
            data=base64.b64encode(data.encode()).decode(), name=props["Name"], tags=tags, workspace_id=workspace_id)
        return cls(workspace_id, props["Name"], group.arn)

    def delete(self, account_id: str, region_name: str) -> None:
        backend = amp_backends[account_id][region_name]
        workspace = backend.workspaces.get(self.workspace_id)
        if workspace is not None and self.name in workspace.rule_group_namespaces:
            backend.delete_rule_groups_namespace(self.name, self.workspace_id)


class SnsTopicPolicy(_Attributes, CloudFormationModel):
    """``AWS::SNS::TopicPolicy``: the document becomes each topic's ``Policy`` attribute."""

    CFN_TYPE = "AWS::SNS::TopicPolicy"
    ATTRIBUTES = ("Id",)

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self.attributes = {"Id": ref}

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> SnsTopicPolicy:
        props = cloudformation_json["Properties"]
        backend = sns_backends[account_id][region_name]
        for arn in props.get("Topics", []):
            backend.set_topic_attribute(arn, "Policy", json.dumps(props["PolicyDocument"]))
        return cls(f"{resource_name}-{_hex(8)}")


class SnsSubscription(_Attributes, CloudFormationModel):
    """``AWS::SNS::Subscription`` kept on its stack (see the module docstring); the protocol is checked."""

    CFN_TYPE = "AWS::SNS::Subscription"
    ATTRIBUTES = ("Arn",)

    def __init__(self, arn: str, endpoint: str) -> None:
        self.ref, self.endpoint = arn, endpoint
        self.attributes = {"Arn": arn}

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> SnsSubscription:
        props = cloudformation_json["Properties"]
        if props.get("Protocol") not in ("http", "https", "email", "sqs", "lambda"):
            raise ValidationError(message=f"unsupported SNS protocol {props.get('Protocol')!r}")
        return cls(f"{props['TopicArn']}:{_hex(8)}-{_hex(4)}", str(props.get("Endpoint", "")))


class S3BucketPolicy(_Attributes, CloudFormationModel):
    """``AWS::S3::BucketPolicy`` (the storage stack's access-log bucket): set on moto's bucket, removed with its stack."""

    CFN_TYPE = "AWS::S3::BucketPolicy"
    ATTRIBUTES = ("Id",)

    def __init__(self, account_id: str, bucket: str) -> None:
        self.account_id, self.bucket = account_id, bucket
        self.ref = bucket
        self.attributes = {"Id": bucket}

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> S3BucketPolicy:
        props = cloudformation_json["Properties"]
        document = props.get("PolicyDocument")
        if not isinstance(document, dict) or not document.get("Statement"):
            raise ValidationError(message="a bucket policy needs a PolicyDocument with statements")
        backend = s3_backends[account_id]["aws"]
        backend.put_bucket_policy(props["Bucket"], json.dumps(document).encode())
        for bucket, config in _PENDING_LOGGING.pop((account_id, props["Bucket"]), []):
            _put_logging(backend, bucket, config)
        return cls(account_id, props["Bucket"])

    def delete(self, account_id: str, region_name: str) -> None:
        backend = s3_backends[account_id]["aws"]
        if self.bucket in backend.buckets:
            backend.delete_bucket_policy(self.bucket)


_bucket_create = None
_PENDING_LOGGING: dict[tuple[str, str], list[tuple[str, dict]]] = {}


def _put_logging(backend: Any, bucket: str, config: dict) -> None:
    try:
        backend.put_bucket_logging(bucket, config)
    except Exception as exc:  # moto's own refusal (no such log bucket, no permission to deliver)
        raise ValidationError(message=f"bucket logging refused: {exc}") from exc


def _create_bucket_with_settings(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    bucket = _bucket_create(resource_name, cloudformation_json, account_id, region_name, **kwargs)
    props = cloudformation_json.get("Properties", {})
    backend = s3_backends[account_id]["aws"]
    versioning = (props.get("VersioningConfiguration") or {}).get("Status")
    if versioning:
        backend.put_bucket_versioning(bucket.name, versioning)
    logging = props.get("LoggingConfiguration")
    if logging:
        config = {"TargetBucket": logging.get("DestinationBucketName", bucket.name),
                  "TargetPrefix": logging.get("LogFilePrefix", "")}
        target = backend.buckets.get(config["TargetBucket"])
        if target is not None and not target.policy:
            # moto builds a resource early when an output names it (before the log bucket's policy, which it
            # depends on): logging is switched on when the policy is put, and checked then.
            _PENDING_LOGGING.setdefault((account_id, config["TargetBucket"]), []).append((bucket.name, config))
        else:
            _put_logging(backend, bucket.name, config)
    return bucket


def apply() -> None:
    """Apply the bucket settings above to moto's ``AWS::S3::Bucket`` (idempotent)."""
    global _bucket_create
    if _bucket_create is None:
        _bucket_create = FakeBucket.create_from_cloudformation_json
        FakeBucket.create_from_cloudformation_json = classmethod(_create_bucket_with_settings)
