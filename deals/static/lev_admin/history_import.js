/* A running history import's page (admin "Import history", deals/history/admin_views.py): while the job runs,
   fetch the page again every few seconds and update its status line and figures in place (the status line is
   a polite live region, so a screen reader hears when it changes); once the job has finished, load the page
   whole (the preview or the summary). Without scripts the page says how to refresh it, and a link does. */
(function () {
  "use strict";
  var box = document.getElementById("import-job");
  if (!box || box.getAttribute("data-finished") === "true" || !window.fetch || !window.DOMParser) {
    return;
  }
  var seconds = Math.max(1, parseInt(box.getAttribute("data-refresh-seconds"), 10) || 2);
  var failures = 0;

  function update(id, next) {
    var here = document.getElementById(id);
    var there = next.getElementById(id);
    if (here && there && here.innerHTML !== there.innerHTML) {
      here.innerHTML = there.innerHTML;
    }
  }

  function poll() {
    fetch(window.location.href, {credentials: "same-origin"})
      .then(function (response) {
        if (!response.ok) {
          throw new Error("HTTP " + response.status);
        }
        return response.text();
      })
      .then(function (html) {
        var next = new DOMParser().parseFromString(html, "text/html");
        var nextBox = next.getElementById("import-job");
        if (nextBox && nextBox.getAttribute("data-finished") === "true") {
          window.location.reload();
          return;
        }
        update("import-status", next);
        update("import-figures", next);
        failures = 0;
        window.setTimeout(poll, seconds * 1000);
      })
      .catch(function () {
        failures += 1;  // a network hiccup: try again, more slowly; the "Refresh now" link always works
        if (failures < 10) {
          window.setTimeout(poll, seconds * 1000 * (failures + 1));
        }
      });
  }

  window.setTimeout(poll, seconds * 1000);
}());
