from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "clusters"

    def ready(self) -> None:
        # Django's idiom: ready() imports the modules that register with the portal, once the app registry is loaded.
        from clusters.views import organization_clusters_section
        from portal import sections

        sections.register(sections.ORGANIZATION_PAGE, "clusters/htmx/organization_section.html",
                          organization_clusters_section, order=40)
