"""Registering an organization's identity provider through pages: program managers and staff (the policy gives
them ``change``; everyone else is refused). The program's own provider, which signs in AWS staff, is not on
these pages: staff keep it in the admin."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.translation import gettext

from portal.core import access
from portal.core.generic import ObjectEditView, ObjectListView
from portal.core.sso.forms import IdentityProviderForm
from portal.core.sso.models import IdentityProvider

PROVIDERS = IdentityProvider.objects.filter(organization__isnull=False).select_related("organization")


class ProgramManagersOnly:
    def dispatch(self, request, *args, **kwargs):
        user = request.user
        if user.is_authenticated and not (access.is_program_manager(user) or access.is_staff(user)):
            raise PermissionDenied(gettext("Program managers and staff register identity providers."))
        return super().dispatch(request, *args, **kwargs)


class IdentityProviderListView(ProgramManagersOnly, ObjectListView):
    queryset = PROVIDERS.prefetch_related("domains").order_by("organization__name", "name")
    template_name = "sso/provider_list.html"
    paginate_by = 100


class IdentityProviderEditView(ProgramManagersOnly, ObjectEditView):
    queryset = PROVIDERS
    form_class = IdentityProviderForm
    form_takes_user = True
    template_name = "sso/provider_form.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs),
                "callback": self.request.build_absolute_uri(reverse("sso:callback"))}

    def form_valid(self, form):
        self.domains_form = form
        return super().form_valid(form)

    def after_save(self, obj, created: bool) -> None:
        """The domains, in the same transaction as the provider (a domain taken meanwhile fails the save)."""
        self.domains_form.save_domains(obj)
