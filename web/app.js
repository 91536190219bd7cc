// The operator console: readiness, invariants, recent runs, and the lists the server pages
// (schedule items by state, site, order and run; orders by status and customer; stock per
// warehouse with reserved quantities; document scopes with their gap audit; stuck claims),
// one order with its receipts and its timeline (and its cancel, after a preview of what that
// releases), one schedule item's timeline (a click on an item or a claim), and one scope with
// its documents; live refresh on request.
// Plain DOM code, no dependencies; every value is inserted as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const tokenKey = "onceorder.token";
let nextAfter = null;

function headers() {
  const token = sessionStorage.getItem(tokenKey);
  return token ? { Authorization: "Bearer " + token } : {};
}

// Amounts are 64-bit (ids are sent as strings already): past 2^53 a JavaScript number would
// change their last digits, so an integer a double cannot hold exactly stays the text sent.
function parseJson(text) {
  return JSON.parse(text, (key, value, context) =>
    typeof value === "number" && !Number.isSafeInteger(value) && context &&
    /^-?[0-9]+$/.test(context.source) ? context.source : value);
}

async function readJson(res) {
  try { return parseJson(await res.text()); } catch (e) { return null; }
}

async function getJson(path) {
  const res = await fetch(path, { headers: headers(), cache: "no-store" });
  return { status: res.status, body: await readJson(res) };
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

let shownOrder = null;
// A list the server pages with `next_after`: its rows go into `<prefix>` (tbody),
// `<prefix>-summary` says how many, `<prefix>-more` loads the next page.
class PagedList {
  constructor(prefix, { path, query, rows, cells, cls, noun }) {
    Object.assign(this, { prefix, path, query, rows, cells, cls, noun, after: null });
    $(`${prefix}-more`).addEventListener("click", () => this.load(this.after));
  }

  async load(after = null) {
    const summary = $(`${this.prefix}-summary`);
    const tbody = $(this.prefix);
    if (after === null) tbody.replaceChildren();
    try {
      const q = this.query ? this.query() : new URLSearchParams();
      if (!q.has("limit")) q.set("limit", "50");
      if (after !== null) q.set("after", String(after));
      const r = await getJson(`${this.path()}?${q}`);
      if (r.status !== 200) return show(summary, problemText(r), "bad");
      for (const item of this.rows(r.body)) {
        const row = document.createElement("tr");
        this.cells(item).forEach((t) => cell(row, t === null || t === undefined ? "" : String(t)));
        row.className = this.cls ? this.cls(item) : "";
        tbody.appendChild(row);
      }
      const n = tbody.children.length;
      this.after = r.body.next_after;
      show(summary, n ? `${n} ${this.noun}${this.after !== null ? ", more below" : ""}`
                      : `no ${this.noun}`, "");
      $(`${this.prefix}-more`).hidden = this.after === null;
    } catch (e) {
      show(summary, "server unreachable", "bad");
    }
  }
}

// Filter fields as query parameters; an empty field is left out (the server reads an absent
// filter as "any").
function filters(pairs) {
  const q = new URLSearchParams();
  for (const [name, id] of pairs) {
    const v = $(id).value.trim();
    if (v) q.set(name, v);
  }
  return q;
}

const lists = {
  items: new PagedList("items", {
    path: () => "/v1/schedule/items",
    query: () => filters([["status", "items-status"], ["site_code", "items-site"],
                          ["order_no", "items-order"], ["run_id", "items-run"]]),
    rows: (b) => b.items,
    cells: (i) => [i.item_id, i.run_id, i.site_code, i.order_no, i.lot_no, i.status, i.attempt,
                   i.updated_at, i.error],
    cls: (i) => (i.status === "failed" ? "bad" : ""),
    noun: "item(s)",
  }),
  orders: new PagedList("orders", {
    path: () => "/v1/orders",
    query: () => filters([["status", "orders-status"], ["customer_id", "orders-customer"]]),
    rows: (b) => b.orders,
    cells: (o) => [o.order_id, o.order_no, o.customer_id, o.warehouse_id, o.status,
                   o.total_cents, o.created_at],
    noun: "order(s)",
  }),
  stock: new PagedList("stock", {
    path: () => `/v1/warehouses/${encodeURIComponent($("stock-warehouse").value.trim() || "1")}/skus`,
    rows: (b) => b.skus,
    cells: (k) => [k.sku_id, k.available, k.reserved, k.price_cents],
    noun: "SKU(s)",
  }),
  scopes: new PagedList("scopes", {
    path: () => "/v1/scopes",
    rows: (b) => b.scopes,
    cells: (c) => [c.scope, c.last_value, c.issued, c.imported, c.remaining, c.gaps, c.missing],
    cls: (c) => (c.gaps > 0 ? "bad" : ""),
    noun: "scope(s)",
  }),
  claims: new PagedList("claims", {
    path: () => "/v1/schedule/claims",
    query: () => new URLSearchParams({ within: "1m" }),
    rows: (b) => b.claims,
    cells: (c) => [c.item_id, c.run_id, c.run_kind, `${c.site_code}/${c.order_no}/${c.lot_no}`,
                   c.attempt, c.owner, c.lease_until, c.expired ? "expired" : "ending"],
    cls: (c) => (c.expired ? "bad" : ""),
    noun: "stuck or ending claim(s)",
  }),
};


// Timeline rows: every value as text; `columns` picks the entry's fields in column order.
function timelineRows(tbody, entries, columns) {
  tbody.replaceChildren();
  for (const e of entries) {
    const row = document.createElement("tr");
    columns(e).forEach((t) => cell(row, t === null || t === undefined ? "" : String(t)));
    row.className = e.kind === "failed" || e.kind === "released" || e.kind === "aborted" ? "bad" : "";
    row.dataset.kind = e.kind;
    tbody.appendChild(row);
  }
}

async function showItemTimeline(itemId) {
  const summary = $("item-timeline-summary");
  const info = $("item-timeline-info");
  $("item-timeline-table").hidden = true;
  info.hidden = true;
  const r = await getJson(`/v1/schedule/items/${encodeURIComponent(itemId)}/timeline`);
  if (r.status !== 200) return show(summary, problemText(r), "bad");
  const i = r.body.item;
  info.replaceChildren();
  for (const [key, value] of [["item", i.item_id], ["run", i.run_id],
                              ["order", `${i.site_code}/${i.order_no}/${i.lot_no}`],
                              ["state", i.status], ["attempt", i.attempt]]) {
    const dt = document.createElement("dt");
    dt.textContent = key;
    const dd = document.createElement("dd");
    dd.textContent = String(value);
    info.append(dt, dd);
  }
  info.hidden = false;
  timelineRows($("item-timeline"), r.body.events, (e) =>
    [e.at, e.kind, e.status, e.attempt, e.owner, e.lease_until, e.document_number, e.error]);
  show(summary, `${r.body.events.length} event(s)${r.body.truncated ? ", the oldest 1000 shown" : ""}`, "");
  $("item-timeline-table").hidden = false;
}

async function showOrderTimeline(orderId) {
  const summary = $("order-timeline-summary");
  const r = await getJson(`/v1/orders/${encodeURIComponent(orderId)}/timeline`);
  summary.hidden = false;
  if (r.status !== 200) return show(summary, "timeline: " + problemText(r), "bad");
  const detail = (e) => (e.kind === "receipt" ? `${e.idempotency_key}: ${e.outcome}`
    : e.kind === "source_order" ? `quantity ${e.quantity}` : e.error);
  timelineRows($("order-timeline"), r.body.entries, (e) =>
    [e.at, e.kind, e.lot_no, e.item_id, e.attempt, e.owner, e.lease_until, e.document_number,
     detail(e)]);
  show(summary, `timeline: ${r.body.entries.length} entries` +
                (r.body.truncated ? " (item events cut at 1000)" : ""), "");
  $("order-timeline-table").hidden = false;
}

async function lookUpOrder(orderId) {
  const err = $("order-error");
  const info = $("order-info");
  err.hidden = true;
  info.hidden = true;
  shownOrder = null;
  $("cancel-start").hidden = true;
  $("cancel-preview").hidden = true;
  $("order-lines-table").hidden = true;
  $("order-receipts-table").hidden = true;
  $("order-timeline-table").hidden = true;
  $("order-timeline-summary").hidden = true;
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
  const receipts = await getJson(`/v1/orders/${encodeURIComponent(orderId)}/receipts`);
  const rt = $("order-receipts");
  rt.replaceChildren();
  if (receipts.status === 200) {
    for (const k of receipts.body.receipts) {
      const row = document.createElement("tr");
      [k.idempotency_key, k.normalized, k.outcome, k.created_at].forEach((t) => cell(row, t));
      rt.appendChild(row);
    }
  }
  $("order-receipts-table").hidden = receipts.status !== 200;
  await showOrderTimeline(orderId);
  shownOrder = r.body;
  $("cancel-start").hidden = r.body.status !== "placed";
}

// What a cancel will touch, before it is sent: every line's reservation goes back to stock.
function previewCancel() {
  const o = shownOrder;
  $("cancel-what").textContent =
    `Cancelling order ${o.order_id} (${o.order_no}, customer ${o.customer_id}) releases ` +
    `${o.lines.length} reservation(s) back to warehouse ${o.warehouse_id}; it is refused ` +
    "if a line is already in production.";
  const ul = $("cancel-releases");
  ul.replaceChildren();
  for (const l of o.lines) {
    const li = document.createElement("li");
    li.textContent = `line ${l.line_no}: sku ${l.sku_id} × ${l.quantity}`;
    ul.appendChild(li);
  }
  $("cancel-result").hidden = true;
  $("cancel-preview").hidden = false;
}

async function confirmCancel() {
  const id = shownOrder.order_id;
  $("cancel-preview").hidden = true;
  const res = await fetch(`/v1/orders/${encodeURIComponent(id)}/cancel`,
                          { method: "POST", headers: headers() });
  const body = await readJson(res);
  const out = $("cancel-result");
  out.hidden = false;
  if (res.status === 200) show(out, `order ${id} is ${body.status}`, "ok");
  else show(out, "not cancelled: " + problemText({ status: res.status, body }), "bad");
  await lookUpOrder(String(id));
  out.hidden = false;
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
  for (const list of Object.values(lists)) list.load();
}

// Live refresh: every 5 s while the box is ticked (and the tab is visible).
let liveTimer = null;
$("live").addEventListener("change", () => {
  clearInterval(liveTimer);
  liveTimer = $("live").checked
    ? setInterval(() => { if (!document.hidden) refresh(); }, 5000) : null;
});

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
for (const [form, list] of [["items-form", "items"], ["orders-form", "orders"],
                            ["stock-form", "stock"]]) {
  $(form).addEventListener("submit", (e) => {
    e.preventDefault();
    lists[list].load();
  });
}
$("orders").addEventListener("click", (e) => {
  const row = e.target.closest("tr");
  if (!row) return;
  $("order-id").value = row.firstChild.textContent;
  lookUpOrder(row.firstChild.textContent);
});
for (const id of ["items", "claims"]) {
  $(id).addEventListener("click", (e) => {
    const row = e.target.closest("tr");
    if (row) showItemTimeline(row.firstChild.textContent);
  });
}
$("cancel-start").addEventListener("click", previewCancel);
$("cancel-back").addEventListener("click", () => { $("cancel-preview").hidden = true; });
$("cancel-confirm").addEventListener("click", confirmCancel);
$("scope-form").addEventListener("submit", (e) => {
  e.preventDefault();
  lookUpScope($("scope").value.trim());
});
$("more").addEventListener("click", () => {
  loadDocuments($("scope").value.trim(), nextAfter);
});

refresh();
