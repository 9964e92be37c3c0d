"""Pages of the workloads app."""
