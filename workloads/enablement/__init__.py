"""Enablement: lectures, labs, workshops and onboarding sessions, their attendance and satisfaction (app label
``enablement``; its tables keep their ``workloads_`` names)."""
