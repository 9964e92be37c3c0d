"""The alert rules and Grafana dashboards generated from the threshold table, and their provisioning on a cluster's
Grafana workspace."""
