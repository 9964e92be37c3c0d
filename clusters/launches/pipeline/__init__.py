"""The launch pipeline: a launch, retry or delete job's steps (steps), the provisioning step after the stacks and
before "ready" (provisioning) and the software bundle's upload before the cluster stack (software_upload). The
clusters app's own: the engagement, the review and workloads never import it (an import contract keeps it so)."""
