/* Passkeys (WebAuthn): the server's options (JSON, binary fields in base64url) become navigator.credentials
   calls, and the credential they make goes back as JSON. Buttons carry data-passkey="register" or "verify",
   data-url (GET: options; POST: the credential), and sit in a form holding the CSRF token (and, to register, a
   name field). Messages appear in the element named by data-status. */
(function () {
  "use strict";

  function toBytes(value) {
    var text = value.replace(/-/g, "+").replace(/_/g, "/");
    while (text.length % 4) { text += "="; }
    var raw = atob(text), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i += 1) { bytes[i] = raw.charCodeAt(i); }
    return bytes.buffer;
  }

  function toText(buffer) {
    var bytes = new Uint8Array(buffer), raw = "";
    for (var i = 0; i < bytes.length; i += 1) { raw += String.fromCharCode(bytes[i]); }
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function descriptors(list) {
    return (list || []).map(function (item) {
      return Object.assign({}, item, { id: toBytes(item.id) });
    });
  }

  function creationOptions(options) {
    options.challenge = toBytes(options.challenge);
    options.user.id = toBytes(options.user.id);
    options.excludeCredentials = descriptors(options.excludeCredentials);
    return { publicKey: options };
  }

  function requestOptions(options) {
    options.challenge = toBytes(options.challenge);
    options.allowCredentials = descriptors(options.allowCredentials);
    return { publicKey: options };
  }

  function credentialJSON(credential) {
    var response = credential.response, out = {
      id: credential.id, rawId: toText(credential.rawId), type: credential.type,
      clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      response: { clientDataJSON: toText(response.clientDataJSON) }
    };
    if (response.attestationObject) {
      out.response.attestationObject = toText(response.attestationObject);
      out.response.transports = response.getTransports ? response.getTransports() : [];
    } else {
      out.response.authenticatorData = toText(response.authenticatorData);
      out.response.signature = toText(response.signature);
      out.response.userHandle = response.userHandle ? toText(response.userHandle) : undefined;
    }
    return out;
  }

  function answer(response) {
    return response.json().catch(function () { return {}; }).then(function (body) {
      if (body.redirect) { window.location.assign(body.redirect); return null; }
      if (!response.ok) { throw new Error(body.detail || response.statusText); }
      return body;
    });
  }

  function run(button) {
    var form = button.closest("form"), url = button.dataset.url, kind = button.dataset.passkey;
    var status = document.getElementById(button.dataset.status);
    var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
    var say = function (text) { if (status) { status.textContent = text; status.hidden = !text; } };
    say("");
    button.disabled = true;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(answer)
      .then(function (options) {
        if (options === null) { return null; }
        return kind === "register"
          ? navigator.credentials.create(creationOptions(options))
          : navigator.credentials.get(requestOptions(options));
      })
      .then(function (credential) {
        if (!credential) { return null; }
        var body = { credential: credentialJSON(credential) };
        var name = form.querySelector("input[name=name]"), next = form.querySelector("input[name=next]");
        if (name) { body.name = name.value; }
        if (next) { body.next = next.value; }
        return fetch(url, {
          method: "POST", credentials: "same-origin", body: JSON.stringify(body),
          headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf }
        }).then(answer);
      })
      .catch(function (error) { say(error && error.message ? error.message : String(error)); })
      .then(function () { button.disabled = false; });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-passkey]");
    if (!button) { return; }
    event.preventDefault();
    if (!window.PublicKeyCredential) {
      var status = document.getElementById(button.dataset.status);
      if (status) { status.textContent = button.dataset.unsupported || ""; status.hidden = false; }
      return;
    }
    run(button);
  });
}());
