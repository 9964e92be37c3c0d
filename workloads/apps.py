from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"
