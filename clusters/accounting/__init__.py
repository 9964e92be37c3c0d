"""Capacity accounting: accelerator-hours reserved, held, healthy and busy per cluster and organization."""
