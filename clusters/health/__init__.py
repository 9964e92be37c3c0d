"""Pure-Python parsers for GPU health scrapes and nccl-tests output (no Django here)."""
