"""The launch area's own helpers, around ``clusters.launches.service`` (the service) and ``clusters.launches.pipeline``
(the job's steps, the provisioning step and the software upload): CloudFormation calls (backend), the quota guard
(guards), reservation wiring (capacity), the Kubernetes apply step (kubernetes), the launch form's labels (labels)
and the launch-day board (board)."""
