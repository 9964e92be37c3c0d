"""Workloads, quotas and capacity, support interactions, enablement."""
