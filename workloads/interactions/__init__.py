"""Support interactions and lessons learned: every meeting, chat thread and support case with a customer (app label
``interactions``; its tables keep their ``workloads_`` names)."""
