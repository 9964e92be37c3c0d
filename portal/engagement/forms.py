"""Forms of the engagement pages."""
from django import forms


class TransitionForm(forms.Form):
    answer = forms.CharField(label="Answer", widget=forms.Textarea(attrs={"rows": 5}), max_length=20000,
                             required=False, help_text="Markdown. Internal: the lead SA decides what to share.")
