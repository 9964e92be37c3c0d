"""The launch area's own helpers, around ``clusters.launches.service`` (the service) and ``clusters.launches.pipeline`` (the steps):
CloudFormation calls (backend), the quota guard (guards), reservation wiring (capacity), the software upload
step (software_upload), the Kubernetes apply step (kubernetes), the launch form's labels (labels) and the
launch-day board (board)."""
