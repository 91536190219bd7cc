// The operator console in a real browser (Debian's headless Chromium, driven by
// playwright-core), on the engine given: every route walked at 1400 and 800 px wide (its view
// drawn, no error, no page-wide horizontal scroll, no invalid `pattern`, its ids links), each
// bug the console once had checked (console_bugs.mjs), the actions carried out through the
// page after their preview (console_actions.mjs), and what the views show (console_views.mjs). Screenshots go to the artifacts
// directory, and with ONCEORDER_CONSOLE_SHOTS=DIR one per view at 1400 px to DIR (docs/console).
//
// Usage: node console_test.mjs ONCEORDER_BIN ARTIFACTS_DIR sqlite|postgresql
// (postgresql: PG* variables name the server; a database of its own is created). Exit status
// 0 when every check held, 1 otherwise, 77 when Chromium is missing or PostgreSQL is not
// configured and not required (ctest reports a skip).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { api, bannerText, check, dir, makeDb, openPage, startServer, state, visit } from "./harness.mjs";
import { bugChecks, tokenChecks } from "./console_bugs.mjs";
import { actions, setUpEndpoints } from "./console_actions.mjs";
import { viewChecks } from "./console_views.mjs";

const [bin, artifacts, engine] = process.argv.slice(2);
const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(browserPath)) {
  // The test command (scripts/test) requires it; a developer's ctest may lack it.
  const required = process.env.ONCEORDER_REQUIRE_BROWSER === "1";
  console.log(`${required ? "FAIL" : "skipped"}: no Chromium at ${browserPath} (scripts/bootstrap installs it)`);
  process.exit(required ? 1 : 77);
}
if (engine === "postgresql" && !process.env.PGHOST && !process.env.PGPORT && process.env.ONCEORDER_REQUIRE_PG !== "1") {
  console.log("skipped: PostgreSQL not configured (no PG* variables; pg_virtualenv sets them)");
  process.exit(77);
}
mkdirSync(artifacts, { recursive: true });
const shots = process.env.ONCEORDER_CONSOLE_SHOTS;
const db = makeDb(engine);
const cli = (...args) => execFileSync(bin, ["--db", db, ...args], { encoding: "utf8" });

// Every route, with the links its view must hold (an id on a page is a link to its page).
function routes(ids) {
  return [
    ["overview", "/", ["a.run-link"]],
    ["orders", "/orders", ["a.order-link", "a.warehouse-link", "a.customer-link"]],
    ["order", `/orders/${ids.order}`, ["a.item-link", "a.warehouse-link", "a.customer-link"]],
    ["orders-oldest-first", "/orders?order=asc", ["a.order-link"]],
    ["runs", "/runs", ["a.run-link"]],
    ["run", "/runs/1", ["a.item-link", "a.run-link"]],
    ["items", "/items?run_id=1", ["a.item-link", "a.run-link", "a.scope-link"]],
    ["item", `/items/${ids.item}`, ["a.run-link", "a.scope-link"]],
    ["claims", "/claims", []],
    ["exhausted", "/exhausted", []],
    ["production-orders", "/production-orders", ["a.item-link", "a.scope-link"]],
    ["scopes", "/scopes", ["a.scope-link"]],
    ["scope", "/scopes/TEST-001", []],
    ["gaps", "/gaps", []],
    ["warehouses", "/warehouses", []],
    ["warehouse", "/warehouses/1", []],
    ["ledger", "/ledger", []],
    ["endpoints", "/endpoints", ["a.endpoint-link"]],
    ["endpoint", "/endpoints/down", ["a.order-link"]],
    ["consumers", "/consumers", []],
    ["events", "/events", ["a.order-link", "a.run-link"]],
    ["audit", "/audit", ["a.principal-link"]],
  ];
}

// One route at one width: drawn, no banner, no page-wide horizontal scroll, every `pattern` a
// valid regular expression in Chromium's `v` mode, and its ids as links.
async function walkOne(rec, base, [name, route, links], width) {
  const { page } = rec;
  const before = rec.errors.length;
  await visit(page, base, route);
  const banner = await bannerText(page);
  const h1 = await page.locator("#view h1").count();
  check(h1 === 1 && banner === "", `${width} px ${route}: drawn without an error (${banner})`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `${width} px ${route}: no page-wide horizontal scroll (${overflow} px too wide)`);
  const bad = await page.evaluate(() => [...document.querySelectorAll("input[pattern]")].map((i) => i.pattern)
    .filter((p) => { try { new RegExp(`^(?:${p})$`, "v"); return false; } catch (e) { return true; } }));
  check(bad.length === 0, `${width} px ${route}: every pattern is valid (${bad.join(" ")})`);
  for (const sel of links) {
    const hrefs = await page.locator(`#view ${sel}`).evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    // An entity's page, or (a customer, a principal) the list filtered to it.
    const ok = hrefs.every((h) => /^#\/[a-z-]+(\/[^/?]+|\?[a-z_]+=[^&]+)$/.test(h));
    check(hrefs.length > 0 && ok, `${width} px ${route}: ${sel} links (${hrefs.length})`);
  }
  check(rec.errors.length === before, `${width} px ${route}: no page errors (${rec.errors.slice(before).join("; ")})`);
  await page.screenshot({ path: join(artifacts, `${engine}-${width}-${name}.png`), fullPage: true });
  if (shots && width === 1400) await page.screenshot({ path: join(shots, `${name}.png`) });
}

async function walk(browser, base, token, ids) {
  for (const width of [1400, 800]) {
    const rec = await openPage(browser, width);
    await rec.page.goto(`${base}/#token=${token}`);
    check(!rec.page.url().includes("token"), `${width} px: the token is gone from the address bar (${rec.page.url()})`);
    for (const r of routes(ids)) await walkOne(rec, base, r, width);
    // A click on an id goes to its page.
    await visit(rec.page, base, "/orders");
    await rec.page.locator("#view a.order-link").first().click();
    await rec.page.waitForFunction(() => /^#\/orders\/\d+$/.test(location.hash) &&
      document.querySelector("#view").dataset.ready === "true" && document.querySelector(".order-page"));
    check(true, `${width} px: a click on an order id opens its page`);
    await rec.page.close();
  }
}

try {
  cli("migrate");
  cli("demo");
  const main = await startServer(bin, db);
  const base = main.base;
  const call = api(base, main.token);
  check(main.token !== null && main.token.length >= 32, "serve made its tokens file and printed its admin token");
  const order = (await call("POST", "/v1/orders", { customer_id: 9, warehouse_id: 1, lines: [{ sku_id: 101, quantity: 1 }] },
                            { "Idempotency-Key": "browser-1" })).body;
  check(order && order.status === "placed", "an order of its own to cancel was placed");
  // And one more, so that three order.placed events are in doubt at the endpoint that stalls.
  check((await call("POST", "/v1/orders", { customer_id: 9, warehouse_id: 1, lines: [{ sku_id: 101, quantity: 1 }] },
                    { "Idempotency-Key": "browser-2" })).status === 201, "another order was placed");
  // A demo order: it went through the demo's run, so it is in production.
  const produced = (await call("GET", "/v1/orders?customer_id=7")).body.orders[0];
  check(produced !== undefined, "a demo order to look at");
  const browser = await chromium.launch({ executablePath: browserPath, args: ["--no-sandbox"] });
  state.browser = browser;
  await setUpEndpoints(base, call);
  await walk(browser, base, main.token, { order: produced.order_id, item: 1 });
  await bugChecks({ browser, base, token: main.token, produced, artifacts, engine });
  await actions({ browser, base, token: main.token, call, order, artifacts, engine });
  await viewChecks({ browser, base, token: main.token, call, order, artifacts, engine });
  await tokenChecks({ browser, bin, db, order: produced, artifacts, engine });
  check(cli("check").includes("ok"), "onceorder check is clean afterwards");
} catch (e) {
  check(false, `the run ended early: ${e.stack || e}`);
} finally {
  if (state.browser) await state.browser.close();
  for (const s of state.servers) s.kill("SIGTERM");
  for (const c of state.cleanups || []) c();
  rmSync(dir, { recursive: true, force: true });
}
console.log(state.failures === 0 ? "console: every check held" : `console: ${state.failures} checks failed`);
process.exit(state.failures === 0 ? 0 : 1);
