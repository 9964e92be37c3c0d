"""Run AWS ParallelCluster's own schema and validators on a configuration, against the embedded endpoint.

``aws-parallelcluster`` (the ``pcluster`` CLI's library, a test-only dependency installed without
its CDK and API-server dependencies) loads the configuration with its marshmallow schema, exactly
as ``pcluster create-cluster`` does, then runs its validators. The validators read AWS (subnets,
security groups, instance types, FSx, reservations, S3 objects, IAM policies); here they read the
embedded endpoint, where the blueprints' stacks really exist; a validator that needed data the
endpoint cannot hold would be suppressed by name in ``NEEDS_AWS_DATA``, with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass

# Validators that read data only AWS holds; everything else runs. (Empty: the endpoint publishes
# ParallelCluster's official images, AWS managed policies, reservations, FSx volumes and ENIs.)
NEEDS_AWS_DATA: dict[str, str] = {}


@dataclass(frozen=True)
class Finding:
    level: str
    validator: str
    message: str


def check(config: dict, *, cluster_name: str, organization, monkeypatch, validate: bool = True) -> list[Finding]:
    """Schema errors raise ``marshmallow.ValidationError``; validator findings are returned.

    ParallelCluster acts in the organization's account (its role assumed, as the portal does), where
    the blueprints' stacks exist.
    """
    import boto3
    from django.conf import settings
    from pcluster.aws.aws_api import AWSApi
    from pcluster.config.common import TypeMatchValidatorsSuppressor
    from pcluster.schemas.cluster_schema import ClusterSchema

    from portal.core import aws

    region = config["Region"]
    creds = aws._assumed(organization.role_arn, organization.external_id, region)
    for name, value in (("AWS_ENDPOINT_URL", settings.AWS_ENDPOINT_URL), ("AWS_DEFAULT_REGION", region),
                        ("AWS_REGION", region), ("AWS_ACCESS_KEY_ID", creds["AccessKeyId"]),
                        ("AWS_SECRET_ACCESS_KEY", creds["SecretAccessKey"]), ("AWS_SESSION_TOKEN", creds["SessionToken"])):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # a session made earlier keeps its credentials
    AWSApi.reset()
    try:
        cluster = ClusterSchema(cluster_name=cluster_name).load(config)
        failures = cluster.validate(suppressors=[TypeMatchValidatorsSuppressor(set(NEEDS_AWS_DATA))]) if validate else []
    finally:
        AWSApi.reset()
    return [Finding(f.level.name, f.validator_type, f.message) for f in failures]
