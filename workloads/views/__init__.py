"""Pages of the workloads app: workload documents (workload.py), quotas and capacity (quota.py),
enablement (enablement.py). Interaction pages are in workloads.interactions.views."""
