"""Pages of the workloads app: workload documents (workload.py), quotas and capacity (quota.py)."""
