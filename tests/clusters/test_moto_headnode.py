"""SSM Run Command on the embedded endpoint's emulated head node, through boto3."""

import time

import boto3
import pytest

from sandbox.aws import moto_agent, moto_headnode
from sandbox.aws.moto_headnode import Result, headnode_command
from tests.clusters.test_moto_resources import REGION, _launch, _network_and_storage, _upload


@pytest.fixture
def client(aws_server):
    from sandbox.aws.embedded import reset

    reset(aws_server)

    def make(service):
        return boto3.client(service, endpoint_url=aws_server, region_name=REGION,
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    return make


@pytest.fixture
def seen():
    """A handler for ``geniac-probe`` that records the context it ran with (removed afterwards)."""
    contexts = []

    @headnode_command(r"^geniac-probe\b")
    def probe(context):
        contexts.append(context)
        if "fail" in context.argv:
            return Result(3, "partial\n", "probe failed\n")
        return Result(0, f"probe on {context.instance_id}\n", "", seconds=float(context.argv[-1]) if context.argv[-1][0].isdigit() else 0)

    yield contexts
    moto_headnode._handlers[:] = [(p, h) for p, h in moto_headnode._handlers if h is not probe]


def _send(ssm, target, *commands):
    command_id = ssm.send_command(InstanceIds=[target], DocumentName="AWS-RunShellScript",
                                  Parameters={"commands": list(commands)})["Command"]["CommandId"]
    return command_id, read_invocation(ssm, command_id, target)


def read_invocation(ssm, command_id: str, target: str):
    """The invocation, read as a client of SSM must: right after SendCommand it may not exist yet (the embedded
    endpoint hides it from the first read, as SSM's eventual consistency does)."""
    for _ in range(20):
        try:
            return ssm.get_command_invocation(CommandId=command_id, InstanceId=target)
        except ssm.exceptions.InvocationDoesNotExist:
            time.sleep(0.05)
    return ssm.get_command_invocation(CommandId=command_id, InstanceId=target)


def _parallelcluster(client):
    cf = client("cloudformation")
    net, sto = _network_and_storage(cf)
    _upload(client, "parallelcluster", sto["BucketName"], ClusterName="llm-train")
    return _launch(cf, "pc", "parallelcluster", ClusterName="llm-train", PublicSubnetId=net["PublicSubnetId"],
                   PrivateSubnetId=net["PrivateSubnetId"], SecurityGroupId=net["SecurityGroupId"],
                   PlacementGroupName=net["PlacementGroupName"], LustreFileSystemId=sto["LustreFileSystemId"],
                   CapacityReservationId="cr-0123456789abcdef0", ComputeMaxCount=4, BucketName=sto["BucketName"])


def test_a_handler_sees_the_parallelcluster_head_node_and_its_cluster(client, seen):
    pc = _parallelcluster(client)
    ssm = client("ssm")
    command_id, invocation = _send(ssm, pc["HeadNodeInstanceId"], "geniac-probe --now 0")
    assert (invocation["Status"], invocation["ResponseCode"]) == ("Success", 0)
    assert invocation["StandardOutputContent"] == f"probe on {pc['HeadNodeInstanceId']}\n"
    context = seen[-1]
    assert (context.region, context.account, context.instance_id) == (REGION, "123456789012", pc["HeadNodeInstanceId"])
    assert context.cluster.name == "llm-train" and context.cluster.orchestrator == "parallelcluster"
    # ParallelCluster's Slurm names (<queue>-st-<compute resource>-<n>) on instances named by their addresses
    assert context.cluster.nodes and all("-st-" in n.slurm_name and n.hostname.startswith("ip-10-1-")
                                         for n in context.cluster.nodes)
    assert context.cluster.configuration["HeadNode"]["InstanceType"] == "m5.8xlarge"


def test_unknown_commands_fail_with_127_and_stop_the_script(client, seen):
    ec2 = client("ec2")
    instance = ec2.run_instances(ImageId="ami-760aaa0f", MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
    ssm = client("ssm")
    _, invocation = _send(ssm, instance, "frobnicate --all", "geniac-probe 0")
    assert (invocation["Status"], invocation["ResponseCode"]) == ("Failed", 127)
    assert invocation["StandardErrorContent"] == "bash: line 1: frobnicate: command not found\n"
    assert seen == []  # the script stopped at the failure
    _, invocation = _send(ssm, instance, "geniac-probe fail")
    assert (invocation["Status"], invocation["ResponseCode"]) == ("Failed", 3)
    assert (invocation["StandardOutputContent"], invocation["StandardErrorContent"]) == ("partial\n", "probe failed\n")
    assert seen[-1].cluster is None  # an instance of no cluster


def test_an_emulated_duration_is_in_progress_first(client, seen):
    ec2 = client("ec2")
    instance = ec2.run_instances(ImageId="ami-760aaa0f", MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
    ssm = client("ssm")
    command_id, invocation = _send(ssm, instance, "geniac-probe 1.5")
    assert (invocation["Status"], invocation["ResponseCode"], invocation["StandardOutputContent"]) == ("InProgress", -1, "")
    time.sleep(1.6)
    invocation = read_invocation(ssm, command_id, instance)
    assert (invocation["Status"], invocation["StandardOutputContent"]) == ("Success", f"probe on {instance}\n")


def test_a_hyperpod_controller_is_reached_by_its_agent_on_its_own_cluster_not_by_ssm(client, seen):
    """HyperPod nodes are not SendCommand targets (SSM refuses the Session Manager target, as AWS does); the
    controller's agent runs its commands on its own cluster's emulated Slurm, whose nodes are the ones
    ListClusterNodes names."""
    sagemaker = client("sagemaker")
    arn = sagemaker.create_cluster(ClusterName="hp-train", InstanceGroups=[
        {"InstanceGroupName": "controller-machine", "InstanceType": "ml.m5.12xlarge", "InstanceCount": 1, "ThreadsPerCore": 2,
         "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/x/", "OnCreate": "on_create.sh"},
         "ExecutionRole": "arn:aws:iam::123456789012:role/hp"},
        {"InstanceGroupName": "worker-group-1", "InstanceType": "ml.trn1.32xlarge", "InstanceCount": 2, "ThreadsPerCore": 1,
         "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/x/", "OnCreate": "on_create.sh"},
         "ExecutionRole": "arn:aws:iam::123456789012:role/hp"},
    ])["ClusterArn"]
    nodes = sagemaker.list_cluster_nodes(ClusterName="hp-train")["ClusterNodeSummaries"]
    controller = next(n for n in nodes if n["InstanceGroupName"] == "controller-machine")
    target = f"sagemaker-cluster:{arn.rsplit('/', 1)[-1]}_controller-machine-{controller['InstanceId']}"
    ssm = client("ssm")
    with pytest.raises(ssm.exceptions.ClientError):
        ssm.send_command(InstanceIds=[target], DocumentName="AWS-RunShellScript", Parameters={"commands": ["geniac-probe 0"]})
    assert seen == []
    run = moto_agent.runner("123456789012", REGION, "hp-train")
    assert run(["geniac-probe", "0"], "", 5) == (0, "probe on controller\n", "")
    cluster = seen[-1].cluster
    assert (cluster.name, cluster.orchestrator) == ("hp-train", "hyperpod")
    assert [n.instance_type for n in cluster.nodes] == ["ml.trn1.32xlarge"] * 2
    workers = sorted(n["PrivateDnsHostname"].split(".")[0] for n in nodes if n["InstanceGroupName"] == "worker-group-1")
    assert sorted(n.hostname for n in cluster.nodes) == workers
    status, listing, _ = run(["sinfo", "--Node", "--noheader", "--format=%N %n %o"], "", 5)
    assert status == 0 and sorted(line.split()[1] for line in listing.splitlines()) == workers
    assert moto_agent.runner("123456789012", REGION, "hp-gone")(["sinfo"], "", 5)[0] == 1


