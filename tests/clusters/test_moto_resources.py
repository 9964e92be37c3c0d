"""Every blueprint launches end to end against the embedded endpoint, and deletes cleanly."""

import json
import re

import boto3
import pytest
from botocore.exceptions import ClientError
from moto.cloudformation import parsing

from clusters.blueprints import path
from clusters.software import release
from sandbox.aws import moto_install
from sandbox.aws.embedded import reset, start_server

REGION = "ap-northeast-1"
AZ = "ap-northeast-1a"


@pytest.fixture(scope="session")
def endpoint(request):
    """The session's embedded endpoint: the project's shared one when its conftest is loaded."""
    try:
        yield request.getfixturevalue("aws_server")
        return
    except pytest.FixtureLookupError:
        pass
    server, url = start_server()
    yield url
    server.stop()


@pytest.fixture
def aws(endpoint):
    reset(endpoint)

    def client(service):
        return boto3.client(
            service, endpoint_url=endpoint, region_name=REGION,
            aws_access_key_id="testing", aws_secret_access_key="testing",
        )

    return client


def _launch(cf, name, slug, **parameters):
    cf.create_stack(
        StackName=name,
        TemplateBody=path(slug).read_text(),
        Parameters=[{"ParameterKey": k, "ParameterValue": str(v)} for k, v in parameters.items()],
        Tags=[{"Key": "geniac:launch", "Value": name}],
    )
    stack = cf.describe_stacks(StackName=name)["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def _delete(cf, *names):
    for name in names:
        stack_id = cf.describe_stacks(StackName=name)["Stacks"][0]["StackId"]
        cf.delete_stack(StackName=name)
        assert cf.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"


def _upload(aws, orchestrator, bucket, **inputs):
    """What the pipeline does before a cluster stack: the software stack into the storage bucket."""
    release.upload(aws("s3"), bucket, release.bundle(orchestrator, inputs, region=REGION))


def _network_and_storage(cf, **storage):
    net = _launch(cf, "net", "network", AvailabilityZone=AZ)
    sto = _launch(cf, "sto", "storage", PrivateSubnetId=net["PrivateSubnetId"], SecurityGroupId=net["SecurityGroupId"], **storage)
    return net, sto


def test_install_is_idempotent_and_registers_every_type():
    moto_install.install()
    moto_install.install()
    for resource_type in (
        "AWS::EC2::SecurityGroupEgress", "AWS::EC2::PlacementGroup", "AWS::FSx::FileSystem",
        "AWS::FSx::DataRepositoryAssociation", "AWS::SageMaker::Cluster", "AWS::APS::Workspace",
        "AWS::Grafana::Workspace",
    ):
        assert parsing.resource_class_from_type(resource_type).cloudformation_type() == resource_type
    assert parsing.resource_class_from_type("Custom::PclusterCluster").__name__ == "PclusterCluster"
    assert parsing.resource_class_from_type("Custom::Other").__name__ == "CustomModel"


def test_network_outputs_and_efa_security_group(aws):
    cf, ec2 = aws("cloudformation"), aws("ec2")
    net = _launch(cf, "net", "network", AvailabilityZone=AZ)
    assert set(net) == {"VpcId", "PublicSubnetId", "PrivateSubnetId", "SecurityGroupId", "PlacementGroupName", "AvailabilityZone"}
    assert net["AvailabilityZone"] == AZ
    assert re.fullmatch(r"net-ClusterPlacementGroup-[A-Z0-9]+", net["PlacementGroupName"])
    subnets = {s["SubnetId"]: s for s in ec2.describe_subnets(SubnetIds=[net["PublicSubnetId"], net["PrivateSubnetId"]])["Subnets"]}
    assert {(s["CidrBlock"], s["AvailabilityZone"], s["MapPublicIpOnLaunch"]) for s in subnets.values()} == {
        ("10.0.0.0/24", AZ, True), ("10.0.128.0/17", AZ, False),
    }
    group = ec2.describe_security_groups(GroupIds=[net["SecurityGroupId"]])["SecurityGroups"][0]
    for rules in (group["IpPermissions"], group["IpPermissionsEgress"]):
        assert any(
            r["IpProtocol"] == "-1" and {"GroupId": net["SecurityGroupId"]}.items() <= r["UserIdGroupPairs"][0].items()
            for r in rules if r["UserIdGroupPairs"]
        )
    exports = {e["Name"]: e["Value"] for e in cf.list_exports()["Exports"]}
    assert exports["net-SecurityGroupId"] == net["SecurityGroupId"]
    _delete(cf, "net")
    assert [(v["CidrBlock"], v.get("Tags")) for v in ec2.describe_vpcs()["Vpcs"] if not v["IsDefault"]] == []


def test_network_storage_parallelcluster_chain(aws):
    cf, fsx, ec2 = aws("cloudformation"), aws("fsx"), aws("ec2")
    net, sto = _network_and_storage(cf, CreateHomeFileSystem="true", LustreStorageCapacity=2400, LustreThroughputPerTiB=500)
    assert set(sto) == {
        "BucketName", "AccessLogBucketName", "LustreFileSystemId", "LustreDnsName", "LustreMountName",
        "LustreEfaEnabled", "DataRepositoryAssociationId", "OpenZfsFileSystemId", "OpenZfsRootVolumeId",
    }
    # The reference's settings and checkov's: versioned, access-logged data bucket; the network's flow log.
    s3 = aws("s3")
    assert s3.get_bucket_versioning(Bucket=sto["BucketName"])["Status"] == "Enabled"
    logging = s3.get_bucket_logging(Bucket=sto["BucketName"])["LoggingEnabled"]
    assert (logging["TargetBucket"], logging["TargetPrefix"]) == (sto["AccessLogBucketName"], "data-bucket/")
    policy = json.loads(s3.get_bucket_policy(Bucket=sto["AccessLogBucketName"])["Policy"])
    assert policy["Statement"][0]["Principal"] == {"Service": "logging.s3.amazonaws.com"}
    flow = ec2.describe_flow_logs(Filters=[{"Name": "resource-id", "Values": [net["VpcId"]]}])["FlowLogs"]
    assert [(f["TrafficType"], f["LogDestinationType"]) for f in flow] == [("ALL", "cloud-watch-logs")]
    lustre = fsx.describe_file_systems(FileSystemIds=[sto["LustreFileSystemId"]])["FileSystems"][0]
    assert (lustre["FileSystemType"], lustre["StorageType"], lustre["StorageCapacity"]) == ("LUSTRE", "SSD", 2400)
    assert lustre["SubnetIds"] == [net["PrivateSubnetId"]]
    assert lustre["LustreConfiguration"] == {
        "DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 500, "DataCompressionType": "LZ4",
        "MetadataConfiguration": {"Mode": "AUTOMATIC"}, "MountName": sto["LustreMountName"],
    }
    assert sto["LustreDnsName"] == f"{sto['LustreFileSystemId']}.fsx.{REGION}.amazonaws.com"
    assert re.fullmatch(r"dra-[0-9a-f]{17}", sto["DataRepositoryAssociationId"])
    home = fsx.describe_file_systems(FileSystemIds=[sto["OpenZfsFileSystemId"]])["FileSystems"][0]
    assert home["OpenZFSConfiguration"]["RootVolumeId"] == sto["OpenZfsRootVolumeId"]
    zfs = home["OpenZFSConfiguration"]
    assert (zfs["DeploymentType"], zfs["AutomaticBackupRetentionDays"], zfs["CopyTagsToVolumes"]) == ("SINGLE_AZ_1", 30, True)
    # The root volume's settings belong to the volume, as AWS answers them, not to the file system's description.
    assert "RootVolumeConfiguration" not in zfs

    assert re.fullmatch(r"sagemaker-geniac-[0-9a-f-]{36}", sto["BucketName"])
    _upload(aws, "parallelcluster", sto["BucketName"], ClusterName="llm-train")
    pc = _launch(
        cf, "pc", "parallelcluster", ClusterName="llm-train", PublicSubnetId=net["PublicSubnetId"],
        PrivateSubnetId=net["PrivateSubnetId"], SecurityGroupId=net["SecurityGroupId"],
        PlacementGroupName=net["PlacementGroupName"], LustreFileSystemId=sto["LustreFileSystemId"],
        OpenZfsRootVolumeId=sto["OpenZfsRootVolumeId"], CapacityReservationId="cr-0123456789abcdef0",
        ComputeMaxCount=4, BucketName=sto["BucketName"],
    )
    assert pc["ClusterName"] == "llm-train"
    assert pc["ValidationMessages"] == "[]"
    head = ec2.describe_instances(InstanceIds=[pc["HeadNodeInstanceId"]])["Reservations"][0]["Instances"][0]
    assert (head["PublicIpAddress"], head["PrivateIpAddress"]) == (pc["HeadNodeIp"], pc["HeadNodePrivateIp"])
    assert (head["SubnetId"], head["InstanceType"], head["State"]["Name"]) == (net["PublicSubnetId"], "m5.8xlarge", "running")
    cluster_stack = cf.describe_stacks(StackName="llm-train")["Stacks"][0]
    assert cluster_stack["StackId"] == pc["ClusterStackArn"]
    assert {"Key": "parallelcluster:version", "Value": "3.13.1"} in cluster_stack["Tags"]
    log_groups = [g["logGroupName"] for g in aws("logs").describe_log_groups()["logGroups"]]
    assert "/aws/parallelcluster/llm-train" in log_groups
    assert any(re.fullmatch(r"/aws/lambda/pcluster-cfn-[0-9a-f-]{36}", g) for g in log_groups)

    _delete(cf, "pc", "sto", "net")
    # the scratch Lustre goes with the stack (LustreDeletionPolicy's default); the home file system is kept
    assert [f["FileSystemId"] for f in fsx.describe_file_systems()["FileSystems"]] == [sto["OpenZfsFileSystemId"]]
    head = ec2.describe_instances(InstanceIds=[pc["HeadNodeInstanceId"]])["Reservations"][0]["Instances"][0]
    assert head["State"]["Name"] == "terminated"
    assert cf.describe_stacks(StackName=cluster_stack["StackId"])["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"


def test_parallelcluster_refuses_a_configuration_parallelcluster_would_refuse(aws):
    cf = aws("cloudformation")
    net, sto = _network_and_storage(cf)
    common = dict(ClusterName="llm-train", PublicSubnetId=net["PublicSubnetId"], PrivateSubnetId=net["PrivateSubnetId"],
                  SecurityGroupId=net["SecurityGroupId"], PlacementGroupName=net["PlacementGroupName"],
                  LustreFileSystemId=sto["LustreFileSystemId"], BucketName=sto["BucketName"])
    # Custom actions that were never uploaded: ParallelCluster's URL validator refuses the cluster.
    with pytest.raises(ClientError, match=r"s3://sagemaker-geniac-[0-9a-f-]+/geniac/llm-train/software/install_efa.sh does not exist"):
        _launch(cf, "pc0", "parallelcluster", **common)
    _upload(aws, "parallelcluster", sto["BucketName"], ClusterName="llm-train")
    with pytest.raises(ClientError, match="MinCount 3 is above MaxCount 2"):
        _launch(cf, "pc", "parallelcluster", ComputeMinCount=3, ComputeMaxCount=2, **common)


def test_storage_without_home_and_with_an_invalid_lustre_size(aws):
    cf = aws("cloudformation")
    net, sto = _network_and_storage(cf)
    assert "OpenZfsRootVolumeId" not in sto and "OpenZfsFileSystemId" not in sto
    template = path("storage").read_text().replace("AllowedValues: [1200, 2400,", "AllowedValues: [1300, 1200, 2400,")
    with pytest.raises(ClientError, match="1200 GiB or a multiple of 2400 GiB"):
        cf.create_stack(StackName="bad", TemplateBody=template, Parameters=[
            {"ParameterKey": "PrivateSubnetId", "ParameterValue": net["PrivateSubnetId"]},
            {"ParameterKey": "SecurityGroupId", "ParameterValue": net["SecurityGroupId"]},
            {"ParameterKey": "LustreStorageCapacity", "ParameterValue": "1300"},
        ])


def test_network_storage_hyperpod_chain(aws):
    cf, sagemaker = aws("cloudformation"), aws("sagemaker")
    net, sto = _network_and_storage(cf)
    inputs = dict(ClusterName="hp-train", PrivateSubnetId=net["PrivateSubnetId"], SecurityGroupId=net["SecurityGroupId"],
                  WorkerInstanceType="ml.trn1.32xlarge", WorkerCount=4, BucketName=sto["BucketName"],
                  LustreDnsName=sto["LustreDnsName"], LustreMountName=sto["LustreMountName"])
    # HyperPod runs OnCreate from the bucket: without the scripts there the cluster is refused.
    with pytest.raises(ClientError, match=r"lifecycle script s3://.+/geniac/hp-train/lifecycle/on_create.sh was not found"):
        _launch(cf, "hp0", "hyperpod", **inputs)
    _upload(aws, "hyperpod", sto["BucketName"], **inputs)
    hp = _launch(cf, "hp", "hyperpod", **inputs)
    # SageMaker's cluster ARN ends with the cluster's 12-character id, not its name.
    assert re.fullmatch(rf"arn:aws:sagemaker:{REGION}:123456789012:cluster/[a-z0-9]{{12}}", hp["ClusterArn"])
    assert hp["ClusterName"] == "hp-train"
    assert hp["LifecycleScriptsUri"] == f"s3://{sto['BucketName']}/geniac/hp-train/lifecycle/"
    listed = aws("s3").list_objects_v2(Bucket=sto["BucketName"], Prefix="geniac/hp-train/lifecycle/")["Contents"]
    assert {"on_create.sh", "provisioning_parameters.json", "stack.env"} <= {o["Key"].rsplit("/", 1)[1] for o in listed}
    cluster = sagemaker.describe_cluster(ClusterName="hp-train")
    assert cluster["ClusterStatus"] == "InService"
    assert cluster["VpcConfig"] == {"SecurityGroupIds": [net["SecurityGroupId"]], "Subnets": [net["PrivateSubnetId"]]}
    groups = {g["InstanceGroupName"]: g for g in cluster["InstanceGroups"]}
    assert {n: (g["InstanceType"], g["CurrentCount"], g["ThreadsPerCore"]) for n, g in groups.items()} == {
        "controller-machine": ("ml.m5.12xlarge", 1, 2),
        "worker-group-1": ("ml.trn1.32xlarge", 4, 1),
    }
    assert groups["worker-group-1"]["ExecutionRole"] == hp["ExecutionRoleArn"]
    assert groups["worker-group-1"]["LifeCycleConfig"] == {"SourceS3Uri": hp["LifecycleScriptsUri"], "OnCreate": "on_create.sh"}
    assert groups["worker-group-1"]["InstanceStorageConfigs"] == [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]
    assert len(sagemaker.list_cluster_nodes(ClusterName="hp-train")["ClusterNodeSummaries"]) == 5
    _delete(cf, "hp", "sto", "net")
    assert sagemaker.list_clusters()["ClusterSummaries"] == []


def test_observability(aws):
    cf, amp = aws("cloudformation"), aws("amp")
    obs = _launch(cf, "obs", "observability", WorkspaceAlias="geniac-demo")
    workspace_id = obs["PrometheusWorkspaceId"]
    workspace = amp.describe_workspace(workspaceId=workspace_id)["workspace"]
    assert (workspace["alias"], workspace["arn"]) == ("geniac-demo", obs["PrometheusWorkspaceArn"])
    assert obs["PrometheusEndpoint"] == f"https://aps-workspaces.{REGION}.amazonaws.com/workspaces/{workspace_id}/"
    assert obs["PrometheusQueryUrl"] == obs["PrometheusEndpoint"] + "api/v1/query"
    assert re.fullmatch(r"g-[0-9a-f]{10}", obs["GrafanaWorkspaceId"])
    assert obs["GrafanaEndpoint"] == f"https://{obs['GrafanaWorkspaceId']}.grafana-workspace.{REGION}.amazonaws.com"
    _delete(cf, "obs")
    assert amp.list_workspaces()["workspaces"] == []


def test_reset_forgets_stacks(aws, endpoint):
    cf = aws("cloudformation")
    _launch(cf, "obs", "observability")
    reset(endpoint)
    assert cf.list_stacks()["StackSummaries"] == []
    assert json.loads(json.dumps(cf.list_exports()))["Exports"] == []


def test_emulated_reservations_placement_groups_fsx_volumes_and_managed_policies(aws):
    from sandbox.aws import moto_ec2

    cf, ec2, fsx, iam = aws("cloudformation"), aws("ec2"), aws("fsx"), aws("iam")
    odcr = ec2.create_capacity_reservation(InstanceType="p5.48xlarge", InstancePlatform="Linux/UNIX",
                                           AvailabilityZone=AZ, InstanceCount=4)["CapacityReservation"]
    block_id = moto_ec2.add_capacity_block("123456789012", REGION, instance_type="p5.48xlarge",
                                           availability_zone="ap-northeast-1c", count=2)
    described = {r["CapacityReservationId"]: r for r in ec2.describe_capacity_reservations(
        CapacityReservationIds=[odcr["CapacityReservationId"], block_id])["CapacityReservations"]}
    assert described[block_id]["ReservationType"] == "capacity-block"
    ours = described[odcr["CapacityReservationId"]]
    assert (ours["AvailabilityZone"], ours["TotalInstanceCount"], ours["ReservationType"]) == (AZ, 4, "default")
    with pytest.raises(ClientError, match="InvalidCapacityReservationId.NotFound"):
        ec2.describe_capacity_reservations(CapacityReservationIds=["cr-0000000000000000f"])

    net, sto = _network_and_storage(cf, CreateHomeFileSystem="true")
    group = ec2.describe_placement_groups(GroupNames=[net["PlacementGroupName"]])["PlacementGroups"][0]
    assert (group["GroupName"], group["Strategy"], group["State"]) == (net["PlacementGroupName"], "cluster", "available")
    lustre = fsx.describe_file_systems(FileSystemIds=[sto["LustreFileSystemId"]])["FileSystems"][0]
    assert re.fullmatch(r"fs-[0-9a-f]{17}", lustre["FileSystemId"])
    assert lustre["DNSName"] == sto["LustreDnsName"] == f"{lustre['FileSystemId']}.fsx.{REGION}.amazonaws.com"
    eni = ec2.describe_network_interfaces(NetworkInterfaceIds=lustre["NetworkInterfaceIds"])["NetworkInterfaces"][0]
    assert (eni["SubnetId"], eni["VpcId"], [g["GroupId"] for g in eni["Groups"]]) == (
        net["PrivateSubnetId"], lustre["VpcId"], [net["SecurityGroupId"]])
    volume = fsx.describe_volumes(VolumeIds=[sto["OpenZfsRootVolumeId"]])["Volumes"][0]
    assert (volume["FileSystemId"], volume["VolumeType"]) == (sto["OpenZfsFileSystemId"], "OPENZFS")
    assert volume["OpenZFSConfiguration"]["DataCompressionType"] == "LZ4"
    assert volume["OpenZFSConfiguration"]["NfsExports"][0]["ClientConfigurations"][0]["Clients"] == "*"
    policy = iam.get_policy(PolicyArn="arn:aws:iam::aws:policy/AmazonPrometheusRemoteWriteAccess")["Policy"]
    assert policy["PolicyName"] == "AmazonPrometheusRemoteWriteAccess"
    with pytest.raises(ClientError, match="not found"):
        iam.get_policy(PolicyArn="arn:aws:iam::aws:policy/NoSuchPolicy")
    _delete(cf, "sto", "net")
    left = ec2.describe_network_interfaces(Filters=[{"Name": "vpc-id", "Values": [lustre["VpcId"]]}])["NetworkInterfaces"]
    # Lustre's interfaces went with it; only the kept home file system's remain (DeletionPolicy: Retain)
    assert {e["Description"] for e in left if e["Description"].startswith("ENI for FSx")} <= {
        f"ENI for FSx {sto['OpenZfsFileSystemId']}"}
    assert not any(lustre["FileSystemId"] in e["Description"] for e in left)
    with pytest.raises(ClientError, match="InvalidPlacementGroup.Unknown"):
        ec2.describe_placement_groups(GroupNames=[net["PlacementGroupName"]])
