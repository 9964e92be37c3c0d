"""Cluster health: readers of what clusters send (bottom), faults and alert rules, ingestion, and validation
(top); the app's models, pages, API and tasks sit at this package's top and use them all."""
