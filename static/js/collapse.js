/* Folds what a phone has no room for: every <details data-collapse-narrow> (the main navigation, a page's
   filters) is rendered open, so it works without scripts; on a narrow screen it starts closed behind its
   summary (a menu button), and it opens again when the screen widens. */
(function () {
  "use strict";
  var narrow = window.matchMedia("(max-width: 767px)");
  function apply() {
    document.querySelectorAll("details[data-collapse-narrow]").forEach(function (el) {
      el.open = !narrow.matches;
    });
  }
  apply();
  narrow.addEventListener("change", apply);
}());
