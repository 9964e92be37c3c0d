"""Development only: the embedded AWS endpoint (``sandbox.aws``, moto's server and the services it lacks) and the
demo program (``seed_demo``, ``run_demo``). Nothing in ``portal``, ``workloads`` or ``clusters`` imports it; the
production image and requirements.lock leave it and moto out."""
