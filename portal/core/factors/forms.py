from django import forms
from django.utils.translation import gettext_lazy as _


class CodeForm(forms.Form):
    code = forms.CharField(label=_("Code"), max_length=32, strip=True,
                           widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric",
                                                         "autofocus": True}),
                           help_text=_("The six digits your authenticator app shows now, or one recovery code."))
