"""The settings the AWS reference sets, as the blueprints and the configuration library produce them."""
from __future__ import annotations

import copy
import json

import pytest
from pcluster.validators.slurm_settings_validator import (
    SLURM_SETTINGS_DENY_LIST,
    CustomSlurmSettingLevel,
    CustomSlurmSettingsValidator,
)

from clusters.blueprints import catalog, cfn_resolve, pcluster_config, pcluster_spec
from clusters.health.alerts import dashboards
from portal.engagement import grafana

OUTPUTS = {"PublicSubnetId": "subnet-0123456789abcdef0", "PrivateSubnetId": "subnet-0123456789abcdef1",
           "SecurityGroupId": "sg-0123456789abcdef0", "PlacementGroupName": "pg-a", "BucketName": "sagemaker-b1",
           "LustreFileSystemId": "fs-0123456789abcdef0"}
DATABASE = {"AccountingDatabaseUri": "slurmdb.internal:3306", "AccountingDatabaseUserName": "slurm",
            "AccountingDatabasePasswordSecretArn": "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:db-AbCdEf"}


def test_slurm_accounting_and_scaledown_as_the_reference():
    plain = pcluster_config.build("ap-northeast-1", {"ClusterName": "c1"}, OUTPUTS)["Scheduling"]["SlurmSettings"]
    assert plain["ScaledownIdletime"] == 60
    assert plain["CustomSlurmSettings"] == [{"JobAcctGatherType": "jobacct_gather/linux"},
                                            {"JobCompType": "jobcomp/filetxt"},
                                            {"JobCompLoc": "/home/slurm/slurm-job-completions.txt"}]
    with_db = pcluster_config.build("ap-northeast-1", {"ClusterName": "c1", **DATABASE}, OUTPUTS)["Scheduling"]["SlurmSettings"]
    assert "CustomSlurmSettings" not in with_db and with_db["Database"]["Uri"] == "slurmdb.internal:3306"
    # Why: with a database, ParallelCluster's own validator refuses the gather plugin in CustomSlurmSettings.
    refused = CustomSlurmSettingsValidator().execute(
        custom_settings=plain["CustomSlurmSettings"], deny_list=SLURM_SETTINGS_DENY_LIST["SlurmConf"]["Accounting"],
        settings_level=CustomSlurmSettingLevel.SLURM_CONF)
    assert [f.message for f in refused] == [
        "Using the following custom Slurm settings at SlurmConf level is not allowed: JobAcctGatherType"]
    # The library builds the same.
    spec = pcluster_spec.ClusterSpec(region="ap-northeast-1", subnet_id="subnet-0123456789abcdef0",
                                queues=(pcluster_spec.Queue(name="q", instance_type="p5.48xlarge"),))
    assert pcluster_spec.build(spec)["Scheduling"]["SlurmSettings"] == {
        "ScaledownIdletime": 60, "QueueUpdateStrategy": "DRAIN", "CustomSlurmSettings": plain["CustomSlurmSettings"]}
    with_db_spec = pcluster_spec.ClusterSpec(region="ap-northeast-1", subnet_id="subnet-0123456789abcdef0",
                                        queues=spec.queues, accounting_database=True)
    assert "CustomSlurmSettings" not in pcluster_spec.build(with_db_spec)["Scheduling"]["SlurmSettings"]


def _hyperpod(**values):
    template = catalog.template("hyperpod")
    values = {"ClusterName": "hp1", "PrivateSubnetId": "subnet-0123456789abcdef1", "SecurityGroupId": "sg-0123456789abcdef0",
              "BucketName": "sagemaker-b1", "LustreDnsName": "fs.example", "LustreMountName": "abcdefgh", **values}
    pseudo = {"Region": "ap-northeast-1", "AccountId": "123456789012", "Partition": "aws"}
    cluster = copy.deepcopy(template["Resources"]["Cluster"]["Properties"])
    for group in cluster["InstanceGroups"]:
        group.pop("ExecutionRole")  # a GetAtt of the role: known only once the stack runs
    return {"Cluster": cfn_resolve.resolve(template, cluster, values, pseudo),
            "ExecutionRole": cfn_resolve.resolve(template, template["Resources"]["ExecutionRole"]["Properties"],
                                                 values, pseudo)}


@pytest.mark.parametrize(("values", "checks"), [
    ({}, ["InstanceStress", "InstanceConnectivity"]),  # on by default for new clusters
    ({"DeepHealthChecks": "false"}, None),
    ({"WorkerInstanceType": "ml.trn1.32xlarge"}, None),  # GPU groups only
])
def test_hyperpod_deep_health_checks_on_gpu_workers(values, checks):
    groups = {g["InstanceGroupName"]: g for g in _hyperpod(**values)["Cluster"]["InstanceGroups"]}
    assert groups["worker-group-1"].get("OnStartDeepHealthChecks") == checks
    assert "OnStartDeepHealthChecks" not in groups["controller-machine"]


def test_the_execution_roles_interface_permissions_are_scoped_to_the_clusters_subnet_and_group():
    statements = _hyperpod()["ExecutionRole"]["Policies"][0]["PolicyDocument"]["Statement"]
    scoped = ("ec2:CreateNetworkInterface", "ec2:CreateNetworkInterfacePermission", "ec2:DeleteNetworkInterface",
              "ec2:DeleteNetworkInterfacePermission", "ec2:CreateTags")
    for statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        if set(actions) & set(scoped):
            assert statement["Resource"] != "*", statement
    by_sid = {s.get("Sid"): s for s in statements}
    assert by_sid["InterfacesInTheClustersSubnetAndGroup"]["Resource"] == [
        "arn:aws:ec2:ap-northeast-1:123456789012:subnet/subnet-0123456789abcdef1",
        "arn:aws:ec2:ap-northeast-1:123456789012:security-group/sg-0123456789abcdef0"]
    assert by_sid["TheInterfacesThemselves"]["Condition"] == {
        "ArnEquals": {"ec2:Subnet": "arn:aws:ec2:ap-northeast-1:123456789012:subnet/subnet-0123456789abcdef1"}}
    assert by_sid["TagOnlyInterfacesBeingCreated"]["Condition"] == {
        "StringEquals": {"ec2:CreateAction": "CreateNetworkInterface"}}


def test_dashboards_in_the_repository_are_the_generated_ones_and_the_links_open_them_by_uid():
    for uid in dashboards.TITLES:
        kept = json.loads((dashboards.DIRECTORY / f"{uid}.json").read_text())
        assert kept == dashboards.all_dashboards()[uid], "run python -m clusters.health.alerts.dashboards"
        assert kept["uid"] == uid
    health = dashboards.all_dashboards()[dashboards.GPU_HEALTH]
    assert [p["title"] for p in health["panels"][:6]] == [label for _, label in dashboards.PANELS]
    from clusters.health.models import HealthReport

    assert dashboards.PANELS == HealthReport.PANELS  # the health page's own figures
    assert dict(grafana.DASHBOARDS) == {"GPU health": "geniac-gpu-health", "EFA network": "geniac-efa",
                                        "Nodes": "geniac-nodes"}
