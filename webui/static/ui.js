// memfs web UI: the one script. A page that follows its store's change
// feed (body[data-live]) reloads its main part when a change arrives:
// the new part is the server's page again, fetched and parsed as a
// document (parsed documents run no script), so everything in it is as
// escaped as the first load. Nothing else here touches the page.
(function () {
  "use strict";
  var url = document.body.getAttribute("data-live");
  if (!url || !window.EventSource) {
    return;
  }
  var status = document.getElementById("live-status");
  function say(text, cls) {
    if (status) {
      status.textContent = text;
      status.className = "live " + cls;
    }
  }
  var pending = false;
  var again = false;
  function reload() {
    if (pending) {
      again = true;
      return;
    }
    pending = true;
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (res) {
        if (!res.ok || res.redirected) {
          throw new Error("status " + res.status);
        }
        return res.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("live");
        var main = document.getElementById("live");
        if (fresh && main) {
          main.replaceWith(document.importNode(fresh, true));
          document.body.setAttribute("data-updated", String(Date.now()));
        }
      })
      .catch(function () {
        say("reload to update", "off");
      })
      .finally(function () {
        pending = false;
        if (again) {
          again = false;
          reload();
        }
      });
  }
  var es = new EventSource(url);
  es.addEventListener("open", function () { say("live", "on"); });
  es.addEventListener("error", function () { say("reconnecting", "off"); });
  es.addEventListener("change", reload);
  es.addEventListener("signedout", function () {
    es.close();
    say("signed out", "off");
  });
})();
