"""Health ingestion: pushes and their stored bodies, pulls from a Prometheus endpoint, Alertmanager and SNS
notifications, into reports, current health and faults."""
