// tenant.io console: keeps tables live from the server's event streams.
// Pages work without it; it holds no credentials (the session cookie is
// HttpOnly) and talks only to its own origin.
"use strict";

document.querySelectorAll("tbody[data-live]").forEach(function (body) {
  var state = body.closest("table").nextElementSibling;
  var say = function (text) {
    if (state && state.classList.contains("live-state")) state.textContent = text;
  };
  var events = new EventSource(body.dataset.live);
  events.addEventListener("rows", function (e) {
    // Keep open disclosure widgets (a delete about to be confirmed) open.
    var open = Array.prototype.map.call(body.querySelectorAll("details[open]"), function (d) {
      return d.closest("tr").dataset.key;
    });
    body.innerHTML = e.data;
    open.forEach(function (key) {
      var row = body.querySelector('tr[data-key="' + CSS.escape(key) + '"] details');
      if (row) row.open = true;
    });
    if (body.dataset.liveState !== "live" && window.performance && performance.mark) {
      // When the table first showed the API's current state (for measurements).
      performance.mark("tenant-console:live");
    }
    body.dataset.liveState = "live";
    body.dataset.updates = String(Number(body.dataset.updates || "0") + 1);
    say("Live: updates as the API reports changes.");
  });
  events.addEventListener("problem", function (e) {
    body.dataset.liveState = "problem";
    say("Live updates stopped: " + e.data);
  });
  events.onerror = function () {
    if (body.dataset.liveState !== "problem") {
      body.dataset.liveState = "reconnecting";
      say("Reconnecting…");
    }
  };
});
