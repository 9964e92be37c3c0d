"""Validation: NCCL and nccom tests run on a cluster through its head node (Slurm names, pairwise sweeps, trends),
and the acceptance gate they feed. The top of the health area."""
