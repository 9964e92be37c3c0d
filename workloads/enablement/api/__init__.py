"""REST API of enablement sessions and attendance."""
