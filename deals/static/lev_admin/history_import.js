/* "Import history" (admin, deals/history/admin_views.py), small and optional: the pages work without it.

   - The upload form: a file over the size bound is refused here, before its bytes are sent, with the
     message the server would give (the server refuses it too, unread).
   - A running import's page: fetch the page again every few seconds and update its status line and figures
     in place (the status line is a polite live region, so a screen reader hears when it changes); once the
     job has finished, load the page whole (the preview or the summary). Without scripts the page says how to
     refresh it, and a link does. */
(function () {
  "use strict";

  function guardUpload() {
    var form = document.getElementById("upload-form");
    var input = form && form.querySelector("input[type=file][data-max-bytes]");
    if (!input) {
      return;
    }
    form.addEventListener("submit", function (event) {
      var file = input.files && input.files[0];
      var max = parseInt(input.getAttribute("data-max-bytes"), 10);
      var old = document.getElementById("upload-too-big");
      if (old) {
        old.parentNode.removeChild(old);
      }
      if (file && max && file.size > max) {
        event.preventDefault();
        var list = document.createElement("ul");
        list.className = "errorlist";
        list.id = "upload-too-big";
        list.setAttribute("role", "alert");
        var item = document.createElement("li");
        item.textContent = input.getAttribute("data-too-big");
        list.appendChild(item);
        var row = input.closest(".form-row") || input.parentNode;
        row.insertBefore(list, row.firstChild);
        input.focus();
      }
    });
  }

  function followJob() {
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
  }

  guardUpload();
  followJob();
}());
