"""Node remediation: reboot, replace or drain a faulty node with the organization's consent, and follow it to a clean report."""
