// The console's actions carried out through the page, each after its preview and only once
// confirmed (nothing sent before), its result shown in view: cancel an order, reap, re-queue an
// order at the attempt limit, a manual run, a stock adjustment, redeliver a dead delivery and
// settle an in-doubt one.
import { join } from "node:path";
import { bannerText, check, listen, openPage, state, until, visit } from "./harness.mjs";

// Endpoints: one where nothing listens (one attempt, so its deliveries die) and an at-most-once
// one whose receiver reads the request and never answers (in doubt).
export async function setUpEndpoints(base, call) {
  const closed = await listen(() => {});
  const downPort = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const sockets = [];
  const receiver = await listen((socket) => { sockets.push(socket); socket.on("error", () => {}); });
  state.cleanups = [() => { for (const s of sockets) s.destroy(); receiver.close(); }];
  const secret = "browser-test-secret-0123";
  check((await call("PUT", "/v1/endpoints/down", { url: `http://127.0.0.1:${downPort}/hook`, secret, max_attempts: 1,
    backoff_seconds: 1, after: "0" })).status === 201, "an endpoint where nothing listens, from the feed's start");
  check((await call("PUT", "/v1/endpoints/stall", { url: `http://127.0.0.1:${receiver.address().port}/hook`, secret,
    delivery: "at_most_once", types: ["order.placed"], after: "0" })).status === 201, "an at-most-once endpoint that never answers");
  check((await call("PUT", "/v1/consumers/x", { after: "0" })).status === 201, "a consumer at the feed's start");
  await until("the deliveries to die and to be in doubt", async () => {
    const dead = (await call("GET", "/v1/endpoints/down/deliveries?status=dead")).body.deliveries;
    const doubt = (await call("GET", "/v1/endpoints/stall/deliveries?status=in_doubt")).body.deliveries;
    return dead.length >= 3 && doubt.length >= 3;
  });
}

// Clicks an action's button, checks its preview and that nothing was sent, confirms, and
// resolves with the result line (which must be in view).
async function act(rec, name, path, previewHas, scope = "#view") {
  const { page, requests } = rec;
  // A dry run (the re-queue's preview) is what the preview asks; anything else is the action.
  const posts = () => requests.filter((r) => r.method === "POST" && new URL(r.url).pathname === path &&
                                             !(r.body || "").includes('"dry_run":true')).length;
  const before = posts();
  await page.locator(`${scope} .${name}-start`).first().click();
  await page.waitForSelector(`#view .preview:not([hidden]) .${name}-confirm`);
  const what = await page.locator("#view .preview:not([hidden])").textContent();
  check(what.includes(previewHas), `the ${name} preview says what it does: ${what.slice(0, 160)}`);
  check(posts() === before, `nothing was sent for ${name} before the confirmation`);
  await page.locator(`#view .preview:not([hidden]) .${name}-confirm`).click();
  await page.waitForSelector("#result:not([hidden])");
  const where = await page.evaluate(() => {
    const r = document.querySelector("#result").getBoundingClientRect();
    return { top: Math.round(r.top), bottom: Math.round(r.bottom), height: window.innerHeight };
  });
  check(where.top >= 0 && where.bottom <= where.height, `the ${name} result is in view (${JSON.stringify(where)})`);
  return page.locator("#result").textContent();
}

async function cancel(rec, base, order) {
  await visit(rec.page, base, `/orders/${order.order_id}`);
  const result = await act(rec, "cancel", `/v1/orders/${order.order_id}/cancel`, "releases 1 reservation(s)");
  check(result === `order ${order.order_id} is cancelled`, `the cancel's answer: ${result}`);
  check(await rec.page.locator("#view .cancel-start").count() === 0, "a cancelled order offers no cancel");
}

async function scheduling(rec, base, call) {
  await visit(rec.page, base, "/claims");
  const reaped = await act(rec, "reap", "/v1/maintenance/reap", "fails the 0 claim(s)");
  check(reaped.startsWith("reaped: 0 expired claim(s) failed"), `the reap's answer: ${reaped}`);
  // An order at the attempt limit: its site's production scope holds one number.
  check((await call("PUT", "/v1/scopes/PO-XB", { width: 2, max: 1 })).status === 201, "a production scope with one number");
  const xb = (o) => ({ site_code: "XB", order_no: o, lot_no: "1" });
  check((await call("POST", "/v1/source-orders", { orders: [{ ...xb("A"), quantity: 1 }, { ...xb("B"), quantity: 1 }] })).status === 200,
        "two source orders of site XB");
  const failing = (await call("POST", "/v1/schedule/runs", { orders: [xb("A"), xb("B")] })).body;
  check(failing.counts.failed === 1, `one of them failed (${JSON.stringify(failing.counts)})`);
  await visit(rec.page, base, "/exhausted");
  await rec.page.locator("#view input[type=checkbox]").first().check();
  const requeued = await act(rec, "requeue", "/v1/schedule/requeue", "fresh budget");
  check(requeued === "re-queued 1 order(s)", `the re-queue's answer: ${requeued}`);
  const dry = rec.requests.filter((r) => r.url.endsWith("/v1/schedule/requeue")).map((r) => JSON.parse(r.body).dry_run);
  check(JSON.stringify(dry) === "[true,false]", `a dry run for the preview, then the re-queue (${dry})`);
  await visit(rec.page, base, "/runs");
  await rec.page.fill("#run-lines", "XB B 1\nXB/A/1");
  const run = await act(rec, "run", "/v1/schedule/runs", "XB/B/1");
  check(/^run \d+ is running with 1 item\(s\); skipped: XB\/A\/1 \(already_scheduled\)$/.test(run), `the run's answer: ${run}`);
  const runId = /^run (\d+)/.exec(run)[1];
  await until("the run to end", async () => (await call("GET", `/v1/schedule/runs/${runId}`)).body.status !== "running");
  await visit(rec.page, base, `/runs/${runId}`);
  const skip = await rec.page.locator("#view section").nth(2).innerText();
  check(skip.includes("XB/A/1") && skip.includes("already_scheduled") && await rec.page.locator("#view .stop-start").count() === 0,
        `the run's page: its skip report, no stop once it ended (${skip.replace(/\s+/g, " ")})`);
}

async function stock(rec, base) {
  await visit(rec.page, base, "/warehouses/1");
  await rec.page.selectOption("#adjust-sku", "101");
  await rec.page.fill("#adjust-delta", "-1");
  await rec.page.fill("#adjust-reason", "damaged");
  const adjusted = await act(rec, "adjust", "/v1/warehouses/1/skus/101/adjustments", "available goes from");
  check(/^SKU 101 of warehouse 1: \d+ available$/.test(adjusted), `the adjustment's answer: ${adjusted}`);
  await visit(rec.page, base, "/ledger");
  const rows = await rec.page.locator("#view tbody tr").first().innerText();
  check(rows.includes("damaged") && rows.includes("-1"), `the ledger lists it: ${rows.replace(/\s+/g, " ")}`);
}

async function handoff(rec, base, call, artifacts, engine) {
  await visit(rec.page, base, "/endpoints/down");
  const first = await rec.page.locator('#view tr[data-status="dead"]').first().getAttribute("data-event");
  const result = await act(rec, "redeliver", "/v1/endpoints/down/redeliver", "Redeliver 1 dead delivery(ies) to down",
                           `#view tr[data-event="${first}"]`);
  check(result.startsWith(`redelivered event(s) ${first} to down`), `the redeliver's answer: ${result}`);
  await rec.page.screenshot({ path: join(artifacts, `${engine}-redelivered.png`) });
  await visit(rec.page, base, "/endpoints/down");
  const ticked = await rec.page.locator('#view tr[data-status="dead"]').evaluateAll((rs) => rs.slice(1, 3)
    .map((r) => r.dataset.event));
  for (const id of ticked) await rec.page.locator(`#view tr[data-event="${id}"] input[type=checkbox]`).check();
  const both = await act(rec, "redeliver", "/v1/endpoints/down/redeliver", "Redeliver 2 dead delivery(ies)",
                         "#view div.actions");
  const sent = rec.requests.filter((r) => r.url.endsWith("/v1/endpoints/down/redeliver")).at(-1).body;
  check(both.startsWith(`redelivered event(s) ${ticked.join(", ")} to down`) &&
        sent === `{"event_ids":[${ticked.join(",")}]}`, `the ticked ones in one request: ${sent}; ${both}`);
  await visit(rec.page, base, "/endpoints/stall");
  const id = await rec.page.locator('#view tr[data-status="in_doubt"]').first().getAttribute("data-event");
  const settled = await act(rec, "mark-delivered", "/v1/endpoints/stall/resolve", "OnceOrder will not send it again",
                            `#view tr[data-event="${id}"]`);
  check(settled === `event ${id} to stall is delivered (delivered)` || settled.startsWith(`event ${id} to stall is delivered`),
        `the settle's answer: ${settled}`);
  const d = (await call("GET", `/v1/endpoints/stall/deliveries?status=delivered`)).body.deliveries;
  check(d.some((x) => String(x.event_id) === id), "the server has it delivered");
}

// In a small window (800 × 600), where a result at the top is out of view unless the page
// brings it there.
export async function actions({ browser, base, token, call, order, artifacts, engine }) {
  const rec = await openPage(browser, 800, 600);
  await rec.page.goto(`${base}/#token=${token}`);
  await cancel(rec, base, order);
  await rec.page.screenshot({ path: join(artifacts, `${engine}-cancelled.png`) });
  await scheduling(rec, base, call);
  await stock(rec, base);
  await handoff(rec, base, call, artifacts, engine);
  await visit(rec.page, base, "/audit");
  const kinds = await rec.page.locator("#view tbody tr td:nth-child(5)").allTextContents();
  check(["order.cancel", "maintenance.reap", "schedule.requeue", "run.create", "stock.adjust", "delivery.redeliver",
         "delivery.resolve"].every((k) => kinds.includes(k)), `the audit trail lists every action: ${kinds.join(" ")}`);
  check(await rec.page.locator("#view a.order-link").count() >= 1 && await rec.page.locator("#view a.run-link").count() >= 1,
        "the audit rows link to what they changed");
  check(rec.errors.length === 0 && (await bannerText(rec.page)) === "", `no errors in the page (${rec.errors.join("; ")})`);
  await rec.page.close();
}
