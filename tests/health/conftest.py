"""Fixtures of the health tests."""
import pytest

from tests.health.factories_health import ClusterFactory


@pytest.fixture
def cluster(world):
    """Organization A's ready cluster (a test file that needs another shape defines its own)."""
    return ClusterFactory(organization=world.org_a, name="alpha-train")
