"""Read a page's form as a browser would post it back: what the tests of edits send is what the page shows."""
from __future__ import annotations

from html.parser import HTMLParser


class _Forms(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []  # {"action": ..., "fields": [(name, value)]}
        self._form = None
        self._select = None  # (name, multiple, chosen, first)
        self._textarea = None  # [name, text]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._form = {"action": a.get("action", ""), "method": (a.get("method") or "get").lower(), "fields": []}
            self.forms.append(self._form)
        if self._form is None or "disabled" in a:
            return
        name = a.get("name")
        if tag == "input" and name:
            kind = (a.get("type") or "text").lower()
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self._form["fields"].append((name, a.get("value", "on")))
            elif kind not in ("submit", "button", "file", "image", "reset"):
                self._form["fields"].append((name, a.get("value", "")))
        elif tag == "select" and name:
            self._select = [name, "multiple" in a, [], None]
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            if self._select[3] is None:
                self._select[3] = value
            if "selected" in a:
                self._select[2].append(value)
        elif tag == "textarea" and name:
            self._textarea = [name, ""]

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea[1] += data

    def handle_endtag(self, tag):
        if tag == "select" and self._select is not None:
            name, multiple, chosen, first = self._select
            if not chosen and not multiple and first is not None:
                chosen = [first]
            self._form["fields"].extend((name, v) for v in chosen)
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            name, text = self._textarea
            self._form["fields"].append((name, text.removeprefix("\n")))
            self._textarea = None
        elif tag == "form":
            self._form = None


def post_form(html: str | bytes, containing: str) -> dict:
    """The fields of the page's first POST form that has a field named ``containing``, as the browser posts
    them (the CSRF token left out: the test client does not check it). Repeated names become lists."""
    parser = _Forms()
    parser.feed(html.decode() if isinstance(html, bytes) else html)
    for form in parser.forms:
        names = [n for n, _ in form["fields"]]
        if form["method"] == "post" and containing in names:
            data: dict = {}
            for name, value in form["fields"]:
                if name == "csrfmiddlewaretoken":
                    continue
                if name in data:
                    data[name] = [*data[name], value] if isinstance(data[name], list) else [data[name], value]
                else:
                    data[name] = value
            return data
    raise AssertionError(f"no POST form with a field {containing!r} on the page")
