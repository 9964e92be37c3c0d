"""Instance type catalog and XID table."""

import pytest

from clusters.health.readers import xid
from portal.core import instance_types


def test_get_accepts_sagemaker_prefix_and_case():
    p5 = instance_types.get("ml.p5.48xlarge")
    assert p5 is instance_types.get("P5.48xlarge")
    assert (p5.accelerator, p5.gpus, p5.efa_devices, p5.network_gbps, p5.vcpus) == ("H100", 8, 32, 3200, 192)


def test_trainium_has_chips_but_no_gpus():
    trn1 = instance_types.get("trn1.32xlarge")
    assert (trn1.accelerator_count, trn1.gpus, trn1.efa_devices) == (16, 0, 8)
    assert instance_types.get("trn1n.32xlarge").efa_devices == 16


def test_unknown_instance_type_is_a_key_error():
    with pytest.raises(KeyError) as excinfo:
        instance_types.get("p9.96xlarge")
    assert isinstance(excinfo.value, instance_types.UnknownInstanceType)
    assert "p9.96xlarge" in str(excinfo.value)
    assert instance_types.find("p9.96xlarge") is None


def test_choices_cover_required_types():
    names = [name for name, _label in instance_types.choices()]
    for required in ("p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p4d.24xlarge", "p4de.24xlarge",
                     "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "g5.48xlarge", "g6e.48xlarge"):
        assert required in names
    assert dict(instance_types.choices())["p5.48xlarge"] == "p5.48xlarge (8 × H100 80 GB)"


def test_known_xid():
    info = xid.describe(79)
    assert (info.severity, info.consequence, info.known) == (xid.CRITICAL, xid.REBOOT_NODE, True)
    assert "fallen off the bus" in info.meaning
    assert xid.describe(48).consequence == xid.RESET_GPU
    assert xid.describe(13).consequence == xid.RESTART_JOB
    assert xid.describe(63).severity == xid.INFO


def test_unknown_xid_points_to_nvidia_catalog():
    info = xid.describe(999)
    assert info.known is False
    assert "unknown XID 999" in info.meaning and "NVIDIA's XID catalog" in info.meaning
    assert info.to_dict()["code"] == 999
