// rewind's review page: the buttons and the keyboard. The server renders every view; each
// action button carries the API call it makes (data-post: the URL, data-body: the JSON body),
// so this file knows no route. After a change the page reloads (the browser keeps the scroll
// position), which shows the server's state rather than a guess of it.
(function () {
  "use strict";
  var message = document.getElementById("message");

  function show(kind, text) {
    if (!message) return;
    message.className = kind;
    message.textContent = text;
  }

  function setBusy(busy) {
    document.body.dataset.busy = busy ? "1" : "0";
    document.querySelectorAll("button[data-post]").forEach(function (b) {
      b.disabled = busy;
    });
  }

  // The API's errors are {"error": "the sentence", "code": "...", "causes": [...], ...}: show
  // the sentence, its causes and its code, never the raw JSON.
  function errorText(status, text) {
    try {
      var j = JSON.parse(text);
      var sentence = typeof j.error === "string" ? j.error : null;
      if (!sentence) throw new Error("not an API error");
      (Array.isArray(j.causes) ? j.causes : []).forEach(function (c) {
        sentence += ": " + c;
      });
      return (j.code ? "[" + j.code + "] " : "") + sentence;
    } catch (_) {
      return "HTTP " + status + (text ? ": " + text : "");
    }
  }

  function call(button) {
    if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
    setBusy(true);
    show("info", (button.dataset.doing || "Working") + "\u2026");
    fetch(button.dataset.post, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Rewind-Page": "1" },
      body: button.dataset.body || "{}",
    })
      .then(function (r) {
        return r.text().then(function (text) {
          if (!r.ok) throw new Error(errorText(r.status, text));
          var done = button.dataset.done || "Done.";
          try {
            var j = JSON.parse(text);
            if (j.conflicts && j.conflicts.length) {
              done += " Conflicts left pending: " + j.conflicts.map(function (c) {
                return c.path || c;
              }).join(", ");
            }
          } catch (_) { /* not JSON: nothing more to say */ }
          sessionStorage.setItem("rewind-flash", done);
          window.location.reload();
        });
      })
      .catch(function (e) {
        setBusy(false);
        show("error", e.message || String(e));
      });
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button[data-post]");
    if (!b || b.disabled) return;
    e.preventDefault();
    call(b);
  });

  // Times: the server writes UTC; show the reader's local time, and how long ago on hover.
  document.querySelectorAll("time[data-ns]").forEach(function (t) {
    var ms = Number(t.dataset.ns) / 1e6;
    var d = new Date(ms);
    if (isNaN(d.getTime())) return;
    var pad = function (n) { return String(n).padStart(2, "0"); };
    t.title = t.textContent + " (" + ago(Date.now() - ms) + ")";
    t.textContent = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) +
      " " + pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
  });
  function ago(ms) {
    var s = Math.round(ms / 1000);
    if (s < 90) return s + " s ago";
    if (s < 5400) return Math.round(s / 60) + " min ago";
    if (s < 129600) return Math.round(s / 3600) + " h ago";
    return Math.round(s / 86400) + " days ago";
  }

  var flash = sessionStorage.getItem("rewind-flash");
  if (flash) {
    sessionStorage.removeItem("rewind-flash");
    show("info", flash);
  }

  // Keyboard review: j/k move between hunks (then files without hunks), a/r accept or reject
  // the current one, A/R the whole file it is in, u undo. Ignored while typing in a field.
  var current = -1;
  function targets() {
    return Array.prototype.slice.call(document.querySelectorAll(".hunk, section.file.whole"));
  }
  function focusAt(i) {
    var t = targets();
    if (!t.length) return;
    current = Math.max(0, Math.min(t.length - 1, i));
    t[current].focus();
    t[current].scrollIntoView({ block: "nearest" });
  }
  function press(scope, action) {
    var b = scope && scope.querySelector("button[data-key='" + action + "']");
    if (b && !b.disabled) call(b);
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea") return;
    var t = targets();
    var el = document.activeElement && document.activeElement.closest
      ? document.activeElement.closest(".hunk, section.file") : null;
    if (el) current = t.indexOf(el);
    switch (e.key) {
      case "j": focusAt(current + 1); break;
      case "k": focusAt(current - 1); break;
      case "a": press(el && el.classList.contains("hunk") ? el.querySelector(".hunk-head") : el, "accept"); break;
      case "r": press(el && el.classList.contains("hunk") ? el.querySelector(".hunk-head") : el, "reject"); break;
      case "A": press(el && el.closest("section.file").querySelector(":scope > header"), "accept"); break;
      case "R": press(el && el.closest("section.file").querySelector(":scope > header"), "reject"); break;
      case "u": press(document, "undo"); break;
      default: return;
    }
    e.preventDefault();
  });
})();
