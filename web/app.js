// The operator console: readiness, per-minute activity charts (inline SVG bars), the recent
// operator actions (audit trail), invariants, recent runs, and the lists the server pages
// (schedule items by state, site, order and run; orders by status and customer; stock per
// warehouse with reserved quantities; document scopes with their gap audit; stuck claims),
// one order with its receipts and its timeline (and its cancel, after a preview of what that
// releases), one schedule item's timeline (a click on an item or a claim), and one scope with
// its documents; live refresh on request. The scheduling actions (a manual run of given
// lines, re-queueing orders that reached the attempt limit, stopping a run, a reaper pass)
// each show a preview of what they touch and are sent only once confirmed. The events section
// (endpoints, deliveries, consumers, the feed) is events.js, loaded after this file.
// Plain DOM code, no dependencies; every value is inserted as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const tokenKey = "onceorder.token";
let nextAfter = null;

function headers() {
  const token = sessionStorage.getItem(tokenKey);
  return token ? { Authorization: "Bearer " + token } : {};
}

// A token in the address's fragment (`/#token=…`, as `onceorder serve` and scripts/run-demo
// print it; a browser never sends the fragment to the server) is kept for the tab as a typed
// one is, and taken out of the address bar and its history entry at once.
(function tokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token === null) return;
  if (token.trim()) sessionStorage.setItem(tokenKey, token.trim());
  params.delete("token");
  const rest = params.toString();
  history.replaceState(history.state, "", location.pathname + location.search + (rest ? "#" + rest : ""));
})();

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

async function postJson(path, body) {
  const h = headers();
  if (body !== undefined) h["Content-Type"] = "application/json";
  const res = await fetch(path, { method: "POST", headers: h, cache: "no-store",
                                  body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await readJson(res) };
}

const keyText = (k) => `${k.site_code}/${k.order_no}/${k.lot_no}`;

function listItems(ul, texts) {
  ul.replaceChildren();
  for (const t of texts) {
    const li = document.createElement("li");
    li.textContent = t;
    ul.appendChild(li);
  }
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
      const td = document.createElement("td");
      if (run.status === "creating" || run.status === "running") {
        const b = document.createElement("button");
        b.type = "button";
        b.className = "stop-start";
        b.textContent = "Stop…";
        b.addEventListener("click", () => previewStop(run));
        td.appendChild(b);
      }
      row.appendChild(td);
      row.className = run.status === "error" ? "bad" : "";
      tbody.appendChild(row);
    }
  } catch (e) {
    show(summary, "server unreachable", "bad");
  }
}

// One bar per minute, scaled to the series' largest value (at least 1, so a quiet hour draws
// flat); `overlay` (busy answers) is drawn over the same bars in red. Built with DOM calls:
// no HTML is parsed and no library is loaded.
const svgNs = "http://www.w3.org/2000/svg";
function drawBars(svg, values, overlay) {
  const n = values.length;
  const max = Math.max(1, ...values);
  svg.setAttribute("viewBox", `0 0 ${n} 100`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.replaceChildren();
  const bar = (i, v, cls, minute) => {
    const h = (v / max) * 100;
    const r = document.createElementNS(svgNs, "rect");
    r.setAttribute("class", cls);
    r.setAttribute("x", String(i + 0.1));
    r.setAttribute("width", "0.8");
    r.setAttribute("y", String(100 - h));
    r.setAttribute("height", String(h));
    r.dataset.count = String(v);
    const title = document.createElementNS(svgNs, "title");
    title.textContent = `${minute}: ${v}`;
    r.appendChild(title);
    svg.appendChild(r);
  };
  values.forEach((v, i) => { if (v > 0) bar(i, v, "bar", svg.minutes[i]); });
  if (overlay) overlay.forEach((v, i) => { if (v > 0) bar(i, v, "busy", svg.minutes[i] + " busy"); });
}

async function refreshActivity() {
  const summary = $("activity-summary");
  try {
    const r = await getJson("/v1/stats/activity?minutes=60");
    if (r.status !== 200) return show(summary, problemText(r), "bad");
    const series = r.body.series;
    const pick = (key) => series.map((m) => Number(m[key]));
    const sum = (xs) => xs.reduce((a, b) => a + b, 0);
    for (const key of ["orders", "items", "numbers", "requests"]) {
      const svg = $(`chart-${key}`);
      svg.minutes = series.map((m) => m.minute.slice(11, 16));
      const values = pick(key);
      drawBars(svg, values, key === "requests" ? pick("busy") : null);
      $(`chart-${key}-total`).textContent = `(${sum(values)})`;
    }
    const requests = sum(pick("requests"));
    const busy = sum(pick("busy"));
    show(summary, `since ${series[0].minute}; busy rate ${requests ? ((100 * busy) / requests).toFixed(1) : "0.0"}% of this server's ${requests} answers`, "");
  } catch (e) {
    show(summary, "server unreachable", "bad");
  }
}

let shownOrder = null;
// A list the server pages with `next_after`: its rows go into `<prefix>` (tbody),
// `<prefix>-summary` says how many, `<prefix>-more` loads the next page.
class PagedList {
  // `key(item)`: the rows get a checkbox, and selected() gives the keys of the ticked ones.
  constructor(prefix, { path, query, rows, cells, cls, noun, key }) {
    Object.assign(this, { prefix, path, query, rows, cells, cls, noun, key, after: null,
                          keys: [] });
    $(`${prefix}-more`).addEventListener("click", () => this.load(this.after));
  }

  async load(after = null) {
    const summary = $(`${this.prefix}-summary`);
    const tbody = $(this.prefix);
    if (after === null) {
      tbody.replaceChildren();
      this.keys = [];
    }
    try {
      const q = this.query ? this.query() : new URLSearchParams();
      if (!q.has("limit")) q.set("limit", "50");
      if (after !== null) q.set("after", String(after));
      const r = await getJson(`${this.path()}?${q}`);
      if (r.status !== 200) return show(summary, problemText(r), "bad");
      for (const item of this.rows(r.body)) {
        const row = document.createElement("tr");
        if (this.key) {
          const td = document.createElement("td");
          const box = document.createElement("input");
          box.type = "checkbox";
          box.dataset.index = String(this.keys.length);
          this.keys.push(this.key(item));
          td.appendChild(box);
          row.appendChild(td);
        }
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

  selected() {
    return [...$(this.prefix).querySelectorAll("input[type=checkbox]:checked")]
      .map((box) => this.keys[Number(box.dataset.index)]);
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
  actions: new PagedList("actions", {
    path: () => "/v1/actions",
    query: () => new URLSearchParams({ limit: "20" }),
    rows: (b) => b.actions,
    cells: (a) => [a.action_id, a.at, a.principal, a.role, a.action, a.target, a.status],
    cls: (a) => (a.status >= 400 ? "bad" : ""),
    noun: "action(s)",
  }),
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
  exhausted: new PagedList("exhausted", {
    path: () => "/v1/schedule/exhausted",
    rows: (b) => b.orders,
    cells: (o) => [keyText(o), o.attempts, o.failed_total, o.last_failed_at, o.last_error,
                   o.requeued_at],
    key: (o) => ({ site_code: o.site_code, order_no: o.order_no, lot_no: o.lot_no }),
    cls: () => "bad",
    noun: "order(s) at the attempt limit",
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

// The actions. Each preview is what the server says now (a dry run, the run's counts, the
// expired claims); the confirm button sends the action, and nothing is sent before it.
function showPreview(name, what, lines) {
  $(`${name}-what`).textContent = what;
  listItems($(`${name}-list`), lines);
  $(`${name}-result`).hidden = true;
  $(`${name}-preview`).hidden = false;
}

function showResult(name, text, ok) {
  $(`${name}-preview`).hidden = true;
  const out = $(`${name}-result`);
  out.hidden = false;
  show(out, text, ok ? "ok" : "bad");
}

// "site order lot" per line (spaces, tabs, commas or slashes between the parts).
let runKeys = [];
function previewManualRun() {
  runKeys = [];
  const bad = [];
  for (const line of $("run-lines").value.split("\n")) {
    if (!line.trim()) continue;
    const parts = line.trim().split(/[\s,/]+/);
    if (parts.length !== 3) bad.push(line.trim());
    else runKeys.push({ site_code: parts[0], order_no: parts[1], lot_no: parts[2] });
  }
  if (bad.length || !runKeys.length) {
    return showResult("run", bad.length ? `not "site order lot": ${bad.join("; ")}`
                                        : "no lines given", false);
  }
  showPreview("run", `A manual run of these ${runKeys.length} order line(s); the server skips ` +
              "the ones it may not schedule (already made, in progress, unknown, cancelled, at " +
              "the attempt limit) and says why.", runKeys.map(keyText));
}

async function confirmManualRun() {
  $("run-preview").hidden = true;
  const r = await postJson("/v1/schedule/runs?wait=false", { orders: runKeys });
  if (r.status !== 201) return showResult("run", "no run: " + problemText(r), false);
  const skipped = r.body.skipped.map((k) => `${keyText(k)} (${k.reason})`);
  showResult("run", `run ${r.body.run_id} is ${r.body.status} with ${r.body.counts.wait} ` +
             `item(s)${skipped.length ? "; skipped: " + skipped.join(", ") : ""}`, true);
  refreshRuns();
}

let requeueKeys = [];
async function previewRequeue() {
  requeueKeys = lists.exhausted.selected();
  if (!requeueKeys.length) return showResult("requeue", "tick the orders to re-queue first", false);
  const r = await postJson("/v1/schedule/requeue", { orders: requeueKeys, dry_run: true });
  if (r.status !== 200) return showResult("requeue", "no preview: " + problemText(r), false);
  showPreview("requeue", `Re-queueing gives ${r.body.requeued.length} order(s) a fresh budget of ` +
              "attempts (their failed items stay); the next run picks them.",
              r.body.requeued.map(keyText).concat(
                r.body.skipped.map((k) => `${keyText(k)}: skipped (${k.reason})`)));
}

async function confirmRequeue() {
  $("requeue-preview").hidden = true;
  const r = await postJson("/v1/schedule/requeue", { orders: requeueKeys, dry_run: false });
  if (r.status !== 200) return showResult("requeue", "not re-queued: " + problemText(r), false);
  const skipped = r.body.skipped.map((k) => `${keyText(k)} (${k.reason})`);
  showResult("requeue", `re-queued ${r.body.requeued.length} order(s)` +
             (skipped.length ? `; skipped: ${skipped.join(", ")}` : ""), true);
  lists.exhausted.load();
}

let stopRunId = null;
async function previewStop(listed) {
  // The run as it is now, not as the list last showed it.
  const r = await getJson(`/v1/schedule/runs/${encodeURIComponent(listed.run_id)}`);
  if (r.status !== 200) return showResult("stop", "no preview: " + problemText(r), false);
  const run = r.body;
  if (run.status !== "creating" && run.status !== "running") {
    refreshRuns();
    return showResult("stop", `run ${run.run_id} has ended (${run.status}): nothing to stop`, false);
  }
  stopRunId = run.run_id;
  const c = run.counts;
  showPreview("stop", `Stopping run ${run.run_id} (${run.kind}, ${run.status}): it ends at its ` +
              `next batch boundary as error "stopped by request". ${c.wait} item(s) wait and ` +
              `${c.processing} are being processed: the batch in hand completes, the waiting ` +
              "items are aborted and their orders are candidates again.",
              [`${c.wait} waiting`, `${c.processing} processing`, `${c.success} made so far`]);
}

async function confirmStop() {
  const id = stopRunId;
  $("stop-preview").hidden = true;
  const r = await postJson(`/v1/schedule/runs/${encodeURIComponent(id)}/stop`);
  if (r.status !== 202) return showResult("stop", "not stopped: " + problemText(r), false);
  showResult("stop", `run ${id} will stop at its next batch boundary`, true);
  refreshRuns();
}

async function previewReap() {
  const r = await getJson("/v1/schedule/claims?limit=100");
  if (r.status !== 200) return showResult("reap", "no preview: " + problemText(r), false);
  const expired = r.body.claims.filter((c) => c.expired);
  showPreview("reap", `A reaper pass fails the ${expired.length}` +
              `${r.body.next_after !== null ? "+" : ""} claim(s) whose lease has expired ` +
              "(not a legacy run's), aborts waiting items of dead runs and ends runs whose " +
              "owner stopped heart-beating.",
              expired.map((c) => `item ${c.item_id} of run ${c.run_id}: ${keyText(c)}, attempt ` +
                                 `${c.attempt}, ${c.owner}, lease until ${c.lease_until}`));
}

async function confirmReap() {
  $("reap-preview").hidden = true;
  const r = await postJson("/v1/maintenance/reap");
  if (r.status !== 200) return showResult("reap", "not reaped: " + problemText(r), false);
  showResult("reap", `reaped: ${r.body.released_processing} expired claim(s) failed, ` +
             `${r.body.aborted_waiting} waiting item(s) aborted, ${r.body.dead_runs} dead ` +
             "run(s) ended", true);
  refresh();
}

// More sections' refreshes (events.js adds its own), run with these on every refresh.
const refreshHooks = [];

function refresh() {
  refreshReady();
  refreshActivity();
  refreshInvariants();
  refreshRuns();
  for (const list of Object.values(lists)) list.load();
  for (const hook of refreshHooks) hook();
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
for (const [name, preview, confirm] of [["run", previewManualRun, confirmManualRun],
                                        ["requeue", previewRequeue, confirmRequeue],
                                        ["stop", null, confirmStop],
                                        ["reap", previewReap, confirmReap]]) {
  if (preview) $(`${name}-start`).addEventListener("click", preview);
  $(`${name}-back`).addEventListener("click", () => { $(`${name}-preview`).hidden = true; });
  $(`${name}-confirm`).addEventListener("click", confirm);
}
$("scope-form").addEventListener("submit", (e) => {
  e.preventDefault();
  lookUpScope($("scope").value.trim());
});
$("more").addEventListener("click", () => {
  loadDocuments($("scope").value.trim(), nextAfter);
});

refresh();
