// Numbers: document scopes with their gap audit, one scope's documents and gaps, and the gap
// audit across scopes.
import { el, getJson, link, need, section, table, time, facts } from "./core.js";
import { pager } from "./ui.js";

const scopeHead = ["scope", "last value", "issued", "imported", "remaining", "max", "gaps", "missing"];
const scopeCells = (c) => [link("scope", c.scope), String(c.last_value), String(c.issued), String(c.imported),
  String(c.remaining), String(c.max), String(c.gaps), String(c.missing)];
const scopeClass = (c) => (c.gaps > 0 ? "bad" : "");

export async function scopeList(ctx) {
  const q = new URLSearchParams({ limit: "50" });
  if (ctx.params.get("after")) q.set("after", ctx.params.get("after"));
  const b = await need(`/v1/scopes?${q}`);
  const scopes = b ? b.scopes : [];
  return el("div", {}, el("h1", {}, "Document scopes"),
    el("p", { class: "note" }, "Each scope numbers its documents without gaps; a click on one lists them."),
    table(scopeHead, scopes.map(scopeCells),
          "No scopes: PUT /v1/scopes/{scope} configures one, and the first document or " +
          "production order makes one.",
          (i) => ({ class: scopeClass(scopes[i]) })),
    b ? pager(ctx, b.next_after, scopes.length, "scope(s)") : null);
}

// The gap audit of the scopes read (up to 1,000): the ones with a gap or a missing value.
export async function gapAudit(ctx) {
  const q = new URLSearchParams({ limit: "1000" });
  if (ctx.params.get("after")) q.set("after", ctx.params.get("after"));
  const b = await need(`/v1/scopes?${q}`);
  const scopes = b ? b.scopes : [];
  const odd = scopes.filter((c) => c.gaps > 0 || c.missing > 0);
  return el("div", {}, el("h1", {}, "Gap audit"),
    el("p", { id: "gaps-summary", class: odd.some((c) => c.gaps > 0) ? "bad" : "ok" },
       `${scopes.length} scope(s) audited: ${odd.filter((c) => c.gaps > 0).length} with a gap ` +
       `(invariant I7), ${odd.filter((c) => c.missing > 0).length} with values never issued (a ` +
       "legacy import may leave those)."),
    table(scopeHead, odd.map(scopeCells), "No gaps: every scope's numbers run 1, 2, 3… without a hole.",
          (i) => ({ class: scopeClass(odd[i]) })),
    b ? pager(ctx, b.next_after, scopes.length, "scope(s) audited") : null);
}

// The scope's gap audit. When every value up to the last has a document there is none, and
// nothing is counted; otherwise the scopes' list counts it (one page of 1,000, which holds
// most installations' scopes).
async function gapRow(scope) {
  if (scope.issued + scope.imported === scope.last_value) return { gaps: 0, missing: 0 };
  const r = await getJson("/v1/scopes?limit=1000");
  return r.status === 200 ? r.body.scopes.find((c) => c.scope === scope.scope) : null;
}

export async function scopePage(ctx) {
  const name = ctx.args[0];
  const path = `/v1/scopes/${encodeURIComponent(name)}`;
  const q = new URLSearchParams({ limit: "50" });
  if (ctx.params.get("after")) q.set("after", ctx.params.get("after"));
  const [scope, docs] = await Promise.all([need(path), need(`${path}/documents?${q}`)]);
  const head = el("h1", {}, `Scope ${name}`);
  if (!scope) return el("div", {}, head, el("p", { class: "empty" }, "No scope shown."));
  const row = await gapRow(scope);
  return el("div", { dataset: { scope: name } }, head,
    section("Scope", facts([["scope", name], ["width", String(scope.width)], ["radix", String(scope.radix)],
      ["max", String(scope.max)], ["last value", String(scope.last_value)], ["issued", String(scope.issued)],
      ["imported", String(scope.imported)], ["remaining", String(scope.remaining)]])),
    section("Gaps", row ? el("p", { id: "scope-gaps", class: row.gaps > 0 ? "bad" : "ok" },
      row.gaps > 0 ? `${row.gaps} gap(s): an issued value whose predecessor has no document (invariant I7)`
                   : "no gaps",
      row.missing > 0 ? `; ${row.missing} value(s) below the last never issued (a legacy import)` : "")
      : el("p", { class: "empty" }, "The gap audit of this scope could not be read.")),
    section("Documents", docs ? table(["number", "value", "title", "origin", "scheme", "created"],
      docs.documents.map((d) => [d.number, String(d.value), d.title, d.origin, d.scheme, time(d.created_at)]),
      "No documents: POST /v1/scopes/{scope}/documents issues one, a run issues production orders.") : null,
      docs ? pager(ctx, docs.next_after, docs.documents.length, "document(s)") : null));
}
