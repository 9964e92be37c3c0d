"""The language switcher: one POST that remembers the choice for the person (``User.language``) and, for
pages before sign-in, in the language cookie. ``Accept-Language`` decides while neither says anything."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponseBadRequest, HttpResponseRedirect
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

CODES = {code for code, _name in settings.LANGUAGES}


def remember(user, language: str) -> None:
    """Store ``language`` as ``user``'s preference (blank: none, follow the browser)."""
    if language and language not in CODES:
        raise ValueError(f"unknown language {language!r}")
    get_user_model().objects.filter(pk=user.pk).update(language=language)
    user.language = language


@login_not_required
@require_POST
def set_language(request):
    """Switch to the posted ``language`` and go back to ``next`` (a page of this site), or home."""
    language = request.POST.get("language", "")
    if language not in CODES:
        return HttpResponseBadRequest(translation.gettext("Choose one of the portal's languages."))
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        next_url = "/"
    if request.user.is_authenticated:
        remember(request.user, language)
    response = HttpResponseRedirect(next_url)
    response.set_cookie(settings.LANGUAGE_COOKIE_NAME, language, max_age=settings.LANGUAGE_COOKIE_AGE,
                        path=settings.LANGUAGE_COOKIE_PATH, samesite=settings.LANGUAGE_COOKIE_SAMESITE,
                        secure=request.is_secure(), httponly=True)
    return response


def user_language(user) -> str:
    """The language to write to ``user`` in (e-mails): their preference, else the program's default."""
    return getattr(user, "language", "") or settings.LANGUAGE_CODE


def program_language():
    """A context in the program's default language (``LANGUAGE_CODE``): for what the portal writes where several
    people read it at once, such as a Slack channel (docs/DECISIONS.md)."""
    return translation.override(settings.LANGUAGE_CODE)
