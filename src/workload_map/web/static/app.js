// wlmap serve: live updates over server-sent events, filters, and the playground.
// No framework: the pages are rendered by the server; this swaps <main> when data changes.
"use strict";

(function () {
  const main = () => document.getElementById("main");

  // --- live updates: one EventSource, at most one refresh in flight, none while typing ---
  let refreshing = false;
  let pending = false;
  async function refresh() {
    if (document.getElementById("playground")) return; // the playground is offline
    if (refreshing) { pending = true; return; }
    refreshing = true;
    try {
      const response = await fetch(location.href, { credentials: "same-origin" });
      if (response.ok) {
        const html = await response.text();
        const doc = new DOMParser().parseFromString(html, "text/html");
        const fresh = doc.getElementById("main");
        const active = document.activeElement && document.activeElement.id;
        const open = [...main().querySelectorAll("details[open]")].map((d) => d.id || d.querySelector("summary").textContent);
        if (fresh) main().replaceChildren(...fresh.childNodes);
        for (const d of main().querySelectorAll("details")) {
          const key = d.id || d.querySelector("summary").textContent;
          if (open.includes(key)) d.open = true;
        }
        if (active && document.getElementById(active)) document.getElementById(active).focus();
        document.body.dataset.updated = String(Date.now());
        wireFilters();
      }
    } finally {
      refreshing = false;
      if (pending) { pending = false; setTimeout(refresh, 300); }
    }
  }
  if (window.EventSource) {
    const events = new EventSource("/events");
    events.addEventListener("change", () => refresh());
  }

  // --- filters submit on change (keyboard users still have the button) ---
  function wireFilters() {
    const form = document.querySelector("form.filters");
    if (!form) return;
    for (const select of form.querySelectorAll("select")) {
      select.addEventListener("change", () => form.requestSubmit());
    }
  }
  wireFilters();

  // --- playground ---
  const form = document.getElementById("playground");
  if (!form) return;
  const status = document.getElementById("pg-status");
  const findings = document.getElementById("pg-findings");
  const view = document.getElementById("pg-view");
  let timer = null;
  let sequence = 0;
  async function evaluate() {
    const mine = ++sequence;
    const body = {
      workload: form.workload.value,
      pods: form.pods.value,
      karta: form.karta.value,
    };
    status.textContent = "Evaluating…";
    let result;
    try {
      const response = await fetch("/api/playground", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      result = await response.json();
    } catch (err) {
      result = { error: "the server did not answer: " + err };
    }
    if (mine !== sequence) return; // a newer evaluation is under way
    findings.replaceChildren();
    for (const f of result.findings || []) {
      const li = document.createElement("li");
      li.className = "finding finding-" + f.severity;
      li.textContent = `${f.severity}: ${f.path}: ${f.message}`;
      if (typeof f.offset === "number") {
        const caret = document.createElement("div");
        caret.className = "caret";
        caret.textContent = " ".repeat(f.offset) + "^ position " + f.offset;
        li.appendChild(caret);
      }
      findings.appendChild(li);
    }
    if (result.error) {
      status.textContent = result.error;
      status.className = "error";
    } else {
      status.textContent = "OK: " + (result.view.phases || []).join(", ");
      status.className = "dim";
    }
    view.textContent = result.view ? JSON.stringify(result.view, null, 2) : "";
  }
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(evaluate, 350);
  });
  document.getElementById("pg-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    form.workload.value = await file.text();
    evaluate();
  });
})();
