// Overview (readiness, what needs an operator, activity charts, the placement phases, recent
// runs) and the audit trail.
import { el, getJson, getText, link, need, problemText, report, section, table, time } from "./core.js";
import { barChart, parsePhases, phaseChart } from "./charts.js";
import { filterForm, pager } from "./ui.js";
import { runRows, runHead } from "./view-production.js";

async function readiness() {
  const r = await getJson("/readyz");
  if (r.status === 200) {
    return el("p", { id: "ready", class: "ok" }, `ready (schema version ${r.body.schema_version})`);
  }
  report(`/readyz: ${problemText(r)}`);
  return el("p", { id: "ready", class: "bad" }, "not ready");
}

// A count that needs an operator when above zero, linking to its list.
const card = (label, n, href, more) =>
  el("a", { class: `card${Number(n) > 0 ? " attention" : ""}`, href, dataset: { card: label } },
     el("span", { class: "n" }, n === null ? "—" : String(n) + (more ? "+" : "")), label);

async function attention() {
  const [inv, exhausted, claims, endpoints] = await Promise.all([
    need("/v1/invariants"), need("/v1/schedule/exhausted?limit=100"),
    need("/v1/schedule/claims?limit=100"), need("/v1/endpoints")]);
  const bad = inv ? inv.checks.filter((c) => c.violations > 0).length : null;
  const dead = endpoints ? endpoints.endpoints.reduce((a, e) => a + e.deliveries.dead, 0) : null;
  const doubt = endpoints ? endpoints.endpoints.reduce((a, e) => a + e.deliveries.in_doubt, 0) : null;
  return [el("div", { class: "cards" },
    card("invariants violated", bad, "#/"),
    card("orders at the attempt limit", exhausted && exhausted.orders.length, "#/exhausted",
         exhausted && exhausted.next_after !== null),
    card("stuck claims", claims && claims.claims.length, "#/claims", claims && claims.next_after !== null),
    card("dead deliveries", dead, "#/endpoints"),
    card("deliveries in doubt", doubt, "#/endpoints")), invariants(inv)];
}

// The invariants' last check: the violated ones, with their samples.
function invariants(inv) {
  if (!inv) return el("p", { class: "empty" }, "invariants not read");
  const bad = inv.checks.filter((c) => c.violations > 0);
  return el("div", { id: "invariants" },
    el("p", { id: "invariants-summary", class: bad.length ? "bad" : "ok" },
       bad.length ? `${bad.length} of ${inv.checks.length} invariants are violated`
                  : `all ${inv.checks.length} invariants hold`, " (checked ", time(inv.checked_at), ")"),
    bad.length ? table(["id", "what must hold", "violations", "sample"],
                       bad.map((c) => [c.id, c.name, String(c.violations), c.sample.join("\n")]), "") : null);
}

async function activity() {
  const a = await need("/v1/stats/activity?minutes=60");
  if (!a) return el("p", { class: "empty" }, "no activity read");
  const s = a.series;
  const pick = (k) => s.map((m) => Number(m[k]));
  const minutes = s.map((m) => m.minute);
  const requests = pick("requests").reduce((x, y) => x + y, 0);
  const busy = pick("busy").reduce((x, y) => x + y, 0);
  return el("div", {},
    el("div", { class: "charts" },
      barChart({ key: "orders", title: "Orders placed", unit: "orders / min", minutes,
                 values: pick("orders") }),
      barChart({ key: "items", title: "Production orders made", unit: "items / min", minutes,
                 values: pick("items") }),
      barChart({ key: "numbers", title: "Document numbers issued", unit: "numbers / min", minutes,
                 values: pick("numbers") }),
      barChart({ key: "requests", title: "Requests to this server, busy in red", unit: "answers / min",
                 minutes, values: pick("requests"), overlay: pick("busy") })),
    el("p", { id: "activity-summary", class: "note" },
       `busy rate ${requests ? ((100 * busy) / requests).toFixed(1) : "0.0"}% of this server's ` +
       `${requests} answers in the hour`));
}

// The placement phases from /metrics, once the server exports them.
async function phaseBreakdown() {
  const m = await getText("/metrics");
  const rows = m.status === 200 ? parsePhases(m.text) : null;
  if (rows) return phaseChart(rows);
  return el("p", { id: "phases-empty", class: "empty" }, m.status === 200
    ? "No placement phase breakdown: this server does not export onceorder_order_phase_seconds, " +
      "or has placed no order since it started."
    : "No placement phase breakdown: /metrics is not served on this address (serve --metrics-listen).");
}

export async function overview() {
  const [ready, cards, charts, phases, runs] = await Promise.all([
    readiness(), attention(), activity(), phaseBreakdown(), need("/v1/schedule/runs?limit=5")]);
  return el("div", {}, el("h1", {}, "Overview"), ready,
    section("Needs an operator", ...cards),
    section("Activity, last hour", charts, phases),
    section("Recent runs", runs ? table(runHead, runRows(runs.runs),
                                        "No runs yet: a batch run (serve --batch-interval) or a " +
                                        "manual run (Production → Runs) makes one.")
                                : el("p", { class: "empty" }, "runs not read"),
            el("p", {}, el("a", { href: "#/runs" }, "All runs →"))));
}

// The page an audited action's target names.
function targetLink(a) {
  const t = a.target;
  if (t === null || t === undefined) return "";
  if (a.action === "order.cancel") return link("order", t);
  if (a.action.startsWith("run.")) return link("run", t);
  if (a.action === "scope.configure") return link("scope", t);
  if (a.action.startsWith("stock.")) {
    const [w, sku] = String(t).split("/");
    return el("span", {}, link("warehouse", w), `/${sku}`);
  }
  if (a.action.startsWith("endpoint.") || a.action.startsWith("delivery.")) return link("endpoint", t);
  return String(t);
}

const auditActions = ["", "order.cancel", "run.create", "run.stop", "schedule.requeue",
  "maintenance.reap", "scope.configure", "stock.put", "stock.adjust", "source_orders.import",
  "endpoint.put", "endpoint.delete", "delivery.resolve", "delivery.redeliver", "consumer.put",
  "consumer.delete"];

export async function audit(ctx) {
  const q = new URLSearchParams({ limit: "50" });
  for (const k of ["principal", "action", "after"]) if (ctx.params.get(k)) q.set(k, ctx.params.get(k));
  const b = await need(`/v1/actions?${q}`);
  const rows = b ? b.actions.map((a) => [a.action_id, time(a.at), link("principal", a.principal), a.role,
    a.action,
    targetLink(a), a.status === null ? "" : String(a.status), a.outcome]) : [];
  return el("div", {}, el("h1", {}, "Audit trail"),
    el("p", { class: "note" }, "Every state-changing request to an audited route, newest first."),
    filterForm(ctx, [{ name: "principal", label: "Principal", size: 12 },
                     { name: "action", label: "Action", options: auditActions.map((a) => [a, a || "any"]) }]),
    table(["#", "at", "principal", "role", "action", "target", "status", "outcome"], rows,
          "No audited action yet: cancels, runs, re-queues, reaps, stock and endpoint changes appear here.",
          (i) => ({ class: b.actions[i].status >= 400 ? "bad" : "" })),
    b ? pager(ctx, b.next_after, rows.length, "action(s)") : null);
}
