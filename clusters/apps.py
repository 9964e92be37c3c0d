from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "clusters"

    def ready(self) -> None:
        # deferred: the models and what imports them load once the app registry is ready
        from clusters import choices, tasks
        from clusters.launches import service as launch
        from clusters.models import HOLDING_STATES, Cluster
        from clusters.views import organization_clusters_section
        from portal.core import sections
        from portal.core.templatetags.portal_display import add_label_source
        from workloads import usage

        sections.register(sections.ORGANIZATION_PAGE, "clusters/htmx/organization_section.html",
                          organization_clusters_section, order=40)
        add_label_source(choices)
        usage.register_holder(lambda: Cluster.objects.filter(state__in=HOLDING_STATES))
        launch.KIND.provide(tasks.LAUNCH)
