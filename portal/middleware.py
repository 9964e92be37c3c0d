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


class RejectNulBytesMiddleware:
    """Answer 400 to text input carrying NUL characters.

    No field of the portal holds one, and PostgreSQL refuses them in text, so a query string, form or
    JSON body with a NUL would otherwise reach the database as an error. File uploads (multipart) and
    raw ingestion bodies are left to their own parsers.
    """

    CHECKED_TYPES = ("application/x-www-form-urlencoded", "application/json")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.META.get("QUERY_STRING", "") or "%00" in request.META.get("QUERY_STRING", ""):
            return self._refuse()
        content_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        if content_type in self.CHECKED_TYPES and request.method in ("POST", "PUT", "PATCH"):
            try:
                body = request.body
            except Exception:  # too large: Django's own limit answers for it later
                return self.get_response(request)
            if b"\x00" in body or b"%00" in body or (content_type == "application/json" and b"\\u0000" in body):
                return self._refuse()
        return self.get_response(request)

    @staticmethod
    def _refuse():
        from django.http import JsonResponse

        return JsonResponse({"detail": "Input must not contain NUL characters."}, status=400)
