"""Pages require a signed-in user unless a view says otherwise; the API answers 401/403 itself."""
import re

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import JsonResponse
from django.utils import translation
from django.utils.translation import gettext

from portal.core.upload_limits import UploadTooLarge

# A JSON escape for NUL: "\u0000" preceded by an even number of backslashes (an odd number escapes the backslash).
JSON_NUL_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


class PortalLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware, except for the API (DRF authenticates tokens and sessions
    and answers 401/403 instead of redirecting a machine to a login form)."""

    exempt_prefixes = ("/api/",)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith(self.exempt_prefixes):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class RejectNulBytesMiddleware:
    """Answer 400 to input carrying NUL characters, and 413 to an upload over the limit.

    No field of the portal holds a NUL, and PostgreSQL refuses them in text, so a query string, form,
    JSON body or multipart field (name, value or file name) with one would otherwise reach the database
    as an error. Multipart bodies are parsed here, through ``portal.core.upload_limits.SizeLimitedUploadHandler``,
    so an oversized upload is refused before the rest of it is read. Raw ingestion bodies (Prometheus
    text) are left to their own reader.
    """

    CHECKED_TYPES = ("application/x-www-form-urlencoded", "application/json")
    WRITE_METHODS = ("POST", "PUT", "PATCH")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.META.get("QUERY_STRING", "") or "%00" in request.META.get("QUERY_STRING", ""):
            return self._refuse()
        content_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        if request.method not in self.WRITE_METHODS:
            return self.get_response(request)
        if content_type in self.CHECKED_TYPES:
            try:
                body = request.body
            except Exception:  # too large: Django's own limit answers for it later
                return self.get_response(request)
            if b"\x00" in body:
                return self._refuse()
            # "%00" is a NUL only where the body is URL-encoded; in JSON it is text, as is an escaped backslash
            # followed by "u0000".
            if b"%00" in body if content_type != "application/json" else JSON_NUL_ESCAPE.search(body):
                return self._refuse()
        elif content_type == "multipart/form-data":
            refused = self._check_multipart(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    def _check_multipart(self, request):
        # Parsing reads the body's stream, which cannot be read twice: a body that fails here can be parsed by no
        # one after (DRF then raised RawPostDataException, a 500 on every API create), so this is its answer.
        try:
            post, files = request.POST, request.FILES
        except UploadTooLarge as exc:
            return JsonResponse({"detail": str(exc)}, status=413)
        except RequestDataTooBig:
            return JsonResponse({"detail": gettext("The request body is too large.")}, status=413)
        except TooManyFieldsSent:
            return JsonResponse({"detail": gettext("The request has more than %(limit)s fields.")
                                 % {"limit": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS}}, status=400)
        except TooManyFilesSent:
            return JsonResponse({"detail": gettext("The request has more than %(limit)s files.")
                                 % {"limit": settings.DATA_UPLOAD_MAX_NUMBER_FILES}}, status=400)
        except Exception:  # any other malformed body: nothing can read it after this
            return JsonResponse({"detail": gettext("The multipart body could not be read.")}, status=400)
        texts = [*post.keys(), *(v for values in post.lists() for v in values[1]), *files.keys(),
                 *(f.name or "" for values in files.lists() for f in values[1])]
        if any("\x00" in text for text in texts):
            return self._refuse()
        return None

    @staticmethod
    def _refuse():
        return JsonResponse({"detail": gettext("Input must not contain NUL characters.")}, status=400)


class UserLanguageMiddleware:
    """Speak the signed-in user's chosen language (``User.language``), whatever the browser asks for.

    Runs after AuthenticationMiddleware; LocaleMiddleware has already chosen from the language cookie or
    ``Accept-Language`` and, on the way out, says which language the response is in (``Content-Language``)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        language = getattr(user, "language", "") if user is not None and user.is_authenticated else ""
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
