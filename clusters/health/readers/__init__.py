"""What clusters send, read without the database: Prometheus expositions from DCGM, EFA and neuron-monitor,
nccl-tests and nccom-test output, the XID table and the thresholds that judge a scrape. The bottom of the health area."""
