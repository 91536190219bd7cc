// Orders: the list (filters and cursor in the address) and one order's page — its lines,
// receipts, source orders, production orders, timeline, and the cancel where it is allowed.
// The page starts with routes an operator may call (the timeline, the orders' list, the
// receipts); GET /v1/orders/{id}, which only an admin may read, is asked only when no receipt
// names the lines.
import { el, getJson, link, need, postJson, reportFailure, section, table, time, facts } from "./core.js";
import { action, failed, filterForm, href, noteRefusal, pager } from "./ui.js";

const orderHead = ["order", "number", "customer", "warehouse", "status", "total (cents)", "created",
  "placed by"];
// The principal is null for an order placed before principals were recorded.
export const orderCells = (o) => [link("order", o.order_id), o.order_no, link("customer", o.customer_id),
  link("warehouse", o.warehouse_id), o.status, String(o.total_cents), time(o.created_at),
  o.principal ? link("principal", o.principal) : "unrecorded"];

// The list, newest first, or oldest first (`order=asc`, to follow new orders with the cursor)
// where the server offers it; one that does not is read newest first, and says so.
export async function orderList(ctx) {
  const q = new URLSearchParams({ limit: "50" });
  for (const k of ["status", "customer_id", "warehouse_id", "after", "order"]) {
    if (ctx.params.get(k)) q.set(k, ctx.params.get(k));
  }
  let r = await getJson(`/v1/orders?${q}`);
  let note = null;
  const refusedOrder = (x) => x.status === 404 ||
    (x.status === 400 && (x.body?.errors || []).some((e) => e.field === "order"));
  if (q.get("order") === "asc" && refusedOrder(r)) {
    q.delete("order");
    q.delete("after");
    note = el("p", { class: "note", id: "order-asc-missing" },
              "This server lists orders newest first only (it refused order=asc): shown newest first.");
    r = await getJson(`/v1/orders?${q}`);
  }
  if (r.status !== 200) reportFailure("/v1/orders", r);
  const b = r.status === 200 ? r.body : null;
  const rows = b ? b.orders.map(orderCells) : [];
  return el("div", {}, el("h1", {}, "Orders"), note,
    filterForm(ctx, [
      { name: "status", label: "Status",
        options: [["", "any"], ["placed", "placed"], ["cancelled", "cancelled"]] },
      { name: "customer_id", label: "Customer", numeric: true },
      { name: "warehouse_id", label: "Warehouse", numeric: true, size: 6 },
      { name: "order", label: "Order", options: [["", "newest first"], ["asc", "oldest first"]] }]),
    table(orderHead, rows, !b
      ? "The orders could not be read (the answer is shown above)."
      : ctx.params.toString()
      ? "No order matches these filters."
      : "No orders yet: POST /v1/orders places one (a customer's or an admin's token)."),
    b ? pager(ctx, b.next_after, rows.length, "order(s)") : null);
}

// The order as the list has it (warehouse, total, created): the page just after id + 1.
async function listedOrder(id) {
  if (!/^[1-9][0-9]{0,18}$/.test(id)) return null;
  const q = new URLSearchParams({ after: String(BigInt(id) + 1n), limit: "1" });
  const r = await getJson(`/v1/orders?${q}`);
  const o = r.status === 200 ? r.body.orders[0] : null;
  return o && String(o.order_id) === id ? o : null;
}

// The lines: from the receipt that placed the order, else the order itself (an admin's read).
async function orderLines(id, receipts) {
  const placed = receipts.find((k) => k.outcome === "placed" && k.lines);
  if (placed) return placed.lines.map((l, i) => ({ line_no: i + 1, sku_id: l.sku_id, quantity: l.quantity }));
  const r = await getJson(`/v1/orders/${encodeURIComponent(id)}`);
  return r.status === 200 ? r.body.lines : null;
}

async function readOrder(id) {
  const timeline = await need(`/v1/orders/${encodeURIComponent(id)}/timeline`);
  if (!timeline) return null;
  const [listed, receiptsBody] = await Promise.all([
    listedOrder(id), need(`/v1/orders/${encodeURIComponent(id)}/receipts`)]);
  const receipts = receiptsBody ? receiptsBody.receipts : [];
  const lines = await orderLines(id, receipts);
  return { timeline, listed, receipts, lines };
}

const timelineHead = ["at", "event", "line", "item", "attempt", "owner", "lease until", "document", "detail"];
function timelineCells(e) {
  const detail = e.kind === "receipt" ? `${e.idempotency_key}: ${e.outcome}`
    : e.kind === "source_order" ? `quantity ${e.quantity}` : e.error;
  return [time(e.at), e.kind, e.lot_no, link("item", e.item_id), e.attempt, e.owner,
          time(e.lease_until), e.document_number, detail];
}

// Why a cancel is not offered, or null when it is.
function cancelBlocked(o) {
  if (o.timeline.status !== "placed") return `The order is ${o.timeline.status}: nothing to cancel.`;
  const made = o.timeline.entries.filter((e) => e.kind === "produced");
  if (made.length) {
    return `Not cancellable: in production (line(s) ${made.map((e) => e.lot_no).join(", ")}: production ` +
           `order(s) ${made.map((e) => e.document_number).join(", ")}).`;
  }
  if (!o.lines) return "Not offered: this token cannot read the order's lines.";
  return null;
}

function cancelAction(ctx, id) {
  return action({
    label: "Cancel this order…", name: "cancel",
    preview: async () => {
      const now = await readOrder(id); // as it is now, not as the page last showed it
      const blocked = now ? cancelBlocked(now) : "The order could not be read.";
      if (blocked) return { refuse: blocked };
      const t = now.timeline;
      return { what: `Cancelling order ${id} (${t.order_no}, customer ${t.customer_id}) releases ` +
               `${now.lines.length} reservation(s) back to warehouse ` +
               `${now.listed ? now.listed.warehouse_id : "?"}; ` +
               "it is refused if a line reaches production meanwhile.",
               lines: now.lines.map((l) => `line ${l.line_no}: sku ${l.sku_id} × ${l.quantity}`),
               confirm: "Confirm: cancel the order" };
    },
    run: async () => {
      const r = await postJson(`/v1/orders/${encodeURIComponent(id)}/cancel`);
      noteRefusal(r);
      if (r.status !== 200) return failed("not cancelled", r);
      return { ok: true, text: `order ${id} is ${r.body.status}` };
    },
    done: ctx.refresh,
  });
}

function orderSections(o, id) {
  const t = o.timeline;
  const wh = o.listed ? o.listed.warehouse_id : null;
  const priced = (o.lines || []).some((l) => l.unit_price_cents !== undefined);
  const lineRows = (o.lines || []).map((l) => [String(l.line_no), String(l.sku_id), String(l.quantity),
    ...(priced ? [String(l.unit_price_cents)] : [])]);
  const sources = t.entries.filter((e) => e.kind === "source_order");
  const made = t.entries.filter((e) => e.kind === "produced");
  const site = wh ? `W${wh}` : null;
  const itemsOf = (lot) =>
    el("a", { href: href("/items", { site_code: site, order_no: t.order_no, lot_no: lot }) }, "items");
  const docLink = (e) => (site ? el("a", { href: `#/scopes/PO-${site}`, class: "id" }, e.document_number)
                                : e.document_number);
  return [
    section("Lines", table(["line", "sku", "quantity", ...(priced ? ["unit price (cents)"] : [])], lineRows,
                           "No lines known: no receipt names them and this token may not read the order.")),
    section("Receipts", table(["Idempotency-Key", "normalized cart", "outcome", "received"],
      o.receipts.map((k) => [k.idempotency_key, k.normalized, k.outcome, time(k.created_at)]),
      "No receipt: receipts expire after --receipt-retention.")),
    section("Source orders", table(["site/order/lot", "quantity", "at", ""],
      sources.map((e) => [`${site || "W?"}/${t.order_no}/${e.lot_no}`, String(e.quantity), time(e.at),
                          site ? itemsOf(e.lot_no) : ""]),
      "No source orders: placing an order makes one per line.")),
    section("Production orders", table(["line", "item", "document", "at"],
      made.map((e) => [e.lot_no, link("item", e.item_id),
                       docLink(e),
                       time(e.at)]),
      "No production order yet: a run makes one per line (Production → Runs).")),
    section(`Timeline (${t.entries.length} entries${t.truncated ? ", item events cut at 1000" : ""})`,
      table(timelineHead, t.entries.map(timelineCells), "No entries.",
            (i) => ({ dataset: { kind: t.entries[i].kind } }))),
  ];
}

export async function orderPage(ctx) {
  const id = ctx.args[0];
  const o = await readOrder(id);
  const head = el("h1", {}, `Order ${id}`);
  if (!o) return el("div", {}, head, el("p", { class: "empty" }, "No order shown."));
  const t = o.timeline;
  const blocked = cancelBlocked(o);
  return el("div", { class: "order-page", dataset: { order: id, status: t.status } }, head,
    section("Order", facts([["order", id], ["number", t.order_no], ["status", t.status],
      ["customer", link("customer", t.customer_id)],
      ["warehouse", o.listed ? link("warehouse", o.listed.warehouse_id) : null],
      ["total (cents)", o.listed ? String(o.listed.total_cents) : null],
      ["created", o.listed ? time(o.listed.created_at) : null],
      ["placed by", o.listed?.principal ? link("principal", o.listed.principal) : null]]),
      el("div", { class: "actions" }, blocked ? el("p", { class: "note", id: "cancel-blocked" }, blocked)
                                              : cancelAction(ctx, id))),
    ...orderSections(o, id));
}
