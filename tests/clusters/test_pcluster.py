"""ParallelCluster configurations for reserved accelerated capacity."""

import pytest
import yaml

from clusters.blueprints import pcluster_spec

SUBNET = "subnet-0123456789abcdef0"
GROUP = "sg-0123456789abcdef0"


def _spec(*queues, **overrides):
    values = {
        "region": "ap-northeast-1",
        "subnet_id": SUBNET,
        "security_group_id": GROUP,
        "queues": tuple(queues),
        "lustre_file_system_id": "fs-0123456789abcdef0",
    }
    values.update(overrides)
    return pcluster_spec.ClusterSpec(**values)


def _queues(config_text):
    return yaml.safe_load(config_text)["Scheduling"]["SlurmQueues"]


def test_p5_queue_on_a_capacity_reservation():
    queue = pcluster_spec.Queue(
        name="train", instance_type="p5.48xlarge", min_count=0, max_count=4,
        placement_group="net-ClusterPlacementGroup-ABC", capacity_reservation_id="cr-0123456789abcdef0",
    )
    text = pcluster_spec.generate(_spec(queue))
    # Targeted ODCR: no placement group forced onto it; SMT left on as in the reference; NVMe at /scratch.
    assert _queues(text) == [{
        "Name": "train",
        "CapacityType": "ONDEMAND",
        "HealthChecks": {"Gpu": {"Enabled": True}},
        "Networking": {"SubnetIds": [SUBNET], "AdditionalSecurityGroups": [GROUP], "PlacementGroup": {"Enabled": False}},
        "ComputeSettings": {"LocalStorage": {"RootVolume": {"Size": 512}, "EphemeralVolume": {"MountDir": "/scratch"}}},
        "ComputeResources": [{
            "Name": "p5-nodes",
            "InstanceType": "p5.48xlarge",
            "MinCount": 0,
            "MaxCount": 4,
            "Efa": {"Enabled": True},
            "HealthChecks": {"Gpu": {"Enabled": True}},
            "CapacityReservationTarget": {"CapacityReservationId": "cr-0123456789abcdef0"},
        }],
    }]
    assert pcluster_spec.validate(text) == []


def test_on_demand_queue_uses_the_placement_group():
    queue = pcluster_spec.Queue(name="train", instance_type="p5.48xlarge", max_count=4,
                           placement_group="net-ClusterPlacementGroup-ABC", disable_smt=True)
    (generated,) = _queues(pcluster_spec.generate(_spec(queue)))
    assert generated["Networking"]["PlacementGroup"] == {"Enabled": True, "Name": "net-ClusterPlacementGroup-ABC"}
    assert generated["ComputeResources"][0]["DisableSimultaneousMultithreading"] is True


def test_validate_refuses_a_placement_group_on_a_reservation_and_gpu_checks_on_trainium():
    config = yaml.safe_load(pcluster_spec.generate(_spec(pcluster_spec.Queue(
        name="train", instance_type="trn1.32xlarge", max_count=2, capacity_reservation_id="cr-0123456789abcdef0"))))
    queue = config["Scheduling"]["SlurmQueues"][0]
    assert pcluster_spec.validate(config) == []
    queue["Networking"]["PlacementGroup"] = {"Enabled": True}
    queue["HealthChecks"] = {"Gpu": {"Enabled": True}}
    assert pcluster_spec.validate(config) == [
        "Scheduling.SlurmQueues[0].ComputeResources[0]: trn1.32xlarge has no GPUs; HealthChecks.Gpu must be off",
        "Scheduling.SlurmQueues[0].ComputeResources[0]: no placement group on a targeted reservation or capacity block "
        "(it can fail with insufficient capacity while the reservation has room)",
    ]


def test_p5_queue_on_a_capacity_block_runs_every_node_statically():
    queue = pcluster_spec.Queue(
        name="block", instance_type="p5.48xlarge", min_count=0, max_count=2,
        capacity_reservation_id="cr-0123456789abcdef1", capacity_block=True,
    )
    (generated,) = _queues(pcluster_spec.generate(_spec(queue)))
    assert generated["CapacityType"] == "CAPACITY_BLOCK"
    resource = generated["ComputeResources"][0]
    assert (resource["MinCount"], resource["MaxCount"]) == (2, 2)
    assert resource["CapacityReservationTarget"] == {"CapacityReservationId": "cr-0123456789abcdef1"}
    assert resource["Efa"] == {"Enabled": True}
    assert generated["Networking"]["PlacementGroup"] == {"Enabled": False}


def test_trn1_queue_gets_efa_but_no_gpu_health_checks_and_plain_queue_gets_neither():
    trn1 = pcluster_spec.Queue(name="neuron", instance_type="trn1.32xlarge", max_count=8)
    cpu = pcluster_spec.Queue(name="cpu", instance_type="c6i.32xlarge", max_count=2)
    neuron, plain = _queues(pcluster_spec.generate(_spec(trn1, cpu)))
    assert neuron["ComputeResources"][0]["Efa"] == {"Enabled": True}
    assert "HealthChecks" not in neuron["ComputeResources"][0] and "HealthChecks" not in neuron
    assert neuron["Networking"]["PlacementGroup"] == {"Enabled": True}
    assert plain["ComputeResources"][0] == {"Name": "c6i-nodes", "InstanceType": "c6i.32xlarge", "MinCount": 0, "MaxCount": 2}
    assert "HealthChecks" not in plain and "PlacementGroup" not in plain["Networking"]


def test_cluster_level_sections():
    actions = pcluster_spec.CustomActions(on_node_configured="s3://bucket/setup.sh", args=("--efa",))
    queue = pcluster_spec.Queue(name="train", instance_type="p5.48xlarge", max_count=1, subnet_id="subnet-0aaaaaaaaaaaaaaaa")
    config = yaml.safe_load(pcluster_spec.generate(_spec(
        queue, os="ubuntu2204", key_name="ops", openzfs_volume_id="fsvol-0123456789abcdef0",
        custom_actions=actions, tags={"geniac:organization": "org-1"}, dashboards=False, custom_ami="ami-0123456789abcdef0",
    )))
    assert config["Region"] == "ap-northeast-1"
    assert config["Imds"] == {"ImdsSupport": "v2.0"}
    assert config["Image"] == {"Os": "ubuntu2204", "CustomAmi": "ami-0123456789abcdef0"}
    assert config["HeadNode"] == {
        "InstanceType": "m5.8xlarge",
        "Networking": {"SubnetId": SUBNET, "AdditionalSecurityGroups": [GROUP]},
        "Ssh": {"KeyName": "ops"},
        "LocalStorage": {"RootVolume": {"Size": 200}},
        "CustomActions": {"OnNodeConfigured": {"Script": "s3://bucket/setup.sh", "Args": ["--efa"]}},
    }
    assert config["Scheduling"]["SlurmQueues"][0]["Networking"]["SubnetIds"] == ["subnet-0aaaaaaaaaaaaaaaa"]
    assert config["SharedStorage"] == [
        {"Name": "fsx", "MountDir": "/fsx", "StorageType": "FsxLustre",
         "FsxLustreSettings": {"FileSystemId": "fs-0123456789abcdef0"}},
        {"Name": "home", "MountDir": "/home", "StorageType": "FsxOpenZfs",
         "FsxOpenZfsSettings": {"VolumeId": "fsvol-0123456789abcdef0"}},
    ]
    assert config["Monitoring"] == {
        "DetailedMonitoring": True,
        "Logs": {"CloudWatch": {"Enabled": True, "RetentionInDays": 30}},
        "Dashboards": {"CloudWatch": {"Enabled": False}},
    }
    assert config["Tags"] == [{"Key": "geniac:organization", "Value": "org-1"}]


def test_key_pair_and_storage_are_optional():
    queue = pcluster_spec.Queue(name="train", instance_type="p5.48xlarge", max_count=1)
    config = yaml.safe_load(pcluster_spec.generate(_spec(queue, key_name=None, lustre_file_system_id=None)))
    assert "Ssh" not in config["HeadNode"]
    assert "SharedStorage" not in config
    assert config["HeadNode"]["LocalStorage"] == {"RootVolume": {"Size": 500}}  # /home lives on the head node
    assert pcluster_spec.validate(config) == []


def test_build_refuses_unknown_os_and_empty_queues():
    queue = pcluster_spec.Queue(name="train", instance_type="p5.48xlarge")
    with pytest.raises(ValueError, match="unsupported OS 'centos7'"):
        pcluster_spec.build(_spec(queue, os="centos7"))
    with pytest.raises(ValueError, match="at least one queue"):
        pcluster_spec.build(_spec())


def _valid_config():
    queue = pcluster_spec.Queue(
        name="block", instance_type="p5.48xlarge", max_count=2,
        capacity_reservation_id="cr-0123456789abcdef1", capacity_block=True,
    )
    return pcluster_spec.build(_spec(queue))


def test_validate_finds_capacity_block_and_efa_mistakes():
    config = _valid_config()
    resource = config["Scheduling"]["SlurmQueues"][0]["ComputeResources"][0]
    resource["MinCount"] = 1
    del resource["CapacityReservationTarget"]
    del resource["Efa"]
    del resource["HealthChecks"]
    del config["Scheduling"]["SlurmQueues"][0]["HealthChecks"]
    where = "Scheduling.SlurmQueues[0].ComputeResources[0]"
    assert pcluster_spec.validate(yaml.safe_dump(config)) == [
        f"{where}: CAPACITY_BLOCK needs CapacityReservationTarget.CapacityReservationId",
        f"{where}: with CAPACITY_BLOCK MinCount must equal MaxCount and be above 0",
        f"{where}: p5.48xlarge needs Efa.Enabled: true",
        f"{where}: p5.48xlarge needs HealthChecks.Gpu.Enabled: true",
    ]


def test_validate_finds_structural_mistakes():
    config = _valid_config()
    config["Image"]["Os"] = "centos7"
    del config["HeadNode"]["Networking"]["SubnetId"]
    config["Scheduling"]["SlurmQueues"].append(dict(config["Scheduling"]["SlurmQueues"][0], Name="Bad_Name"))
    config["Scheduling"]["SlurmQueues"][1]["ComputeResources"] = [{"Name": "x", "InstanceType": "c5.large", "MinCount": 3, "MaxCount": 2}]
    config["Scheduling"]["SlurmQueues"][1]["CapacityType"] = "ONDEMAND"
    config["SharedStorage"].append({"Name": "again", "MountDir": "/fsx", "StorageType": "FsxOpenZfs"})
    assert pcluster_spec.validate(config) == [
        "Image.Os: one of alinux2023, ubuntu2204",
        "HeadNode.Networking.SubnetId: required",
        "Scheduling.SlurmQueues[1].Name: lowercase letters, digits and hyphens, at most 25 characters",
        "Scheduling.SlurmQueues[1].ComputeResources[0]: MinCount 3 is above MaxCount 2",
        "SharedStorage: mount directories must be unique",
        "SharedStorage[1]: FsxOpenZfsSettings.VolumeId is required",
    ]


def test_validate_handles_text_that_is_not_a_configuration():
    assert pcluster_spec.validate("Region: [unclosed")[0].startswith("not valid YAML")
    assert pcluster_spec.validate("- a\n- b\n") == ["the configuration must be a mapping"]


def test_validate_accepts_numbers_given_as_text_by_cloudformation():
    config = _valid_config()
    resource = config["Scheduling"]["SlurmQueues"][0]["ComputeResources"][0]
    resource["MinCount"], resource["MaxCount"] = "2", "2"
    resource["Efa"]["Enabled"] = "true"
    assert pcluster_spec.validate(config) == []
