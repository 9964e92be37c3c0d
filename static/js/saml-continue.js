/* The SAML answer arrives as a cross-site POST, which carries no session cookie (SameSite=Lax); the portal posts it
   again from its own page, where the cookie goes along. Without scripts, the page's button does the same. */
(function () {
  "use strict";
  var form = document.getElementById("saml-continue");
  if (form) {
    form.submit();
  }
})();
