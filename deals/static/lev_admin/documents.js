/* The deal page's Documents panel (deals/documents/admin_views.py), small and optional: the form works
   without it (a plain file input and an Upload button).

   - Files dropped on the drop zone become the file input's files, and the chosen files are named in a
     polite live region (a screen reader hears them).
   - Files over the size bound are refused here, before their bytes are sent, with the message the server
     would give (the server refuses them too, unread). */
(function () {
  "use strict";

  function setup() {
    var zone = document.querySelector(".lev-dropzone");
    var input = zone && zone.querySelector("input[type=file]");
    var chosen = document.getElementById("lev-documents-chosen");
    if (!zone || !input) {
      return;
    }
    var max = parseInt(zone.getAttribute("data-max-bytes"), 10);

    function describe() {
      var names = [];
      var tooBig = [];
      for (var i = 0; i < input.files.length; i++) {
        names.push(input.files[i].name);
        if (max && input.files[i].size > max) {
          tooBig.push(input.files[i].name);
        }
      }
      if (chosen) {
        chosen.textContent = names.length ? "Chosen: " + names.join(", ") : "";
      }
      input.setCustomValidity(tooBig.length ? "Too large (at most " + Math.floor(max / 1048576) + " MB): " +
                              tooBig.join(", ") : "");
    }

    input.addEventListener("change", describe);
    ["dragenter", "dragover"].forEach(function (name) {
      zone.addEventListener(name, function (event) {
        event.preventDefault();
        zone.classList.add("lev-dropzone--over");
      });
    });
    ["dragleave", "drop"].forEach(function (name) {
      zone.addEventListener(name, function () {
        zone.classList.remove("lev-dropzone--over");
      });
    });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      if (event.dataTransfer && event.dataTransfer.files.length) {
        input.files = event.dataTransfer.files;
        describe();
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
}());
