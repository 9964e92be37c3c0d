"""The blueprints lint clean, and the reader returns exactly what they declare."""

import hashlib
from pathlib import Path

import pytest
from cfnlint.api import ManualArgs, lint_file

from clusters.blueprints import BLUEPRINTS_DIR, cfn, path

SLUGS = ["network", "storage", "parallelcluster", "hyperpod", "hyperpod-eks", "observability"]


@pytest.mark.parametrize("slug", SLUGS)
def test_blueprint_passes_cfn_lint_without_findings(slug):
    matches = lint_file(Path(path(slug)), ManualArgs(regions=["ap-northeast-1", "us-east-1"]))
    assert [str(m) for m in matches] == []


@pytest.mark.parametrize("slug", SLUGS)
def test_every_stateful_resource_says_what_deletion_and_replacement_do(slug):
    # cfn-lint's informational I3011: the default (delete) is never left implicit for data, keys or logs
    matches = lint_file(Path(path(slug)), ManualArgs(regions=["ap-northeast-1"], include_checks=["I3011"]))
    assert [str(m) for m in matches if m.rule.id == "I3011"] == []


def test_home_is_kept_and_scratch_follows_the_launch_forms_choice():
    resources = cfn.load(path("storage"))["Resources"]
    home, lustre = resources["HomeFileSystem"], resources["LustreFileSystem"]
    assert (home["DeletionPolicy"], home["UpdateReplacePolicy"]) == ("Retain", "Retain")
    assert lustre["DeletionPolicy"] == lustre["UpdateReplacePolicy"] == {"Ref": "LustreDeletionPolicy"}
    parameter = cfn.load(path("storage"))["Parameters"]["LustreDeletionPolicy"]
    assert (parameter["Default"], parameter["AllowedValues"]) == ("Delete", ["Delete", "Retain"])


def test_catalog_lists_every_blueprint_in_launch_order_with_metadata():
    blueprints = cfn.catalog()
    assert [b.slug for b in blueprints] == SLUGS
    assert [b.kind for b in blueprints] == SLUGS
    assert [b.title for b in blueprints] == [
        "Training network",
        "Training storage",
        "ParallelCluster (Slurm)",
        "SageMaker HyperPod cluster",
        "SageMaker HyperPod on Amazon EKS",
        "Observability",
    ]
    # The cluster blueprints carry the software stack and capacity wiring (2.0.0).
    # 2.1.0 / 1.1.0: the reference's settings (round two); observability 2.0.0: alert rules and alerts to SNS.
    # 2.2.0 / 1.2.0 / 1.1.0: explicit deletion and replacement policies, configless Slurm, HyperPod EKS's
    # continuous provisioning and deep health checks on Trainium. 1.3.0 / 2.3.0 / 1.2.0: Lustre over EFA.
    assert {b.slug: b.version for b in blueprints} == {"network": "1.2.0", "storage": "1.3.0", "parallelcluster": "2.3.0",
                                                      "hyperpod": "2.3.0", "hyperpod-eks": "1.2.0", "observability": "2.0.0"}
    for blueprint in blueprints:
        assert blueprint.summary
        assert blueprint.description.startswith("GENIAC")
        assert blueprint.content_hash == hashlib.sha256(blueprint.path.read_bytes()).hexdigest()
    assert sorted(p.stem for p in BLUEPRINTS_DIR.glob("*.yaml")) == sorted(SLUGS)


def test_content_hash_changes_with_one_byte(tmp_path):
    original = tmp_path / "t.yaml"
    original.write_bytes(b"Resources: {}\n")
    changed = tmp_path / "u.yaml"
    changed.write_bytes(b"Resources: {} \n")
    assert cfn.content_hash(original) == hashlib.sha256(b"Resources: {}\n").hexdigest()
    assert cfn.content_hash(original) != cfn.content_hash(changed)


EXPECTED_PARAMETERS = {
    "network": ["AvailabilityZone", "VpcCidr", "PublicSubnetCidr", "PrivateSubnetCidr", "FlowLogRetentionInDays"],
    "storage": [
        "PrivateSubnetId", "SecurityGroupId", "LustreStorageCapacity", "LustreThroughputPerTiB", "LustreEfaEnabled",
        "DataRepositoryPrefix", "LustreDeletionPolicy", "CreateHomeFileSystem", "HomeDeploymentType", "HomeStorageCapacity",
        "HomeThroughputCapacity",
    ],
    "parallelcluster": [
        "ClusterName", "ParallelClusterVersion", "Os", "CustomAmi", "HeadNodeInstanceType", "KeyName", "QueueName",
        "ComputeInstanceType", "ComputeMinCount", "ComputeMaxCount", "CapacityType", "CapacityReservationId",
        "DisableSimultaneousMultithreading", "AccountingDatabaseUri", "AccountingDatabaseUserName",
        "AccountingDatabasePasswordSecretArn", "PublicSubnetId", "PrivateSubnetId", "SecurityGroupId",
        "PlacementGroupName", "BucketName", "LustreFileSystemId", "LustreEfaEnabled", "OpenZfsRootVolumeId",
    ],
    "hyperpod": [
        "ClusterName", "PrivateSubnetId", "SecurityGroupId", "ControllerInstanceType", "WorkerInstanceType",
        "WorkerCount", "WorkerThreadsPerCore", "InstanceVolumeSizeInGB", "DeepHealthChecks", "TrainingPlanArn", "BucketName",
        "LustreDnsName", "LustreMountName", "LustreEfaEnabled", "OnCreateScript",
    ],
    "observability": ["WorkspaceAlias", "GrafanaAuthentication", "AlertEndpointUrl"],
}

EXPECTED_PARAMETERS["hyperpod-eks"] = [
    "ClusterName", "KubernetesVersion", "VpcId", "PrivateSubnetId", "SecurityGroupId", "ControlPlaneSubnet1Cidr",
    "ControlPlaneSubnet2Cidr", "WorkerInstanceType", "WorkerCount", "WorkerThreadsPerCore", "InstanceVolumeSizeInGB",
    "DeepHealthChecks", "TrainingPlanArn", "BucketName", "LustreFileSystemId", "LustreDnsName", "LustreMountName",
    "LustreEfaEnabled", "OnCreateScript",
]
EXPECTED_OUTPUTS = {
    "network": ["VpcId", "PublicSubnetId", "PrivateSubnetId", "SecurityGroupId", "PlacementGroupName", "AvailabilityZone"],
    "storage": [
        "BucketName", "AccessLogBucketName", "LustreFileSystemId", "LustreDnsName", "LustreMountName", "LustreEfaEnabled",
        "DataRepositoryAssociationId", "OpenZfsFileSystemId", "OpenZfsRootVolumeId",
    ],
    "parallelcluster": [
        "ClusterName", "HeadNodeIp", "HeadNodePrivateIp", "HeadNodeInstanceId", "ClusterStackArn", "ValidationMessages",
        "LustreEfaEnabled",
    ],
    "hyperpod": ["ClusterArn", "ClusterName", "ExecutionRoleArn", "LifecycleScriptsUri", "LustreEfaEnabled"],
    "hyperpod-eks": ["ClusterArn", "ClusterName", "EksClusterArn", "EksClusterName", "EksEndpoint", "ExecutionRoleArn",
                     "LifecycleScriptsUri", "KubernetesManifestsUri", "LustreEfaEnabled"],
    "observability": [
        "PrometheusWorkspaceId", "PrometheusWorkspaceArn", "PrometheusEndpoint", "PrometheusQueryUrl",
        "GrafanaWorkspaceId", "GrafanaEndpoint", "AlertTopicArn", "AlertRulesArn",
    ],
}


@pytest.mark.parametrize("slug", SLUGS)
def test_reader_returns_parameters_and_outputs_in_template_order(slug):
    template = cfn.load(path(slug))
    assert [p.name for p in cfn.parameters(template)] == EXPECTED_PARAMETERS[slug]
    assert [o.name for o in cfn.outputs(template)] == EXPECTED_OUTPUTS[slug]


def test_parameter_specs_carry_every_constraint():
    specs = {p.name: p for p in cfn.parameters(cfn.load(path("storage")))}
    assert specs["PrivateSubnetId"] == cfn.ParameterSpec(
        name="PrivateSubnetId",
        type="AWS::EC2::Subnet::Id",
        description="Private subnet of the network stack; the file systems live there.",
    )
    assert specs["PrivateSubnetId"].required
    throughput = specs["LustreThroughputPerTiB"]
    assert (throughput.type, throughput.default, throughput.allowed_values) == ("Number", "250", ("125", "250", "500", "1000"))
    assert not throughput.required
    home = specs["HomeStorageCapacity"]
    assert (home.min_value, home.max_value, home.default) == (64, 524288, "512")
    prefix = specs["DataRepositoryPrefix"]
    assert (prefix.min_length, prefix.max_length, prefix.default) == (2, 512, "data/")
    assert prefix.allowed_pattern.startswith("^[a-zA-Z0-9")
    assert prefix.constraint_description == "must be a relative S3 key prefix ending with a slash, such as data/."
    assert specs["CreateHomeFileSystem"].allowed_values == ("true", "false")


def test_outputs_report_export_and_condition():
    outs = {o.name: o for o in cfn.outputs(cfn.load(path("storage")))}
    assert outs["LustreFileSystemId"] == cfn.OutputSpec(
        name="LustreFileSystemId", description="FSx for Lustre file system id.", exported=True, condition=None
    )
    assert outs["OpenZfsRootVolumeId"].condition == "WantsHome"
    observability = {o.name: o for o in cfn.outputs(cfn.load(path("observability")))}
    assert observability["PrometheusQueryUrl"].exported is False


def test_resources_summary_counts_types():
    assert cfn.resources_summary(cfn.load(path("network"))) == {
        "AWS::EC2::EIP": 1,
        "AWS::EC2::FlowLog": 1,
        "AWS::EC2::InternetGateway": 1,
        "AWS::EC2::NatGateway": 1,
        "AWS::EC2::PlacementGroup": 1,
        "AWS::EC2::Route": 2,
        "AWS::EC2::RouteTable": 2,
        "AWS::EC2::SecurityGroup": 1,
        "AWS::EC2::SecurityGroupEgress": 1,
        "AWS::EC2::SecurityGroupIngress": 1,
        "AWS::EC2::Subnet": 2,
        "AWS::EC2::SubnetRouteTableAssociation": 2,
        "AWS::EC2::VPC": 1,
        "AWS::EC2::VPCEndpoint": 1,
        "AWS::EC2::VPCGatewayAttachment": 1,
        "AWS::IAM::Role": 1,
        "AWS::Logs::LogGroup": 1,
    }
    assert cfn.resources_summary(cfn.load(path("parallelcluster"))) == {
        "AWS::CloudFormation::Stack": 1,
        "Custom::PclusterCluster": 1,
    }


def test_load_reads_every_short_form():
    text = """\
AWSTemplateFormatVersion: 2010-09-09
Conditions:
  A: !Equals [!Ref P, "x"]
  B: !Not [!Condition A]
  C: !And [!Condition A, !Or [!Condition B, !Equals [1, 1]]]
Resources:
  R:
    Type: AWS::S3::Bucket
    Properties:
      A: !Sub "${AWS::StackName}-x"
      B: !GetAtt Res.Outputs.Token
      C: !GetAtt [Res, Arn]
      D: !If [A, !Select [0, !GetAZs ""], !Join [",", !Split ["/", !ImportValue X]]]
      E: !FindInMap [M, K, V]
      F: !Base64 abc
"""
    template = cfn.load(text)
    assert template["AWSTemplateFormatVersion"] == "2010-09-09"
    assert template["Conditions"] == {
        "A": {"Fn::Equals": [{"Ref": "P"}, "x"]},
        "B": {"Fn::Not": [{"Condition": "A"}]},
        "C": {"Fn::And": [{"Condition": "A"}, {"Fn::Or": [{"Condition": "B"}, {"Fn::Equals": [1, 1]}]}]},
    }
    assert template["Resources"]["R"]["Properties"] == {
        "A": {"Fn::Sub": "${AWS::StackName}-x"},
        "B": {"Fn::GetAtt": ["Res", "Outputs.Token"]},
        "C": {"Fn::GetAtt": ["Res", "Arn"]},
        "D": {"Fn::If": [
            "A",
            {"Fn::Select": [0, {"Fn::GetAZs": ""}]},
            {"Fn::Join": [",", {"Fn::Split": ["/", {"Fn::ImportValue": "X"}]}]},
        ]},
        "E": {"Fn::FindInMap": ["M", "K", "V"]},
        "F": {"Fn::Base64": "abc"},
    }


def test_load_rejects_unknown_tags_and_non_mappings():
    with pytest.raises(Exception, match="unknown CloudFormation tag !Python"):
        cfn.load("Resources: !Python x\n")
    with pytest.raises(TypeError):
        cfn.load("- just\n- a list\n")


def _pcluster_specs():
    return cfn.parameters(cfn.load(path("parallelcluster")))


GOOD_PCLUSTER_VALUES = {
    "ClusterName": "llm-train",
    "PublicSubnetId": "subnet-0123456789abcdef0",
    "PrivateSubnetId": "subnet-0123456789abcdef1",
    "SecurityGroupId": "sg-0123456789abcdef0",
    "PlacementGroupName": "net-ClusterPlacementGroup-ABC",
    "LustreFileSystemId": "fs-0123456789abcdef0",
    "BucketName": "sagemaker-geniac-0123",
    "ComputeMaxCount": 4,
}


def test_validate_parameters_accepts_good_values_and_defaults():
    assert cfn.validate_parameters(_pcluster_specs(), GOOD_PCLUSTER_VALUES) == {}


def test_validate_parameters_reports_each_problem():
    values = {
        **GOOD_PCLUSTER_VALUES,
        "ClusterName": "9lives",
        "Os": "centos7",
        "ComputeMaxCount": "four",
        "ComputeMinCount": -1,
        "CapacityReservationId": "cr-123",
        "PublicSubnetId": "sub-123",
        "Surprise": "x",
    }
    del values["LustreFileSystemId"]
    assert cfn.validate_parameters(_pcluster_specs(), values) == {
        "Surprise": "is not a parameter of this template",
        "ClusterName": "starts with a letter; letters, digits and hyphens; at most 60 characters.",
        "Os": "'centos7' is not one of alinux2023, ubuntu2204",
        "ComputeMinCount": "-1 is below the minimum 0",
        "ComputeMaxCount": "'four' is not a number",
        "CapacityReservationId": "must be empty or a reservation id such as cr-0123456789abcdef0.",
        "PublicSubnetId": "'sub-123' is not a subnet id such as subnet-0123456789abcdef0",
        "LustreFileSystemId": "is required",
    }


def test_validate_parameters_checks_numbers_lengths_and_lists():
    specs = [
        cfn.ParameterSpec(name="Throughput", type="Number", allowed_values=("125", "250")),
        cfn.ParameterSpec(name="Count", type="Number", max_value=256, default="2"),
        cfn.ParameterSpec(name="Name", type="String", min_length=3, max_length=5, default="abc"),
        cfn.ParameterSpec(name="Ports", type="List<Number>", default="80"),
        cfn.ParameterSpec(name="Zones", type="CommaDelimitedList", allowed_values=("a", "b"), default="a"),
        cfn.ParameterSpec(name="Zone", type="AWS::EC2::AvailabilityZone::Name", default="ap-northeast-1a"),
        cfn.ParameterSpec(name="Vpc", type="AWS::EC2::VPC::Id", default="vpc-01234567"),
        cfn.ParameterSpec(name="Groups", type="List<AWS::EC2::SecurityGroup::Id>", default="sg-01234567"),
    ]
    assert cfn.validate_parameters(specs, {"Throughput": 250.0}) == {}
    assert cfn.validate_parameters(specs, {
        "Throughput": 300, "Count": 257, "Name": "toolong", "Ports": "80,x", "Zones": "a,c",
        "Zone": "tokyo", "Vpc": "vpc-XYZ", "Groups": ["sg-01234567", "sg-zz"],
    }) == {
        "Throughput": "300 is not one of 125, 250",
        "Count": "257 is above the maximum 256",
        "Name": "is longer than 5 characters",
        "Ports": "'x' is not a number",
        "Zones": "'c' is not one of a, b",
        "Zone": "'tokyo' is not an availability zone name such as ap-northeast-1a",
        "Vpc": "'vpc-XYZ' is not a VPC id such as vpc-0123456789abcdef0",
        "Groups": "'sg-zz' is not a security group id such as sg-0123456789abcdef0",
    }
    assert cfn.validate_parameters(specs, {"Throughput": "125", "Name": "ab"}) == {
        "Name": "is shorter than 3 characters",
    }
