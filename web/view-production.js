// Production: runs (and a manual run), one run (counts, items, skip report, stop), schedule
// items, one item's timeline, stuck claims (and reap), orders at the attempt limit (and
// re-queue), production orders.
import { el, facts, getJson, keyLinks, keyText, link, need, postJson, section, table, time } from "./core.js";
import { action, failed, filterForm, pager } from "./ui.js";

const countKeys = ["wait", "processing", "success", "failed", "aborted"];
export const runHead = ["run", "kind", "status", ...countKeys, "created", "finished", "error"];
export const runRows = (runs) => runs.map((r) => [link("run", r.run_id), r.kind, r.status,
  ...countKeys.map((k) => String(r.counts[k])), time(r.created_at), time(r.finished_at), r.error || ""]);

// The list's query: a page of 50 with the address's filters.
function listQuery(ctx, names) {
  const q = new URLSearchParams({ limit: "50" });
  for (const k of names) if (ctx.params.get(k)) q.set(k, ctx.params.get(k));
  return q;
}

// "site order lot" per line (spaces, tabs, commas or slashes between the parts).
function parseLines(text) {
  const keys = [];
  const bad = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const parts = line.trim().split(/[\s,/]+/);
    if (parts.length !== 3) bad.push(line.trim());
    else keys.push({ site_code: parts[0], order_no: parts[1], lot_no: parts[2] });
  }
  return { keys, bad };
}

function manualRun(ctx) {
  const lines = el("textarea", { id: "run-lines", rows: 3, cols: 40, placeholder: "W1 O-0ARN6Z2K00000 1" });
  let keys = [];
  const start = action({ label: "Preview the run…", name: "run",
    preview: async () => {
      const p = parseLines(lines.value);
      keys = p.keys;
      if (p.bad.length) return { refuse: `not "site order lot": ${p.bad.join("; ")}` };
      if (!keys.length) return { refuse: "no lines given" };
      return { what: `A manual run of these ${keys.length} order line(s); the server skips the ones it ` +
                     "may not schedule (already made, in progress, unknown, cancelled, at the attempt " +
                     "limit) and says why.",
               lines: keys.map(keyText), confirm: "Confirm: start the run" };
    },
    run: async () => {
      const r = await postJson("/v1/schedule/runs?wait=false", { orders: keys });
      if (r.status !== 201) return failed("no run", r);
      const skipped = r.body.skipped.map((k) => `${keyText(k)} (${k.reason})`);
      return { ok: true, text: `run ${r.body.run_id} is ${r.body.status} with ${r.body.counts.wait} ` +
                               `item(s)${skipped.length ? "; skipped: " + skipped.join(", ") : ""}` };
    },
    done: ctx.refresh });
  return el("div", {}, el("label", {}, "Order lines, one per line: site order lot", el("br"), lines),
            el("br"), start);
}

export async function runList(ctx) {
  const b = await need(`/v1/schedule/runs?${listQuery(ctx, ["status"])}`);
  const statuses = ["creating", "running", "done", "error"].map((s) => [s, s]);
  return el("div", {}, el("h1", {}, "Runs"),
    filterForm(ctx, [{ name: "status", label: "Status", options: [["", "any"], ...statuses] }]),
    table(runHead, b ? runRows(b.runs) : [],
          "No runs: a batch run (serve --batch-interval) or a manual run below makes one.",
          (i) => ({ class: b.runs[i].status === "error" ? "bad" : "" })),
    b ? el("p", { class: "note" }, `the ${b.runs.length} newest`) : null,
    section("Manual run", manualRun(ctx)));
}

// The skip report: a run's POST answer, as the audit trail keeps it (runs made through the
// API; a batch run records none).
async function skipReport(runId) {
  const r = await getJson("/v1/actions?action=run.create&limit=200");
  const row = r.status === 200 ? r.body.actions.find((a) => String(a.target) === String(runId)) : null;
  if (!row) {
    return el("p", { class: "empty" }, "No skip report: only runs made through the API record one " +
                                       "(in the audit trail), and only recently.");
  }
  const answer = row.summary && row.summary.answer;
  if (!answer || !answer.skipped) {
    return el("p", { class: "empty" }, "The run's answer was too large for the audit trail to keep.");
  }
  return table(["site/order/lot", "reason"], answer.skipped.map((k) => [keyLinks(k), k.reason]),
               "Nothing skipped: every line asked for got an item.");
}

function stopAction(ctx, run) {
  return action({ label: "Stop this run…", name: "stop",
    preview: async () => {
      const r = await getJson(`/v1/schedule/runs/${run.run_id}`);
      const now = r.status === 200 ? r.body : null;
      if (!now || (now.status !== "creating" && now.status !== "running")) {
        return { refuse: `run ${run.run_id} has ended${now ? ` (${now.status})` : ""}: nothing to stop` };
      }
      const c = now.counts;
      return { what: `Stopping run ${now.run_id} (${now.kind}, ${now.status}): it ends at its next batch ` +
                     `boundary as error "stopped by request". The batch in hand completes; the ${c.wait} ` +
                     "waiting item(s) are aborted and their orders are candidates again.",
               lines: [`${c.wait} waiting`, `${c.processing} processing`, `${c.success} made so far`],
               confirm: "Confirm: stop the run" };
    },
    run: async () => {
      const r = await postJson(`/v1/schedule/runs/${run.run_id}/stop`);
      if (r.status !== 202) return failed("not stopped", r);
      return { ok: true, text: `run ${run.run_id} will stop at its next batch boundary` };
    },
    done: ctx.refresh });
}

export async function runPage(ctx) {
  const id = ctx.args[0];
  const run = await need(`/v1/schedule/runs/${encodeURIComponent(id)}`);
  const head = el("h1", {}, `Run ${id}`);
  if (!run) return el("div", {}, head, el("p", { class: "empty" }, "No run shown."));
  const [items, skipped] = await Promise.all([
    need(`/v1/schedule/items?run_id=${encodeURIComponent(id)}&limit=100`), skipReport(id)]);
  const live = run.status === "creating" || run.status === "running";
  const more = items && items.next_after !== null
    ? el("a", { href: `#/items?run_id=${id}` }, "All of its items →") : null;
  return el("div", { dataset: { run: id, status: run.status } }, head,
    section("Run", facts([["run", id], ["kind", run.kind], ["status", run.status],
                          ["created", time(run.created_at)], ["finished", time(run.finished_at)],
                          ["error", run.error]]),
      table(countKeys, [countKeys.map((k) => String(run.counts[k]))], ""),
      el("div", { class: "actions" }, live ? stopAction(ctx, run)
        : el("p", { class: "note" }, `The run is ${run.status}: nothing to stop.`))),
    section("Items", items ? itemTable(items.items) : null, more),
    section("Skip report", skipped));
}

function itemTable(items) {
  return table(["item", "run", "site/order/lot", "state", "attempt", "updated", "error"],
    items.map((i) => [link("item", i.item_id), link("run", i.run_id), keyLinks(i), i.status,
                      String(i.attempt), time(i.updated_at), i.error || ""]),
    "No items match: a run makes one per order line it schedules.",
    (n) => ({ class: items[n].status === "failed" ? "bad" : "" }));
}

export async function itemList(ctx) {
  const q = listQuery(ctx, ["status", "site_code", "order_no", "lot_no", "run_id", "after"]);
  const b = await need(`/v1/schedule/items?${q}`);
  return el("div", {}, el("h1", {}, "Schedule items"),
    filterForm(ctx, [
      { name: "status", label: "State", options: [["", "any"], ...countKeys.map((s) => [s, s])] },
      { name: "site_code", label: "Site", size: 8 }, { name: "order_no", label: "Order no", size: 10 },
      { name: "lot_no", label: "Lot", size: 4 }, { name: "run_id", label: "Run", numeric: true, size: 6 }]),
    b ? itemTable(b.items) : null, b ? pager(ctx, b.next_after, b.items.length, "item(s)") : null);
}

export async function itemPage(ctx) {
  const id = ctx.args[0];
  const b = await need(`/v1/schedule/items/${encodeURIComponent(id)}/timeline`);
  const head = el("h1", {}, `Item ${id}`);
  if (!b) return el("div", {}, head, el("p", { class: "empty" }, "No item shown."));
  const i = b.item;
  const doc = (e) => (e.document_number ? link("scope", `PO-${i.site_code}`, e.document_number) : "");
  return el("div", { dataset: { item: id } }, head,
    section("Item", facts([["item", id], ["run", link("run", i.run_id)], ["site/order/lot", keyLinks(i)],
      ["state", i.status], ["attempt", String(i.attempt)], ["owner", i.owner],
      ["lease until", time(i.lease_until)], ["error", i.error], ["created", time(i.created_at)],
      ["updated", time(i.updated_at)]])),
    section(`Timeline (${b.events.length} event(s)${b.truncated ? ", the oldest 1000" : ""})`,
      table(["at", "event", "state", "attempt", "owner", "lease until", "document", "error"],
            b.events.map((e) => [time(e.at), e.kind, e.status, String(e.attempt), e.owner,
                                 time(e.lease_until), doc(e), e.error]),
            "No events.", (n) => ({ dataset: { kind: b.events[n].kind } }))));
}

function reapAction(ctx) {
  return action({ label: "Reap now…", name: "reap",
    preview: async () => {
      const b = await need("/v1/schedule/claims?limit=100");
      if (!b) return { refuse: "no preview: the claims could not be read" };
      const expired = b.claims.filter((c) => c.expired);
      return { what: `A reaper pass fails the ${expired.length}${b.next_after !== null ? "+" : ""} ` +
                     "claim(s) whose lease has expired (not a legacy run's), aborts waiting items of " +
                     "dead runs and ends runs whose owner stopped heart-beating.",
               lines: expired.map((c) => `item ${c.item_id} of run ${c.run_id}: ${keyText(c)}, ` +
                                         `attempt ${c.attempt}, ${c.owner}`),
               confirm: "Confirm: reap now" };
    },
    run: async () => {
      const r = await postJson("/v1/maintenance/reap");
      if (r.status !== 200) return failed("not reaped", r);
      return { ok: true, text: `reaped: ${r.body.released_processing} expired claim(s) failed, ` +
                               `${r.body.aborted_waiting} waiting item(s) aborted, ${r.body.dead_runs} ` +
                               "dead run(s) ended" };
    },
    done: ctx.refresh });
}

export async function claimList(ctx) {
  const q = listQuery(ctx, ["after"]);
  q.set("within", ctx.params.get("within") || "1m");
  const b = await need(`/v1/schedule/claims?${q}`);
  const cells = (c) => [link("item", c.item_id), link("run", c.run_id), c.run_kind, keyLinks(c),
                        String(c.attempt), c.owner, time(c.lease_until), c.expired ? "expired" : ""];
  return el("div", {}, el("h1", {}, "Stuck claims"),
    el("p", { class: "note" }, "Processing items whose lease has ended, or ends within the given time."),
    filterForm(ctx, [{ name: "within", label: "Ending within", size: 5, pattern: "[0-9]+(ms|s|m|h|d)" }]),
    b ? table(["item", "run", "kind", "site/order/lot", "attempt", "owner", "lease until", "expired"],
              b.claims.map(cells),
              "No stuck or ending claims: every processing item's lease is current.") : null,
    b ? pager(ctx, b.next_after, b.claims.length, "claim(s)") : null,
    el("div", { class: "actions" }, reapAction(ctx)));
}

function requeueAction(ctx, selected) {
  let keys = [];
  return action({ label: "Re-queue the ticked orders…", name: "requeue",
    preview: async () => {
      keys = selected();
      if (!keys.length) return { refuse: "tick the orders to re-queue first" };
      const r = await postJson("/v1/schedule/requeue", { orders: keys, dry_run: true });
      if (r.status !== 200) return { refuse: failed("no preview", r).text };
      const skipped = r.body.skipped.map((k) => `${keyText(k)}: skipped (${k.reason})`);
      return { what: `Re-queueing gives ${r.body.requeued.length} order(s) a fresh budget of attempts ` +
                     "(their failed items stay); the next run picks them.",
               lines: r.body.requeued.map(keyText).concat(skipped), confirm: "Confirm: re-queue" };
    },
    run: async () => {
      const r = await postJson("/v1/schedule/requeue", { orders: keys, dry_run: false });
      if (r.status !== 200) return failed("not re-queued", r);
      const skipped = r.body.skipped.map((k) => `${keyText(k)} (${k.reason})`);
      return { ok: true, text: `re-queued ${r.body.requeued.length} order(s)` +
                               (skipped.length ? `; skipped: ${skipped.join(", ")}` : "") };
    },
    done: ctx.refresh });
}

export async function exhaustedList(ctx) {
  const b = await need(`/v1/schedule/exhausted?${listQuery(ctx, ["site_code", "after"])}`);
  const orders = b ? b.orders : [];
  const boxes = orders.map((o) => el("input", { type: "checkbox", "aria-label": `select ${keyText(o)}` }));
  const selected = () => orders.filter((o, i) => boxes[i].checked)
    .map((o) => ({ site_code: o.site_code, order_no: o.order_no, lot_no: o.lot_no }));
  const cells = (o, i) => [boxes[i], keyLinks(o), String(o.attempts), String(o.failed_total),
                           time(o.last_failed_at), o.last_error || "", time(o.requeued_at)];
  return el("div", {}, el("h1", {}, "Orders at the attempt limit"),
    b ? el("p", { class: "note" }, "No run picks these until they are re-queued " +
                                   `(--max-attempts ${b.max_attempts}).`) : null,
    filterForm(ctx, [{ name: "site_code", label: "Site", size: 8 }]),
    table(["", "site/order/lot", "attempts", "failed in all", "last failed", "last error", "re-queued"],
          orders.map(cells), "No order is at the attempt limit: every failed order still has attempts left."),
    b ? pager(ctx, b.next_after, orders.length, "order(s)") : null,
    orders.length ? el("div", { class: "actions" }, requeueAction(ctx, selected)) : null);
}

export async function productionOrderList(ctx) {
  const b = await need(`/v1/production-orders?${listQuery(ctx, ["site_code", "after"])}`);
  const rows = b ? b.production_orders : [];
  const cells = (p) => [link("item", p.item_id), keyLinks(p), String(p.quantity),
                        link("scope", `PO-${p.site_code}`, p.document_number), time(p.created_at)];
  return el("div", {}, el("h1", {}, "Production orders"),
    filterForm(ctx, [{ name: "site_code", label: "Site", size: 8 }]),
    table(["item", "site/order/lot", "quantity", "document", "created"], rows.map(cells),
          "No production orders: a run makes one for each order line it produces."),
    b ? pager(ctx, b.next_after, rows.length, "production order(s)") : null);
}
