"""Pages require a signed-in user unless a view says otherwise; the API answers 401/403 itself."""
from django.contrib.auth.middleware import LoginRequiredMiddleware


class PortalLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware, except for the API (DRF authenticates tokens and sessions
    and answers 401/403 instead of redirecting a machine to a login form)."""

    exempt_prefixes = ("/api/",)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith(self.exempt_prefixes):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
