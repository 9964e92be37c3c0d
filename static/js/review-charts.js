// Charts of the weekly review. Each canvas carries its data as JSON in data-series (no inline scripts).
(function () {
  "use strict";
  // The page's translations of these texts (portal.core.context_processors.JS_STRINGS); English when absent.
  var strings = (function () {
    var el = document.getElementById("portal-js-strings");
    try { return el ? JSON.parse(el.textContent) : {}; } catch (e) { return {}; }
  })();
  function t(text) { return strings[text] || text; }
  function data(id) {
    var el = document.getElementById(id);
    return el && el.dataset.series ? JSON.parse(el.dataset.series) : [];
  }
  function chart(canvasId, config) {
    var canvas = document.getElementById(canvasId);
    if (!canvas || typeof Chart === "undefined") { return; }
    config.options = Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options || {});
    new Chart(canvas, config);
  }
  function axes(x, y) {
    return {
      x: { title: { display: true, text: x } },
      y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: y } }
    };
  }
  function draw() {
    var open = data("canvas-open-per-week");
    chart("canvas-open-per-week", {
      type: "line",
      data: { labels: open.map(function (p) { return p.week; }),
              datasets: [{ label: t("Open interactions"), data: open.map(function (p) { return p.open; }), borderColor: "#1f6fb2", tension: 0.2 }] },
      options: { plugins: { title: { display: true, text: t("Open interactions per week") } }, scales: axes(t("Week of"), t("Open")) }
    });
    var launches = data("canvas-launches-per-day");
    chart("canvas-launches-per-day", {
      type: "bar",
      data: { labels: launches.map(function (p) { return p.day; }),
              datasets: [{ label: t("Launches"), data: launches.map(function (p) { return p.launches; }), backgroundColor: "#2e8b57" },
                         { label: t("Failed"), data: launches.map(function (p) { return p.failed; }), backgroundColor: "#b3261e" }] },
      options: { plugins: { title: { display: true, text: t("Launches per day") } }, scales: axes(t("Day"), t("Clusters")) }
    });
    var quota = data("canvas-quota-by-type");
    chart("canvas-quota-by-type", {
      type: "bar",
      data: { labels: quota.map(function (t) { return t.instance_type; }),
              datasets: [{ label: t("Running"), data: quota.map(function (t) { return t.used; }), backgroundColor: "#1f6fb2" },
                         { label: t("Quota"), data: quota.map(function (t) { return t.quota; }), backgroundColor: "#b0c4de" }] },
      options: { indexAxis: "y", plugins: { title: { display: true, text: t("Quota use by instance type") } },
                 scales: { x: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: t("Instances") } },
                           y: { title: { display: true, text: t("Instance type") } } } }
    });
    var faults = data("canvas-faults-per-week");
    chart("canvas-faults-per-week", {
      type: "bar",
      data: { labels: faults.map(function (p) { return p.week; }),
              datasets: [{ label: t("New GPU faults"), data: faults.map(function (p) { return p.faults; }), backgroundColor: "#c8471b" }] },
      options: { plugins: { title: { display: true, text: t("GPU faults per week") } }, scales: axes(t("Week of"), t("Faults")) }
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", draw); } else { draw(); }
})();
