// The console's events section: the endpoints with their undelivered deliveries by status, one
// endpoint's deliveries (click an endpoint) with the operator's actions on them — redeliver
// dead ones, settle an in-doubt one as delivered or send it once more — each after a preview and
// only once confirmed; the named consumers with their lag; the latest events of the feed.
// Loaded after app.js and built on its helpers ($, getJson, postJson, cell, show, problemText,
// showPreview, showResult, refreshHooks). Every value is inserted as text, never as HTML.
"use strict";

let shownEndpoint = null; // the endpoint whose deliveries are open, as last listed
let shownDeliveries = new Map(); // event id (text) → delivery, the rows of that list
let deliveriesAfter = null; // next_after of that list
let deliveryAction = null; // what the open preview will send once confirmed
// No route tells the console its token's role, so a 403 on an action marks the token that got
// it: the actions are not offered again while that token is in use.
let refusedToken;
const tokenRefused = () =>
  refusedToken !== undefined && refusedToken === sessionStorage.getItem(tokenKey);

// A count, marked when it needs a look (non-zero).
function markedCell(row, value, text) {
  cell(row, text === undefined ? String(value) : text);
  if (Number(value) > 0) row.lastChild.className = "attention";
}

// An event id as its exact JSON number: past 2^53 a JavaScript number would change it.
const idJson = (id) => JSON.rawJSON(String(id));
const seconds = (s) => Number(s).toFixed(1);
const endpointPath = (name, tail = "") => `/v1/endpoints/${encodeURIComponent(name)}${tail}`;

async function refreshEndpoints() {
  const summary = $("endpoints-summary");
  const tbody = $("endpoints");
  try {
    const r = await getJson("/v1/endpoints");
    tbody.replaceChildren();
    if (r.status !== 200) return show(summary, problemText(r), "bad");
    let dead = 0;
    let inDoubt = 0;
    for (const ep of r.body.endpoints) {
      const d = ep.deliveries;
      const row = document.createElement("tr");
      row.dataset.name = ep.name;
      [ep.name, ep.url, ep.types.length ? ep.types.join(", ") : "all", ep.delivery]
        .forEach((t) => cell(row, t));
      row.children[1].className = "url";
      cell(row, d.sending ? `${d.pending} (${d.sending} sending)` : String(d.pending));
      markedCell(row, d.dead);
      markedCell(row, d.in_doubt);
      markedCell(row, d.lag_seconds, seconds(d.lag_seconds));
      if (shownEndpoint && shownEndpoint.name === ep.name) {
        row.classList.add("selected");
        shownEndpoint = ep;
      }
      dead += d.dead;
      inDoubt += d.in_doubt;
      tbody.appendChild(row);
    }
    const n = r.body.endpoints.length;
    if (!n) return show(summary, "no endpoints (PUT /v1/endpoints/{name} adds one)", "");
    show(summary, `${n} endpoint(s)` + (dead + inDoubt ? `; ${dead} dead and ${inDoubt} ` +
         "in-doubt deliveries wait for an operator" : ""), dead + inDoubt ? "bad" : "");
  } catch (e) {
    show(summary, "server unreachable", "bad");
  }
}

async function refreshConsumers() {
  const summary = $("consumers-summary");
  const tbody = $("consumers");
  try {
    const r = await getJson("/v1/consumers");
    tbody.replaceChildren();
    if (r.status !== 200) return show(summary, problemText(r), "bad");
    for (const c of r.body.consumers) {
      const row = document.createElement("tr");
      row.dataset.name = c.name;
      cell(row, c.name);
      cell(row, c.after);
      // The server counts up to 100,000 events behind.
      markedCell(row, c.lag_events, c.lag_events >= 100000 ? "100000+" : String(c.lag_events));
      markedCell(row, c.lag_seconds, seconds(c.lag_seconds));
      cell(row, c.updated_at);
      tbody.appendChild(row);
    }
    const n = r.body.consumers.length;
    show(summary, n ? `${n} consumer(s)` : "no consumers (PUT /v1/consumers/{name} adds one)", "");
  } catch (e) {
    show(summary, "server unreachable", "bad");
  }
}

// What the last attempt answered, in one cell.
function lastOutcome(d) {
  const status = d.last_status !== null ? `HTTP ${d.last_status}` : "";
  return [status, d.last_error || ""].filter((t) => t).join(": ");
}

// The status, with the operator's last word on it and, when pending, the time of the next
// attempt (a retry waits at most an hour, so the time of day is enough; the title has it all).
function statusText(d) {
  const text = d.resolution ? `${d.status} (${d.resolution})` : d.status;
  return d.status === "pending" && d.next_at ? `${text}, next ${d.next_at.slice(11, 19)}` : text;
}

function actionButton(td, text, cls, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = cls;
  b.textContent = text;
  b.addEventListener("click", onClick);
  td.appendChild(b);
}

function deliveryRow(d, ticked) {
  const id = String(d.event_id);
  const row = document.createElement("tr");
  row.dataset.event = id;
  row.dataset.status = d.status;
  const offer = !tokenRefused();
  const box = document.createElement("td");
  if (d.status === "dead" && offer) {
    const input = document.createElement("input");
    input.type = "checkbox";
    input.checked = ticked.has(id);
    input.setAttribute("aria-label", `select event ${id}`);
    box.appendChild(input);
  }
  row.appendChild(box);
  [id, d.type, d.key, statusText(d), d.attempt, lastOutcome(d), d.blocked_by]
    .forEach((t) => cell(row, t === null || t === undefined ? "" : String(t)));
  if (d.status === "pending" && d.next_at) row.children[4].title = `next attempt at ${d.next_at}`;
  const actions = document.createElement("td");
  if (offer && d.status === "dead") {
    actionButton(actions, "Redeliver…", "redeliver", () => previewRedeliver([id]));
  }
  if (offer && d.status === "in_doubt") {
    actionButton(actions, "Mark delivered…", "mark-delivered", () => previewResolve(id, true));
    actionButton(actions, "Send again…", "send-again", () => previewResolve(id, false));
  }
  row.appendChild(actions);
  if (d.status === "dead" || d.status === "in_doubt") row.children[4].className = "attention";
  return row;
}

// One page of the open endpoint's deliveries (the first when `after` is null); the ticked
// boxes stay ticked when the list is read again.
async function loadDeliveries(after = null) {
  if (!shownEndpoint) return;
  const summary = $("deliveries-summary");
  const tbody = $("deliveries");
  const ticked = new Set(selectedDeliveries());
  const status = $("deliveries-status").value;
  const q = new URLSearchParams({ limit: "50" });
  if (status) q.set("status", status);
  if (after !== null) q.set("after", String(after));
  try {
    const r = await getJson(`${endpointPath(shownEndpoint.name, "/deliveries")}?${q}`);
    if (r.status !== 200) return show(summary, problemText(r), "bad");
    if (after === null) {
      tbody.replaceChildren();
      shownDeliveries = new Map();
    }
    for (const d of r.body.deliveries) {
      shownDeliveries.set(String(d.event_id), d);
      tbody.appendChild(deliveryRow(d, ticked));
    }
    deliveriesAfter = r.body.next_after;
    $("deliveries-more").hidden = deliveriesAfter === null;
    const n = tbody.children.length;
    const what = `${status ? status.replace("_", "-") + " " : ""}deliveries`;
    show(summary, n ? `${n} ${what}${deliveriesAfter !== null ? ", more below" : ""}`
                    : `no ${what}`, "");
    const dead = [...shownDeliveries.values()].some((d) => d.status === "dead");
    $("redeliver-ticked").hidden = !dead || tokenRefused();
    $("deliveries-refused").hidden = !tokenRefused();
  } catch (e) {
    show(summary, "server unreachable", "bad");
  }
}

function selectedDeliveries() {
  return [...$("deliveries").querySelectorAll("input[type=checkbox]:checked")]
    .map((box) => box.closest("tr").dataset.event);
}

// A click on an endpoint opens its deliveries beside it, the ones that wait for an operator
// first.
async function openEndpoint(name) {
  const r = await getJson(endpointPath(name));
  if (r.status !== 200) return show($("endpoints-summary"), problemText(r), "bad");
  shownEndpoint = r.body;
  const d = r.body.deliveries;
  $("deliveries-status").value = d.dead ? "dead" : d.in_doubt ? "in_doubt" : "";
  $("deliveries-title").textContent =
    `Deliveries to ${r.body.name} (${r.body.delivery}, at most ${r.body.max_attempts} attempt(s))`;
  $("delivery-preview").hidden = true;
  $("delivery-result").hidden = true;
  $("deliveries").replaceChildren();
  for (const row of $("endpoints").children) {
    row.classList.toggle("selected", row.dataset.name === name);
  }
  $("deliveries-panel").hidden = false;
  await loadDeliveries();
  $("deliveries-panel").scrollIntoView({ block: "start" });
}

function deliveryLine(d) {
  const last = lastOutcome(d);
  return `event ${d.event_id} (${d.type}, key ${d.key}): ${d.attempt} attempt(s)` +
         (last ? `, last: ${last}` : "");
}

function previewRedeliver(ids) {
  if (!ids.length) return showResult("delivery", "tick the dead deliveries to redeliver first", false);
  const ep = shownEndpoint;
  deliveryAction = { kind: "redeliver", endpoint: ep.name, ids };
  $("delivery-confirm").textContent = `Confirm: redeliver ${ids.length}`;
  showPreview("delivery", `Redeliver ${ids.length} dead delivery(ies) to ${ep.name} ` +
              `(${ep.url}): each becomes pending with a fresh budget of ${ep.max_attempts} ` +
              "attempt(s) and is sent again within about a second; the later events of its key " +
              "wait until it is delivered. Nothing is redelivered if one of them is no longer " +
              "dead.", ids.map((id) => deliveryLine(shownDeliveries.get(id))));
  $("delivery-preview").scrollIntoView({ block: "nearest" });
}

// The delivery as the server has it now, not as the list last showed it.
async function previewResolve(id, delivered) {
  const ep = shownEndpoint;
  const q = new URLSearchParams({ after: String(BigInt(id) - 1n), limit: "1" });
  const r = await getJson(`${endpointPath(ep.name, "/deliveries")}?${q}`);
  if (r.status !== 200) return showResult("delivery", "no preview: " + problemText(r), false);
  const d = r.body.deliveries[0];
  if (!d || String(d.event_id) !== id || d.status !== "in_doubt") {
    loadDeliveries();
    return showResult("delivery", `event ${id} is ${d && String(d.event_id) === id ? d.status
                      : "gone"} now, not in doubt: nothing to settle`, false);
  }
  deliveryAction = { kind: "resolve", endpoint: ep.name, id, delivered };
  $("delivery-confirm").textContent = delivered ? "Confirm: mark delivered" : "Confirm: send again";
  showPreview("delivery", delivered
    ? `Mark event ${id} delivered to ${ep.name}: the receiver got it; OnceOrder will not send ` +
      `it again, and the later events of key ${d.key} that wait for it go out.`
    : `Send event ${id} to ${ep.name} again: OnceOrder will send it once more; only if you ` +
      "know the receiver did not get it (this endpoint is at most once: a receiver that got " +
      "it would get it twice).", [deliveryLine(d), `last sent at ${d.sent_at}`]);
  $("delivery-preview").scrollIntoView({ block: "nearest" });
}

async function confirmDeliveryAction() {
  const a = deliveryAction;
  $("delivery-preview").hidden = true;
  const r = a.kind === "redeliver"
    ? await postJson(endpointPath(a.endpoint, "/redeliver"), { event_ids: a.ids.map(idJson) })
    : await postJson(endpointPath(a.endpoint, "/resolve"),
                     { event_id: idJson(a.id), delivered: a.delivered });
  if (r.status === 403) refusedToken = sessionStorage.getItem(tokenKey);
  if (r.status !== 200) {
    showResult("delivery", (a.kind === "redeliver" ? "not redelivered: " : "not settled: ") +
               problemText(r), false);
  } else if (a.kind === "redeliver") {
    showResult("delivery", `redelivered event(s) ${r.body.redelivered.join(", ")} to ` +
               `${a.endpoint}: pending again, sent within about a second`, true);
  } else {
    const d = r.body;
    showResult("delivery", `event ${d.event_id} to ${a.endpoint} is ${d.status}` +
               (d.resolution ? ` (${d.resolution})` : ""), true);
  }
  $("delivery-result").scrollIntoView({ block: "nearest" });
  await Promise.all([loadDeliveries(), refreshEndpoints()]);
}

// The latest events. The feed pages only forward, so the console keeps its cursor: the first
// read walks the feed from its start (at most `feedPagesPerRead` pages of 1,000), later reads
// go on from where the last one ended, and the newest 20 events seen are listed. "More" reads
// on when a read stopped before the feed's head.
const feedPagesPerRead = 10;
const feedPage = 1000;
let feedCursor = "0";
let feedLatest = []; // newest first
// A new filter starts a new walk; a read of an older one (or a second read of this one, from a
// live refresh while the first still walks) stops.
let feedGeneration = 0;
let feedReading = null;

async function readFeed() {
  const generation = feedGeneration;
  if (feedReading === generation) return;
  feedReading = generation;
  const summary = $("feed-summary");
  try {
    let atHead = false;
    for (let i = 0; i < feedPagesPerRead && !atHead; ++i) {
      const q = new URLSearchParams({ after: feedCursor, limit: String(feedPage) });
      if ($("feed-types").value) q.set("types", $("feed-types").value);
      const r = await getJson(`/v1/events?${q}`);
      if (generation !== feedGeneration) return;
      if (r.status !== 200) return show(summary, problemText(r), "bad");
      feedLatest = r.body.events.slice(-20).reverse().concat(feedLatest).slice(0, 20);
      feedCursor = r.body.next_after;
      atHead = r.body.events.length < feedPage;
    }
    renderFeed();
    $("feed-more").hidden = atHead;
    show(summary, (feedLatest.length ? `the newest ${feedLatest.length} event(s) read, newest first`
                                     : "no events yet") +
         (atHead ? "" : "; the feed goes on past them: More reads further"), "");
  } catch (e) {
    show(summary, "server unreachable", "bad");
  } finally {
    if (feedReading === generation) feedReading = null;
  }
}

function renderFeed() {
  const tbody = $("feed");
  tbody.replaceChildren();
  for (const e of feedLatest) {
    const row = document.createElement("tr");
    row.dataset.event = String(e.id);
    [String(e.id), e.type, e.key, e.occurred_at].forEach((t) => cell(row, t));
    // The start of the data on one line (CSS cuts it), all of it in the title.
    const td = document.createElement("td");
    const data = document.createElement("div");
    data.className = "data";
    data.textContent = JSON.stringify(e.data);
    data.title = data.textContent;
    td.appendChild(data);
    row.appendChild(td);
    tbody.appendChild(row);
  }
}

function refreshEvents() {
  refreshEndpoints();
  refreshConsumers();
  readFeed();
  if (shownEndpoint) loadDeliveries();
}

$("endpoints").addEventListener("click", (e) => {
  const row = e.target.closest("tr");
  if (row) openEndpoint(row.dataset.name);
});
$("deliveries-form").addEventListener("submit", (e) => {
  e.preventDefault();
  $("delivery-result").hidden = true;
  loadDeliveries();
});
$("deliveries-more").addEventListener("click", () => loadDeliveries(deliveriesAfter));
$("redeliver-ticked").addEventListener("click", () => previewRedeliver(selectedDeliveries()));
$("delivery-back").addEventListener("click", () => { $("delivery-preview").hidden = true; });
$("delivery-confirm").addEventListener("click", confirmDeliveryAction);
$("feed-types").addEventListener("change", () => {
  feedGeneration += 1;
  feedCursor = "0";
  feedLatest = [];
  readFeed();
});
$("feed-more").addEventListener("click", readFeed);

refreshHooks.push(refreshEvents);
refreshEvents();
