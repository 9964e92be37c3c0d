"""Pages of the workloads app: workload documents (workload.py), quotas and capacity (quota.py). Interaction and
enablement pages are in their own apps (workloads.interactions, workloads.enablement)."""
