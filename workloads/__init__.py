"""What each organization is doing: workloads, quotas and capacity, support interactions, enablement."""
