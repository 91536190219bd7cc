// Hand-off: the endpoints with their undelivered deliveries, one endpoint's deliveries with
// the operator's actions (redeliver dead ones; settle an in-doubt one as delivered or send it
// once more), the named consumers with their lag, and the latest events of the feed.
import { el, facts, getJson, keyLinks, link, need, postJson, section, table, time } from "./core.js";
import { action, failed, filterForm, noteRefusal, pager, tokenRefused } from "./ui.js";

// A count, marked when it needs a look (non-zero).
const attention = (n, text) =>
  el("span", { class: Number(n) > 0 ? "attention" : "" }, text ?? String(n));
const seconds = (s) => Number(s).toFixed(1);
const endpointPath = (name, tail = "") => `/v1/endpoints/${encodeURIComponent(name)}${tail}`;
// An event id as its exact JSON number: past 2^53 a JavaScript number would change it.
const idJson = (id) => JSON.rawJSON(String(id));

function endpointCells(e) {
  const d = e.deliveries;
  return [link("endpoint", e.name), el("span", { class: "url" }, e.url),
          e.types.length ? e.types.join(", ") : "all", e.delivery,
          d.sending ? `${d.pending} (${d.sending} sending)` : String(d.pending),
          attention(d.dead), attention(d.in_doubt), attention(d.lag_seconds, seconds(d.lag_seconds))];
}

export async function endpointList() {
  const b = await need("/v1/endpoints");
  const eps = b ? b.endpoints : [];
  const dead = eps.reduce((a, e) => a + e.deliveries.dead, 0);
  const doubt = eps.reduce((a, e) => a + e.deliveries.in_doubt, 0);
  const waiting = dead + doubt
    ? `; ${dead} dead and ${doubt} in-doubt deliveries wait for an operator` : "";
  return el("div", {}, el("h1", {}, "Endpoints"),
    eps.length ? el("p", { id: "endpoints-summary", class: waiting ? "bad" : "" },
                    `${eps.length} endpoint(s)${waiting}`) : null,
    table(["name", "url", "types", "mode", "pending", "dead", "in doubt", "lag (s)"],
          eps.map(endpointCells),
          "No endpoints: PUT /v1/endpoints/{name} adds one, and OnceOrder pushes each event to it.",
          (i) => ({ dataset: { name: eps[i].name } })));
}

function lastOutcome(d) {
  return [d.last_status !== null ? `HTTP ${d.last_status}` : "", d.last_error || ""]
    .filter((t) => t).join(": ");
}

function deliveryLine(d) {
  const last = lastOutcome(d);
  return `event ${d.event_id} (${d.type}, key ${d.key}): ${d.attempt} attempt(s)` +
         (last ? `, last: ${last}` : "");
}

// Redeliver the deliveries `picked()` gives (one row's, or the ticked ones).
function redeliverAction(ctx, ep, picked, label) {
  return action({ label, name: "redeliver",
    preview: async () => {
      const list = picked();
      if (!list.length) return { refuse: "tick the dead deliveries to redeliver first" };
      return {
        what: `Redeliver ${list.length} dead delivery(ies) to ${ep.name} (${ep.url}): each becomes ` +
              `pending with a fresh budget of ${ep.max_attempts} attempt(s) and is sent again within ` +
              "about a second; the later events of its key wait until it is delivered. Nothing is " +
              "redelivered if one of them is no longer dead.",
        lines: list.map(deliveryLine), confirm: `Confirm: redeliver ${list.length}` };
    },
    run: async () => {
      const ids = picked().map((d) => idJson(d.event_id));
      const r = await postJson(endpointPath(ep.name, "/redeliver"), { event_ids: ids });
      noteRefusal(r);
      if (r.status !== 200) return failed("not redelivered", r);
      return { ok: true, text: `redelivered event(s) ${r.body.redelivered.join(", ")} to ${ep.name}: ` +
                               "pending again, sent within about a second" };
    },
    done: ctx.refresh });
}

// The delivery as the server has it now, not as the list last showed it.
async function deliveryNow(ep, id) {
  const q = new URLSearchParams({ after: String(BigInt(id) - 1n), limit: "1" });
  const r = await getJson(`${endpointPath(ep.name, "/deliveries")}?${q}`);
  const d = r.status === 200 ? r.body.deliveries[0] : null;
  return d && String(d.event_id) === id ? d : null;
}

function resolveAction(ctx, ep, d, delivered) {
  const id = String(d.event_id);
  return action({ label: delivered ? "Mark delivered…" : "Send again…",
                  name: delivered ? "mark-delivered" : "send-again",
    preview: async () => {
      const now = await deliveryNow(ep, id);
      if (!now || now.status !== "in_doubt") {
        return { refuse: `event ${id} is ${now ? now.status : "gone"} now, not in doubt: nothing to settle` };
      }
      return {
        what: delivered
          ? `Mark event ${id} delivered to ${ep.name}: the receiver got it; OnceOrder will not send ` +
            `it again, and the later events of key ${now.key} that wait for it go out.`
          : `Send event ${id} to ${ep.name} again: OnceOrder will send it once more; only if you know ` +
            "the receiver did not get it (this endpoint is at most once: a receiver that got it " +
            "would get it twice).",
        lines: [deliveryLine(now), `last sent at ${now.sent_at}`],
        confirm: delivered ? "Confirm: mark delivered" : "Confirm: send again" };
    },
    run: async () => {
      const r = await postJson(endpointPath(ep.name, "/resolve"), { event_id: idJson(id), delivered });
      noteRefusal(r);
      if (r.status !== 200) return failed("not settled", r);
      return { ok: true, text: `event ${r.body.event_id} to ${ep.name} is ${r.body.status}` +
                               (r.body.resolution ? ` (${r.body.resolution})` : "") };
    },
    done: ctx.refresh });
}

// The status, with the operator's last word on it and, when pending, the next attempt's time.
function statusCell(d) {
  const text = d.resolution ? `${d.status} (${d.resolution})` : d.status;
  const shown = d.status === "pending" && d.next_at ? `${text}, next ${d.next_at.slice(11, 19)}` : text;
  return attention(d.status === "dead" || d.status === "in_doubt" ? 1 : 0, shown);
}

function deliveryRows(ctx, ep, list, boxes) {
  return list.map((d, i) => {
    const acts = el("span", {});
    if (!tokenRefused() && d.status === "dead") {
      acts.append(redeliverAction(ctx, ep, () => [d], "Redeliver…"));
    }
    if (!tokenRefused() && d.status === "in_doubt") {
      acts.append(resolveAction(ctx, ep, d, true), resolveAction(ctx, ep, d, false));
    }
    return [boxes[i] || "", String(d.event_id), d.type, eventKey(d.type, d.key), statusCell(d),
            String(d.attempt), lastOutcome(d), d.blocked_by === null ? "" : String(d.blocked_by), acts];
  });
}

const deliveryStatuses = [["dead", "dead (needs an operator)"], ["in_doubt", "in doubt (needs an operator)"],
  ["pending", "pending (and sending)"], ["sending", "sending"], ["delivered", "delivered"], ["all", "any"]];

function endpointFacts(ep) {
  const d = ep.deliveries;
  return facts([["url", ep.url], ["types", ep.types.length ? ep.types.join(", ") : "all"],
    ["mode", ep.delivery], ["attempts", `at most ${ep.max_attempts}, ${ep.backoff_seconds} s apart at first`],
    ["pending", String(d.pending)], ["dead", attention(d.dead)], ["in doubt", attention(d.in_doubt)],
    ["lag", `${seconds(d.lag_seconds)} s`]]);
}

export async function endpointPage(ctx) {
  const name = ctx.args[0];
  const ep = await need(endpointPath(name));
  const head = el("h1", {}, `Endpoint ${name}`);
  if (!ep) return el("div", {}, head, el("p", { class: "empty" }, "No endpoint shown."));
  const d = ep.deliveries;
  // The ones that wait for an operator first, unless the address names a status.
  const status = ctx.params.get("status") || (d.dead ? "dead" : d.in_doubt ? "in_doubt" : "all");
  const q = new URLSearchParams({ limit: "50" });
  if (status !== "all") q.set("status", status);
  if (ctx.params.get("after")) q.set("after", ctx.params.get("after"));
  const b = await need(`${endpointPath(name, "/deliveries")}?${q}`);
  const list = b ? b.deliveries : [];
  const boxes = list.map((x) => (x.status === "dead" && !tokenRefused()
    ? el("input", { type: "checkbox", "aria-label": `select event ${x.event_id}` }) : null));
  const ticked = () => list.filter((x, i) => boxes[i] && boxes[i].checked);
  const form = filterForm({ ...ctx, params: new URLSearchParams({ status }) },
                          [{ name: "status", label: "Status", options: deliveryStatuses }]);
  return el("div", { dataset: { endpoint: name } }, head, section("Endpoint", endpointFacts(ep)),
    section("Deliveries", form,
      tokenRefused() ? el("p", { class: "bad", id: "actions-refused" }, "This token only reads (the " +
                          "server refused an action with 403): no actions are offered.") : null,
      table(["", "event", "type", "key", "status", "attempt", "last outcome", "blocked by", ""],
            deliveryRows(ctx, ep, list, boxes),
            `No ${status !== "all" ? status.replace("_", "-") + " " : ""}deliveries.`,
            (i) => ({ dataset: { event: String(list[i].event_id), status: list[i].status } })),
      b ? pager(ctx, b.next_after, list.length, "deliveries") : null,
      boxes.some((x) => x) ? el("div", { class: "actions" },
        redeliverAction(ctx, ep, ticked, "Redeliver the ticked dead deliveries…")) : null));
}

export async function consumerList() {
  const b = await need("/v1/consumers");
  const list = b ? b.consumers : [];
  // The server counts up to 100,000 events behind.
  const behind = (c) => attention(c.lag_events, c.lag_events >= 100000 ? "100000+" : String(c.lag_events));
  return el("div", {}, el("h1", {}, "Consumers"),
    table(["name", "position", "events behind", "seconds behind", "updated"],
          list.map((c) => [c.name, c.after, behind(c), attention(c.lag_seconds, seconds(c.lag_seconds)),
                           time(c.updated_at)]),
          "No consumers: PUT /v1/consumers/{name} keeps a reader's place in the feed under a name.",
          (i) => ({ dataset: { name: list[i].name } })));
}

// An event's key as a link to what it names.
function eventKey(type, key) {
  if (type.startsWith("order.")) return link("order", key);
  if (type === "run.finished") return link("run", key);
  if (type === "production_order.created") {
    const [site_code, order_no, lot_no] = String(key).split("/");
    return keyLinks({ site_code, order_no, lot_no });
  }
  if (type === "document.issued") {
    const cut = String(key).lastIndexOf("/");
    return el("span", {}, link("scope", key.slice(0, cut)), key.slice(cut));
  }
  return key;
}

// The feed pages only forward, so the console keeps its cursor per filter: the first read walks
// the feed from its start (at most 10 pages of 1,000), later reads go on from where the last one
// ended; the newest 50 seen are listed, newest first. One read per filter at a time (a live
// draw and a navigation may ask at once): a second asker waits for the first's answer.
const feedState = new Map(); // types → {cursor, latest}
const feedReads = new Map(); // types → the read in progress
const feedPage = 1000;

async function walkFeed(types) {
  const s = feedState.get(types) || { cursor: "0", latest: [] };
  let atHead = false;
  for (let i = 0; i < 10 && !atHead; ++i) {
    const q = new URLSearchParams({ after: s.cursor, limit: String(feedPage) });
    if (types) q.set("types", types);
    const b = await need(`/v1/events?${q}`);
    if (!b) return null;
    s.latest = b.events.slice(-50).reverse().concat(s.latest).slice(0, 50);
    s.cursor = b.next_after;
    atHead = b.events.length < feedPage;
  }
  feedState.set(types, s);
  return { latest: s.latest, atHead };
}

function readFeed(types) {
  if (!feedReads.has(types)) {
    feedReads.set(types, walkFeed(types).finally(() => feedReads.delete(types)));
  }
  return feedReads.get(types);
}

const eventTypes = ["order.placed", "order.cancelled", "production_order.created", "document.issued",
                    "run.finished"];

export async function eventList(ctx) {
  const types = ctx.params.get("types") || "";
  const f = await readFeed(types);
  const data = (e) => el("div", { class: "data", title: JSON.stringify(e.data) }, JSON.stringify(e.data));
  return el("div", {}, el("h1", {}, "Events"),
    el("p", { class: "note" }, "The newest 50 events of the feed, newest first." +
       (f && !f.atHead ? " The feed goes on past them: Refresh reads further." : "")),
    filterForm(ctx, [{ name: "types", label: "Type",
                       options: [["", "any"], ...eventTypes.map((t) => [t, t])] }]),
    f ? table(["event", "type", "key", "occurred", "data"],
              f.latest.map((e) => [String(e.id), e.type, eventKey(e.type, e.key), time(e.occurred_at),
                                   data(e)]),
              "No events yet: placing an order, issuing a number or finishing a run writes one.",
              (i) => ({ dataset: { event: String(f.latest[i].id) } })) : null);
}
