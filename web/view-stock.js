// Stock: the warehouses (GET /v1/warehouses where the server has it; otherwise a warehouse is
// opened by id), one warehouse's SKUs with their reserved quantities and the stock
// adjustment, and the ledger of operator changes (the audit trail's stock rows).
import { el, getJson, link, need, postJson, reportFailure, section, table, time } from "./core.js";
import { action, failed, filterForm, href, noteRefusal, pager } from "./ui.js";

function openById() {
  const input = el("input", { name: "warehouse", size: 8, inputmode: "numeric",
                              pattern: "[1-9][0-9]{0,18}", required: true });
  const form = el("form", { class: "filters", id: "warehouse-open" },
                  el("label", {}, "Warehouse id ", input), el("button", { type: "submit" }, "Open"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (form.reportValidity()) location.hash = `#/warehouses/${input.value.trim()}`;
  });
  return form;
}

// A warehouse's fields as the list gives them, its id first (the list is newer than this
// console: whatever else it answers is shown as it is).
function warehouseTable(list) {
  const keys = [...new Set(list.flatMap((w) => Object.keys(w)))].filter((k) => k !== "warehouse_id");
  const text = (v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : v);
  return table(["warehouse", ...keys],
               list.map((w) => [link("warehouse", w.warehouse_id), ...keys.map((k) => text(w[k]))]),
               "No warehouses: PUT /v1/warehouses/{id}/skus/{sku} stocks a SKU in one.");
}

export async function warehouseList(ctx) {
  const q = new URLSearchParams({ limit: "50" });
  if (ctx.params.get("after")) q.set("after", ctx.params.get("after"));
  const r = await getJson(`/v1/warehouses?${q}`);
  const head = el("h1", {}, "Warehouses");
  if (r.status === 404) {
    return el("div", {}, head, el("p", { class: "note", id: "warehouses-missing" },
      "This server has no list of warehouses (GET /v1/warehouses answered 404): open one by its id."),
      openById());
  }
  if (r.status !== 200) {
    reportFailure("/v1/warehouses", r);
    return el("div", {}, head, openById());
  }
  const list = r.body.warehouses || [];
  return el("div", {}, head, warehouseTable(list),
            pager(ctx, r.body.next_after ?? null, list.length, "warehouse(s)"), openById());
}

// What an adjustment will do, from the SKU as the server has it now.
async function previewAdjustment(wh, form) {
  const delta = form.delta.value.trim();
  const reason = form.reason.value.trim();
  if (!/^-?[1-9][0-9]{0,12}$/.test(delta) || !reason) {
    return { refuse: "give a non-zero whole delta and a reason" };
  }
  const path = `/v1/warehouses/${wh}/skus/${form.sku.value}`;
  const now = await getJson(path);
  if (now.status !== 200) return { refuse: failed("no preview", now).text };
  form.sent = { path, delta: Number(delta), reason };
  const after = Number(now.body.available) + form.sent.delta;
  return { what: `Adjusting SKU ${form.sku.value} of warehouse ${wh} by ${delta} (${reason}): available ` +
                 `goes from ${now.body.available} to ${after}` +
                 `${after < 0 ? ", below zero: the server will refuse it" : ""}. ` +
                 "The stock ledger records it.",
           lines: [`reserved ${now.body.reserved}`, `price ${now.body.price_cents} cents`],
           confirm: "Confirm: adjust the stock" };
}

function adjustForm(ctx, wh, skus) {
  const form = {
    sku: el("select", { id: "adjust-sku" },
            skus.map((k) => el("option", { value: k.sku_id }, String(k.sku_id)))),
    delta: el("input", { id: "adjust-delta", size: 8, inputmode: "numeric", pattern: "-?[1-9][0-9]{0,12}",
                         placeholder: "-2" }),
    reason: el("input", { id: "adjust-reason", size: 20, maxlength: 200, placeholder: "damaged" }),
    sent: null,
  };
  return el("div", { class: "filters" }, el("label", {}, "SKU ", form.sku),
    el("label", {}, "Delta ", form.delta), el("label", {}, "Reason ", form.reason),
    action({ label: "Preview the adjustment…", name: "adjust",
      preview: () => previewAdjustment(wh, form),
      run: async () => {
        const { path, delta, reason } = form.sent;
        const r = await postJson(`${path}/adjustments`, { delta, reason });
        noteRefusal(r);
        if (r.status !== 201) return failed("not adjusted", r);
        return { ok: true, text: `SKU ${r.body.sku_id} of warehouse ${wh}: ${r.body.available} available` };
      },
      done: ctx.refresh }));
}

export async function warehousePage(ctx) {
  const wh = ctx.args[0];
  const q = new URLSearchParams({ limit: "50" });
  if (ctx.params.get("after")) q.set("after", ctx.params.get("after"));
  const b = await need(`/v1/warehouses/${encodeURIComponent(wh)}/skus?${q}`);
  const skus = b ? b.skus : [];
  return el("div", { dataset: { warehouse: wh } }, el("h1", {}, `Warehouse ${wh}`),
    section("SKUs", table(["sku", "available", "reserved", "price (cents)"],
      skus.map((k) => [String(k.sku_id), String(k.available), String(k.reserved), String(k.price_cents)]),
      "No SKUs in this warehouse: PUT /v1/warehouses/{id}/skus/{sku} stocks one."),
      b ? pager(ctx, b.next_after, skus.length, "SKU(s)") : null),
    skus.length ? section("Adjust stock", adjustForm(ctx, wh, skus)) : null,
    section("Orders from this warehouse",
            el("a", { href: href("/orders", { warehouse_id: wh }) }, "Its orders →"), " · ",
            el("a", { href: href("/ledger", {}) }, "The ledger →")));
}

// One audit row as a ledger line: what was asked (a delta and its reason, or a SKU's set-up).
function ledgerCells(a) {
  const [w, sku] = String(a.target || "/").split("/");
  const req = (a.summary && a.summary.request) || {};
  const change = req.delta !== undefined ? String(req.delta)
    : req.available !== undefined ? `available ${req.available}` : "";
  const why = req.reason || (req.price_cents !== undefined ? `price ${req.price_cents}` : "");
  return [a.action_id, time(a.at), a.principal, link("warehouse", w), sku, change, why,
          a.status === null ? "" : String(a.status)];
}

// The ledger of operator changes to stock: the audit trail's stock.adjust and stock.put rows
// (reservations and releases are the orders' own).
export async function ledger(ctx) {
  const q = new URLSearchParams({ action: ctx.params.get("action") || "stock.adjust", limit: "50" });
  if (ctx.params.get("after")) q.set("after", ctx.params.get("after"));
  const b = await need(`/v1/actions?${q}`);
  const rows = b ? b.actions.map(ledgerCells) : [];
  const kinds = [["stock.adjust", "adjustments"], ["stock.put", "SKU set-ups and prices"]];
  return el("div", {}, el("h1", {}, "Stock ledger"),
    el("p", { class: "note" }, "Operator changes to stock, newest first; reservations and releases " +
                               "are on each order's page."),
    filterForm(ctx, [{ name: "action", label: "Change", options: kinds }]),
    table(["#", "at", "principal", "warehouse", "sku", "delta", "reason", "status"], rows,
          "No stock changes yet: an adjustment (a warehouse's page) or a PUT of a SKU appears here."),
    b ? pager(ctx, b.next_after, rows.length, "change(s)") : null);
}
