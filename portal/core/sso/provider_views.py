"""Registering an organization's identity provider through pages: program managers and staff for any
organization, and an organization's designated administrator (a customer of it the program named) for their own
(the policy gives each ``change`` on those rows; everyone else is refused). Each save is checked against the
issuer's discovery document (OpenID Connect) or has its signing certificate read (SAML), is recorded in the
provider's history and the audit trail, and needs a recent second factor (``portal.core.factors.policy``).
The program's own provider, which signs in AWS staff, is not on these pages: staff keep it in the admin."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.translation import gettext

from portal.core import access
from portal.core.generic import ObjectEditView, ObjectListView
from portal.core.sso import registration, saml
from portal.core.sso.forms import IdentityProviderForm
from portal.core.sso.models import IdentityProvider, IdentityProviderChange, Protocol

PROVIDERS = IdentityProvider.objects.filter(organization__isnull=False).select_related("organization")


def administers_sign_in(user) -> bool:
    """Program managers, staff, and the designated administrators of an organization (who are its customers)."""
    if access.is_program_manager(user) or access.is_staff(user):
        return True
    roles = access.roles_of(user)
    return bool(roles.get(access.ORG_ADMIN, frozenset()) & roles.get(access.CUSTOMER, frozenset()))


class ProviderAdministratorsOnly:
    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and not administers_sign_in(request.user):
            raise PermissionDenied(gettext("Program managers, staff and an organization's designated administrator "
                                           "register identity providers."))
        return super().dispatch(request, *args, **kwargs)


class IdentityProviderListView(ProviderAdministratorsOnly, ObjectListView):
    queryset = PROVIDERS.prefetch_related("domains").order_by("organization__name", "name")
    template_name = "sso/provider_list.html"
    paginate_by = 100


class IdentityProviderEditView(ProviderAdministratorsOnly, ObjectEditView):
    queryset = PROVIDERS
    form_class = IdentityProviderForm
    form_takes_user = True
    template_name = "sso/provider_form.html"

    def get_context_data(self, **kwargs):
        history = IdentityProviderChange.objects.none()
        if self.object is not None:
            history = IdentityProviderChange.objects.restrict(self.request.user, access.VIEW).filter(
                provider=self.object)[:50]
        context = {**super().get_context_data(**kwargs), "history": history,
                   "callback": self.request.build_absolute_uri(reverse("sso:callback"))}
        if self.object is not None and self.object.protocol == Protocol.SAML:
            context["saml_metadata"] = self.request.build_absolute_uri(saml.metadata_path(self.object))
            context["saml_acs"] = self.request.build_absolute_uri(saml.acs_path(self.object))
        return context

    def form_valid(self, form):
        self.domains_form = form
        return super().form_valid(form)

    def after_save(self, obj, created: bool) -> None:
        """The domains, in the same transaction as the provider (a domain taken meanwhile fails the save), then
        the history row and the audit event."""
        self.domains_form.save_domains(obj)
        registration.record_change(obj, self.domains_form.before, self.request)
