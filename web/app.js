// The operator dashboard: reads /readyz, /v1/invariants, the recent schedule runs, one
// order, and one scope with its documents.
// Plain DOM code, no dependencies; every value is inserted as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const tokenKey = "onceorder.token";
let nextAfter = null;

function headers() {
  const token = sessionStorage.getItem(tokenKey);
  return token ? { Authorization: "Bearer " + token } : {};
}

async function getJson(path) {
  const res = await fetch(path, { headers: headers(), cache: "no-store" });
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  return { status: res.status, body };
}

function problemText(r) {
  if (r.body && r.body.detail) {
    const fields = (r.body.errors || []).map((e) => `${e.field}: ${e.message}`).join("; ");
    return `${r.status} ${r.body.code}: ${r.body.detail}${fields ? " (" + fields + ")" : ""}`;
  }
  return `HTTP ${r.status}`;
}

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.appendChild(td);
}

function show(el, text, cls) {
  el.textContent = text;
  el.className = cls;
}

async function refreshReady() {
  const el = $("ready");
  try {
    const r = await getJson("/readyz");
    if (r.status === 200) show(el, `ready (schema version ${r.body.schema_version})`, "ok");
    else show(el, "not ready: " + problemText(r), "bad");
  } catch (e) {
    show(el, "server unreachable", "bad");
  }
}

async function refreshInvariants() {
  const summary = $("invariants-summary");
  const tbody = $("invariants");
  tbody.replaceChildren();
  try {
    const r = await getJson("/v1/invariants");
    if (r.status !== 200) return show(summary, problemText(r), "bad");
    show(summary, r.body.ok ? "all invariants hold" : "some invariants are violated",
         r.body.ok ? "ok" : "bad");
    for (const c of r.body.checks) {
      const row = document.createElement("tr");
      cell(row, c.id);
      cell(row, c.name);
      cell(row, String(c.violations));
      cell(row, c.sample.join("\n"));
      row.className = c.violations === 0 ? "ok" : "bad";
      tbody.appendChild(row);
    }
  } catch (e) {
    show(summary, "server unreachable", "bad");
  }
}

async function refreshRuns() {
  const summary = $("runs-summary");
  const tbody = $("runs");
  tbody.replaceChildren();
  try {
    const r = await getJson("/v1/schedule/runs?limit=20");
    if (r.status !== 200) return show(summary, problemText(r), "bad");
    show(summary, r.body.runs.length ? `the ${r.body.runs.length} most recent` : "no runs yet", "");
    for (const run of r.body.runs) {
      const row = document.createElement("tr");
      const c = run.counts;
      [String(run.run_id), run.kind, run.status, String(c.wait), String(c.processing),
       String(c.success), String(c.failed), String(c.aborted), run.created_at,
       run.finished_at || "", run.error || ""].forEach((t) => cell(row, t));
      row.className = run.status === "error" ? "bad" : "";
      tbody.appendChild(row);
    }
  } catch (e) {
    show(summary, "server unreachable", "bad");
  }
}

async function lookUpOrder(orderId) {
  const err = $("order-error");
  const info = $("order-info");
  err.hidden = true;
  info.hidden = true;
  $("order-lines-table").hidden = true;
  $("order-lines").replaceChildren();
  const r = await getJson(`/v1/orders/${encodeURIComponent(orderId)}`);
  if (r.status !== 200) {
    err.hidden = false;
    return show(err, problemText(r), "bad");
  }
  info.replaceChildren();
  for (const key of ["order_id", "order_no", "status", "customer_id", "warehouse_id", "total_cents", "created_at"]) {
    const dt = document.createElement("dt");
    dt.textContent = key;
    const dd = document.createElement("dd");
    dd.textContent = String(r.body[key]);
    info.append(dt, dd);
  }
  info.hidden = false;
  for (const l of r.body.lines) {
    const row = document.createElement("tr");
    [l.line_no, l.sku_id, l.quantity, l.unit_price_cents].forEach((t) => cell(row, String(t)));
    $("order-lines").appendChild(row);
  }
  $("order-lines-table").hidden = false;
}

async function loadDocuments(scope, after) {
  const q = new URLSearchParams({ limit: "50" });
  if (after !== null) q.set("after", String(after));
  const r = await getJson(`/v1/scopes/${encodeURIComponent(scope)}/documents?${q}`);
  if (r.status !== 200) return show($("scope-error"), problemText(r), "bad");
  const tbody = $("documents");
  for (const d of r.body.documents) {
    const row = document.createElement("tr");
    [d.number, String(d.value), d.title, d.origin, d.scheme, d.created_at].forEach((t) => cell(row, t));
    tbody.appendChild(row);
  }
  nextAfter = r.body.next_after;
  $("more").hidden = nextAfter === null;
  $("documents-table").hidden = false;
}

async function lookUpScope(scope) {
  const err = $("scope-error");
  const info = $("scope-info");
  err.hidden = true;
  info.hidden = true;
  $("documents-table").hidden = true;
  $("more").hidden = true;
  $("documents").replaceChildren();
  const r = await getJson(`/v1/scopes/${encodeURIComponent(scope)}`);
  if (r.status !== 200) {
    err.hidden = false;
    return show(err, problemText(r), "bad");
  }
  info.replaceChildren();
  for (const key of ["scope", "width", "radix", "max", "last_value", "issued", "imported", "remaining"]) {
    const dt = document.createElement("dt");
    dt.textContent = key;
    const dd = document.createElement("dd");
    dd.textContent = String(r.body[key]);
    info.append(dt, dd);
  }
  info.hidden = false;
  await loadDocuments(scope, null);
}

function refresh() {
  refreshReady();
  refreshInvariants();
  refreshRuns();
}

$("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const token = $("token").value.trim();
  if (token) sessionStorage.setItem(tokenKey, token);
  else sessionStorage.removeItem(tokenKey);
  $("token").value = "";
  refresh();
});
$("refresh").addEventListener("click", refresh);
$("order-form").addEventListener("submit", (e) => {
  e.preventDefault();
  lookUpOrder($("order-id").value.trim());
});
$("scope-form").addEventListener("submit", (e) => {
  e.preventDefault();
  lookUpScope($("scope").value.trim());
});
$("more").addEventListener("click", () => {
  loadDocuments($("scope").value.trim(), nextAfter);
});

refresh();
