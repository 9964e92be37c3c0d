from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "clusters"

    def ready(self) -> None:
        from clusters.views import organization_clusters_section
        from portal.views import ORGANIZATION_SECTIONS

        entry = ("clusters/htmx/organization_section.html", organization_clusters_section)
        if entry not in ORGANIZATION_SECTIONS:
            ORGANIZATION_SECTIONS.append(entry)
