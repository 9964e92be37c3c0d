"""The client factory talks to a real HTTP endpoint and assumes the organization's role."""
import pytest

from portal.core import aws as portal_aws


def test_client_assumes_the_organization_role(aws, world):
    sts = portal_aws.client("sts", organization=world.org_a)
    identity = sts.get_caller_identity()
    assert identity["Arn"].startswith(f"arn:aws:sts::{world.org_a.aws_account_id}:assumed-role/GeniacPortalAccess/")


def test_client_without_role_uses_base_credentials(aws, world):
    world.org_b.role_arn = ""
    s3 = portal_aws.client("s3", organization=world.org_b)
    s3.create_bucket(Bucket="beta-data", CreateBucketConfiguration={"LocationConstraint": "ap-northeast-1"})
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["beta-data"]


def test_aws_errors_are_translated(aws, world):
    s3 = portal_aws.client("s3")
    with pytest.raises(Exception) as info:
        s3.head_bucket(Bucket="does-not-exist")
    error = portal_aws.translate(info.value)
    assert error.code == "404" and not error.retryable


def test_role_arn_must_match_account(world):
    from django.core.exceptions import ValidationError

    world.org_a.role_arn = "arn:aws:iam::999999999999:role/Other"
    with pytest.raises(ValidationError):
        world.org_a.full_clean()
