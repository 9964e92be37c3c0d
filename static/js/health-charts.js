/* Health charts. Data comes from json_script blocks rendered by the server (no inline script). */
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
    return el ? JSON.parse(el.textContent) : null;
  }
  function trend() {
    var d = data("health-trend-data"), canvas = document.getElementById("health-trend");
    if (!d || !canvas || typeof Chart === "undefined") return;
    var labels = d.labels;
    new Chart(canvas, {
      type: "line",
      data: {
        labels: labels,
        datasets: [
          { label: t("Healthy GPU share (%)"), data: d.healthy_share, yAxisID: "share", borderColor: "#16a34a" },
          { label: t("GPUs with XID errors"), data: d.xid_errors, yAxisID: "count", borderColor: "#dc2626" },
          { label: t("Missing GPUs"), data: d.missing_gpus, yAxisID: "count", borderColor: "#7c3aed" },
          { label: t("Row remap failures"), data: d.row_remap_failures, yAxisID: "count", borderColor: "#ea580c" },
          { label: t("Thermal violations"), data: d.thermal_violations, yAxisID: "count", borderColor: "#ca8a04" },
          { label: t("Nodes not healthy"), data: d.unhealthy_nodes, yAxisID: "count", borderColor: "#2563eb" }
        ]
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          share: { type: "linear", position: "left", min: 0, max: 100, title: { display: true, text: "%" } },
          count: { type: "linear", position: "right", beginAtZero: true, ticks: { precision: 0 },
                   grid: { drawOnChartArea: false } }
        }
      }
    });
  }
  function human(bytes) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (bytes >= 1024 && i < units.length - 1) { bytes /= 1024; i++; }
    return (Math.round(bytes * 10) / 10) + " " + units[i];
  }
  function nccl() {
    var d = data("nccl-chart-data"), canvas = document.getElementById("nccl-chart");
    if (!d || !canvas || typeof Chart === "undefined") return;
    var datasets = [
      { label: t("Out-of-place busbw (GB/s)"), data: d.oop_busbw, borderColor: "#2563eb" },
      { label: t("In-place busbw (GB/s)"), data: d.ip_busbw, borderColor: "#16a34a" }
    ];
    if (d.expected) {
      datasets.push({ label: t("Expected at ≥ 1 GiB (GB/s)"), data: d.labels.map(function () { return d.expected; }),
                      borderColor: "#dc2626", borderDash: [6, 4], pointRadius: 0 });
    }
    new Chart(canvas, {
      type: "line",
      data: { labels: d.labels.map(human), datasets: datasets },
      options: { animation: false, maintainAspectRatio: false, scales: { y: { beginAtZero: true, title: { display: true, text: "GB/s" } },
                                             x: { title: { display: true, text: t("message size") } } } }
    });
  }
  trend();
  nccl();
})();
