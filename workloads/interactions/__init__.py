"""Support interactions, lessons learned and enablement: a room of the workloads app (its models keep the
``workloads`` label; they are registered through ``workloads.models``)."""
