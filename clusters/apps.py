from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "clusters"

    def ready(self) -> None:
        from clusters.views import organization_clusters_section
        from portal import sections

        sections.register(sections.ORGANIZATION_PAGE, "clusters/htmx/organization_section.html",
                          organization_clusters_section, order=40)
