"""The portal's own metrics, served at /metrics in Prometheus text (see docs/metrics.md).

Two sources: counters and histograms that the code bumps where things happen (``instruments``: requests, AWS
calls, the outbound guard's refusals, deliveries, pushes processed), kept in prometheus_client's multiprocess
files when ``PROMETHEUS_MULTIPROC_DIR`` is set so gunicorn's and Celery's processes add up; and figures read at
scrape time from where the truth is (``collector``: queue depths and ages in the broker's Redis, job rows by state,
the areas' own families registered with ``collector.register``). Labels carry ids and fixed vocabularies only,
never an organization's or a person's name.
"""
