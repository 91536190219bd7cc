// What the views show of the demo data and of the hand-off set up around it: the overview's
// counts, a filtered list, an item's timeline, stock with reserved quantities, scopes without
// gaps, endpoints and consumers with what waits for an operator marked, the feed newest first
// and filtered, a cancel waiting for its dead order.placed, and an in-doubt delivery sent again
// and a settle refused (409) with the server's detail.
import { join } from "node:path";
import { bannerText, check, openPage, until, visit } from "./harness.mjs";

const cellsOf = (page, selector) => page.locator(selector).evaluateAll((rows) =>
  rows.map((r) => [...r.children].map((td) => td.textContent)));

async function overview(page, base) {
  await visit(page, base, "/");
  const ready = await page.locator("#ready").textContent();
  const inv = await page.locator("#invariants-summary").textContent();
  check(ready.startsWith("ready") && /^all \d+ invariants hold/.test(inv), `overview: ${ready}; ${inv}`);
  const dead = page.locator('#view a.card[data-card="dead deliveries"]');
  check(Number(await dead.locator(".n").textContent()) > 0 && (await dead.getAttribute("class")).includes("attention"),
        "overview: the dead deliveries are counted and marked");
}

async function lists(page, base) {
  await visit(page, base, "/items?status=success&run_id=1");
  const rows = await cellsOf(page, "#view tbody tr");
  check(rows.length === 7 && rows.every((r) => r[1] === "1" && r[3] === "success"), `run 1's successful items (${rows.length})`);
  check(await page.locator("#view select[name=status]").inputValue() === "success" &&
        await page.locator("#view input[name=run_id]").inputValue() === "1", "the filters are read back from the address");
  await visit(page, base, "/items?status=failed&run_id=1");
  check((await page.locator("#view .empty").textContent()).startsWith("No items match"), "an empty list says what fills it");
  await visit(page, base, `/items/${rows[0][0]}`);
  const kinds = await page.locator("#view tbody tr").evaluateAll((rs) => rs.map((r) => r.dataset.kind));
  check(JSON.stringify(kinds) === JSON.stringify(["created", "claimed", "produced"]), `an item's timeline: ${kinds}`);
  await visit(page, base, "/warehouses/1");
  const skus = await cellsOf(page, "#view tbody tr");
  check(skus.length === 2 && skus[0][0] === "101" && Number(skus[0][2]) > 0, `warehouse 1's SKUs with reserved quantities: ${JSON.stringify(skus)}`);
  await visit(page, base, "/scopes");
  const scopes = (await cellsOf(page, "#view tbody tr")).map((r) => r[0]);
  check(scopes.includes("TEST-001") && scopes.includes("HEX-A") && await page.locator("#view tr.bad").count() === 0,
        `scopes, none with a gap: ${scopes.join(" ")}`);
  await visit(page, base, "/gaps");
  const audit = await page.locator("#gaps-summary").textContent();
  check(/^\d+ scope\(s\) audited: 0 with a gap/.test(audit) && await page.locator("#view tr.bad").count() === 0,
        `the gap audit finds no gap: ${audit}`);
  await visit(page, base, "/scopes/TEST-001");
  check((await page.locator("#scope-gaps").textContent()).startsWith("no gaps") && await page.locator("#view tbody tr").count() > 0,
        "a scope's page: no gaps, and its documents");
}

async function handoffViews(page, base) {
  await visit(page, base, "/endpoints");
  const summary = await page.locator("#endpoints-summary").textContent();
  check(/^2 endpoint\(s\); \d+ dead and \d+ in-doubt deliveries wait for an operator$/.test(summary), `endpoints: ${summary}`);
  const down = await page.locator('#view tr[data-name="down"] td').nth(5).locator("span").getAttribute("class");
  check(down === "attention", "an endpoint's dead deliveries are marked");
  await visit(page, base, "/consumers");
  const lag = page.locator('#view tr[data-name="x"] td');
  check(Number(await lag.nth(2).textContent()) > 20 && await lag.nth(2).locator("span").getAttribute("class") === "attention",
        "a consumer's lag in events is marked");
  await visit(page, base, "/events");
  const ids = await page.locator("#view tbody tr").evaluateAll((rs) => rs.map((r) => Number(r.dataset.event)));
  check(ids.length > 20 && ids.every((id, i) => i === 0 || id < ids[i - 1]), `the feed, newest first (${ids.length})`);
  await visit(page, base, "/events?types=order.cancelled");
  const types = await cellsOf(page, "#view tbody tr");
  check(types.length === 1 && types[0][1] === "order.cancelled", `filtered by type: the one cancel (${types.length})`);
}

// The cancel's event waits for its order's dead order.placed: the pending list says so.
async function blockedBy(page, base, call, order) {
  await visit(page, base, "/endpoints/down?status=pending");
  const rows = await cellsOf(page, "#view tbody tr");
  const cancel = rows.find((r) => r[2] === "order.cancelled");
  const placed = (await call("GET", "/v1/endpoints/down/deliveries?status=dead&limit=1000")).body.deliveries
    .find((d) => d.key === order.order_id && d.type === "order.placed");
  check(cancel && cancel[3] === order.order_id && placed && cancel[7] === String(placed.event_id),
        `the cancel waits for its dead order.placed: ${JSON.stringify(cancel)}`);
}

// An in-doubt delivery sent again (in doubt again after its second attempt), and a settle of
// one the API settled meanwhile refused with the server's 409.
async function inDoubt(page, base, call) {
  await visit(page, base, "/endpoints/stall");
  const [id, other] = await page.locator('#view tr[data-status="in_doubt"]').evaluateAll((rs) => rs.map((r) => r.dataset.event));
  await page.locator(`#view tr[data-event="${id}"] .send-again-start`).click();
  await page.locator("#view .send-again-confirm").click();
  await page.waitForSelector("#result:not([hidden])");
  check((await page.locator("#result").textContent()).startsWith(`event ${id} to stall is pending`), "sent again: pending");
  await until("the delivery to be in doubt again", async () =>
    (await call("GET", `/v1/endpoints/stall/deliveries?after=${BigInt(id) - 1n}&limit=1`)).body.deliveries[0].attempt === 2);
  await visit(page, base, "/endpoints/stall");
  await page.locator(`#view tr[data-event="${other}"] .mark-delivered-start`).click();
  check((await call("POST", "/v1/endpoints/stall/resolve", { event_id: Number(other), delivered: true })).status === 200,
        "meanwhile, the other one was settled through the API");
  await page.locator("#view .mark-delivered-confirm").click();
  await page.waitForSelector("#result:not([hidden])");
  const refused = await page.locator("#result").textContent();
  check(refused.startsWith("not settled: 409 conflict: ") && await page.locator("#result").getAttribute("class") === "bad",
        `the conflict's detail is shown: ${refused}`);
}

export async function viewChecks({ browser, base, token, call, order, artifacts, engine }) {
  const rec = await openPage(browser, 1400);
  await rec.page.goto(`${base}/#token=${token}`);
  await overview(rec.page, base);
  await lists(rec.page, base);
  await handoffViews(rec.page, base);
  await blockedBy(rec.page, base, call, order);
  await inDoubt(rec.page, base, call);
  await rec.page.screenshot({ path: join(artifacts, `${engine}-in-doubt.png`) });
  check(rec.errors.length === 0 && (await bannerText(rec.page)) === "", `no errors in the views (${rec.errors.join("; ")})`);
  await rec.page.close();
}
