"""What each organization is doing: workloads, quotas and capacity, support interactions, enablement (the last two
are apps of their own: workloads.interactions, workloads.enablement)."""
