// The operator console in a real browser (Debian's headless Chromium, driven by
// playwright-core): a server with the demo data, the lists rendered, and the actions (cancel an
// order, reap now, re-queue an order at the attempt limit, a manual run of given lines), each
// after its preview and only once confirmed, carried out through the page. Screenshots of each
// step go to the artifacts directory.
//
// Usage: node console_test.mjs ONCEORDER_BIN ARTIFACTS_DIR sqlite|postgresql
// (postgresql: inside pg_virtualenv, whose PG* variables name the server; a database of its
// own is created). Exit status 0 when every check held, 1 otherwise, 77 when Chromium is
// missing or PostgreSQL is not configured and not required (ctest reports a skip).
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [bin, artifacts, engine] = process.argv.slice(2);
const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(browserPath)) {
  // The test command (scripts/test) requires it; a developer's ctest may lack it.
  const required = process.env.ONCEORDER_REQUIRE_BROWSER === "1";
  console.log(`${required ? "FAIL" : "skipped"}: no Chromium at ${browserPath} ` +
              "(scripts/bootstrap installs it)");
  process.exit(required ? 1 : 77);
}
if (engine === "postgresql" && !process.env.PGHOST && !process.env.PGPORT &&
    process.env.ONCEORDER_REQUIRE_PG !== "1") {
  console.log("skipped: PostgreSQL not configured (no PG* variables; pg_virtualenv sets them)");
  process.exit(77);
}
mkdirSync(artifacts, { recursive: true });
const dir = mkdtempSync(join(tmpdir(), "onceorder-browser-"));
let db = `sqlite:${join(dir, "console.db")}`;
if (engine === "postgresql") {
  const name = `oo_browser_${process.pid}`;
  execFileSync("createdb", [name]);
  db = `postgresql:///${name}`;
}

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures += 1;
}

function cli(...args) {
  return execFileSync(bin, ["--db", db, ...args], { encoding: "utf8" });
}

// `serve` on a free loopback port; resolves with the port from its log line.
function startServer() {
  // One attempt per order: an order whose production fails once is at the attempt limit.
  const server = spawn(bin, ["--db", db, "serve", "--listen", "127.0.0.1:0", "--max-attempts", "1"],
                       { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let log = "";
    const timer = setTimeout(() => reject(new Error("serve did not start:\n" + log)), 15000);
    const onData = (chunk) => {
      log += chunk;
      const m = /listening on \S+ port (\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ server, port: Number(m[1]) });
      }
    };
    server.stdout.on("data", onData);
    server.stderr.on("data", onData);
    server.on("exit", (code) => reject(new Error(`serve exited with ${code}:\n${log}`)));
  });
}

let server = null;
let browser = null;
const pageErrors = [];
try {
  cli("migrate");
  cli("demo");
  const started = await startServer();
  server = started.server;
  const base = `http://127.0.0.1:${started.port}`;

  // An order of its own to cancel (the demo's are produced, so refused).
  const placed = await fetch(`${base}/v1/orders`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Idempotency-Key": "browser-1" },
    body: JSON.stringify({ customer_id: 9, warehouse_id: 1, lines: [{ sku_id: 101, quantity: 1 }] }),
  });
  const order = await placed.json();
  check(placed.status === 201, `an order to cancel was placed (${placed.status})`);

  browser = await chromium.launch({ executablePath: browserPath, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  const errors = pageErrors;
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  // Every request the page sends that changes something, to show none goes before its
  // confirmation.
  const posts = [];
  page.on("request", (r) => {
    if (r.method() === "POST") posts.push({ path: new URL(r.url()).pathname, body: r.postData() });
  });
  const postsTo = (path) => posts.filter((p) => p.path === path);
  await page.goto(`${base}/`);

  // The lists render without a click.
  await page.waitForSelector("#invariants tr");
  const invariants = await page.locator("#invariants tr").count();
  check(invariants >= 15, `every invariant is listed (${invariants} rows)`);
  const summary = await page.locator("#invariants-summary").textContent();
  check(summary === "all invariants hold", `invariants summary: ${summary}`);
  await page.waitForSelector("#runs tr");
  const runs = await page.locator("#runs tr").count();
  check(runs >= 1, `the demo's schedule run is listed (${runs} rows)`);
  const ready = await page.locator("#ready").textContent();
  check(ready.startsWith("ready"), `readiness: ${ready}`);
  await page.waitForSelector("#items tr");
  const items = await page.locator("#items tr").count();
  check(items === 7, `the demo run's items are listed (${items} rows)`);
  await page.waitForSelector("#orders tr");
  const orderRows = await page.locator("#orders tr").allTextContents();
  check(orderRows.length >= 2 && orderRows[0].startsWith(order.order_id),
        `orders, newest first, the new one on top (${orderRows.length} rows)`);
  await page.waitForSelector("#stock tr");
  const stock = await page.locator("#stock tr").allInnerTexts();
  check(stock.length === 2 && stock[0].split("\t").join(" ") === "101 2 3 1200",
        `stock of warehouse 1 with reserved quantities: ${JSON.stringify(stock)}`);
  await page.waitForSelector("#scopes tr");
  const scopes = await page.locator("#scopes tr").allInnerTexts();
  check(scopes.some((r) => r.startsWith("TEST-001")) && scopes.some((r) => r.startsWith("HEX-A")),
        `document scopes: ${JSON.stringify(scopes.map((r) => r.split("\t")[0]))}`);
  check(await page.locator("#scopes tr.bad").count() === 0, "no scope has a gap");
  await page.waitForFunction(() =>
    document.querySelector("#claims-summary").textContent === "no stuck or ending claim(s)");
  check(true, "no stuck claims");
  // The activity charts: bars for the demo's orders, items and numbers and for the answers
  // this server gave (the page's own requests among them).
  await page.waitForSelector("#chart-requests rect.bar");
  for (const key of ["orders", "items", "numbers", "requests"]) {
    const heights = await page.locator(`#chart-${key} rect.bar`)
      .evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("height"))));
    const total = await page.locator(`#chart-${key}-total`).textContent();
    check(heights.length >= 1 && heights.every((h) => h > 0 && h <= 100),
          `the ${key} chart has non-zero bars (${heights.length}, total ${total})`);
  }
  const activity = await page.locator("#activity-summary").textContent();
  check(activity.includes("busy rate"), `activity summary: ${activity}`);
  check(await page.locator("#actions-summary").textContent() === "no action(s)",
        "no operator action yet (the demo loads through the CLI)");
  await page.screenshot({ path: join(artifacts, `${engine}-1-lists.png`), fullPage: true });

  // Filters: by state (none failed), then by state and run.
  await page.selectOption("#items-status", "failed");
  await page.click("#items-form button");
  await page.waitForFunction(() => document.querySelector("#items-summary").textContent === "no item(s)");
  check(await page.locator("#items tr").count() === 0, "no failed items");
  await page.selectOption("#items-status", "success");
  await page.fill("#items-run", "1");
  await page.click("#items-form button");
  await page.waitForFunction(() => document.querySelector("#items-summary").textContent === "7 item(s)");
  check(await page.locator("#items tr").count() === 7, "run 1's successful items");

  // A click on an item shows its timeline: created, claimed, produced with its number.
  await page.locator("#items tr").first().click();
  await page.waitForSelector("#item-timeline-table:not([hidden])");
  const itemKinds = await page.locator("#item-timeline tr").evaluateAll(
    (rows) => rows.map((r) => r.dataset.kind));
  check(JSON.stringify(itemKinds) === JSON.stringify(["created", "claimed", "produced"]),
        `the item's timeline: ${JSON.stringify(itemKinds)}`);
  const producedCells = await page.locator("#item-timeline tr[data-kind=produced] td").allTextContents();
  check(producedCells.length === 8 && producedCells[6] !== "" && producedCells[3] === "1",
        `the produced event has attempt 1 and a document number: ${JSON.stringify(producedCells)}`);

  // A demo order (it went through the run) looked up: its timeline, placed to produced.
  await page.waitForSelector("#orders tr:nth-child(2)");
  await page.locator("#orders tr").nth(1).click();
  await page.waitForSelector("#order-timeline-table:not([hidden])");
  const orderKinds = await page.locator("#order-timeline tr").evaluateAll(
    (rows) => rows.map((r) => r.dataset.kind));
  check(orderKinds.slice(0, 2).includes("placed") && orderKinds.includes("receipt") &&
        orderKinds.includes("source_order") && orderKinds.includes("claimed") &&
        orderKinds.at(-1) === "produced",
        `a demo order's timeline runs from placed to produced: ${JSON.stringify(orderKinds)}`);
  const orderProduced = await page.locator("#order-timeline tr[data-kind=produced]").first()
    .locator("td").allTextContents();
  check(orderProduced[7] !== "" && orderProduced[2] !== "",
        `its produced entry names the line and the document: ${JSON.stringify(orderProduced)}`);
  await page.screenshot({ path: join(artifacts, `${engine}-1b-timelines.png`), fullPage: true });


  // A look-up (a click on the order in the list), its receipts, then the action: its preview
  // first, nothing sent until it is confirmed.
  await page.locator("#orders tr").first().click();
  await page.waitForSelector("#cancel-start:not([hidden])");
  const receipts = await page.locator("#order-receipts tr").allInnerTexts();
  check(receipts.length === 1 && receipts[0].split("\t").slice(0, 3).join(" ") ===
        "browser-1 101x1 placed", `the order's receipt: ${JSON.stringify(receipts)}`);
  await page.click("#cancel-start");
  const preview = await page.locator("#cancel-what").textContent();
  check(preview.includes(`order ${order.order_id}`) && preview.includes("1 reservation"),
        `the preview says what the cancel touches: ${preview}`);
  const releases = await page.locator("#cancel-releases li").allTextContents();
  check(releases.length === 1 && releases[0] === "line 1: sku 101 × 1",
        `the preview lists the release: ${JSON.stringify(releases)}`);
  const before = await (await fetch(`${base}/v1/orders/${order.order_id}`)).json();
  check(before.status === "placed", "nothing was cancelled before the confirmation");
  const shownId = await page.locator("#order-info dd").first().textContent();
  check(shownId === order.order_id, `the page shows the order id exactly (${shownId})`);
  await page.screenshot({ path: join(artifacts, `${engine}-2-preview.png`), fullPage: true });
  await page.click("#cancel-confirm");
  await page.waitForSelector("#cancel-result:not([hidden])");
  const result = await page.locator("#cancel-result").textContent();
  check(result === `order ${order.order_id} is cancelled`, `the result is shown: ${result}`);
  const after = await (await fetch(`${base}/v1/orders/${order.order_id}`)).json();
  check(after.status === "cancelled", `the server has the order cancelled (${after.status})`);
  check(await page.locator("#cancel-start").isHidden(), "a cancelled order offers no cancel");
  await page.screenshot({ path: join(artifacts, `${engine}-3-cancelled.png`), fullPage: true });

  // Live refresh picks up a run made elsewhere (after the cancel: the run would produce the
  // order, and a produced order cannot be cancelled).
  await page.check("#live");
  const run = await fetch(`${base}/v1/schedule/runs`, { method: "POST" });
  check(run.status === 201, `a run was made through the API (${run.status})`);
  await page.waitForFunction(() => document.querySelectorAll("#runs tr").length === 2,
                             null, { timeout: 12000 });
  check(await page.locator("#runs tr").count() === 2, "live refresh shows the new run");
  // The recent actions: the cancel made through the page and the run, newest first, by the
  // principal of a server without tokens.
  await page.waitForFunction(() => document.querySelectorAll("#actions tr").length === 2,
                             null, { timeout: 12000 });
  const actions = await page.locator("#actions tr").allInnerTexts();
  const fields = actions.map((r) => r.split("\t"));
  check(fields[0][4] === "run.create" && fields[1][4] === "order.cancel" &&
        fields[1][5] === order.order_id && fields.every((f) => f[2] === "local"),
        `the recent actions list the run and the cancel: ${JSON.stringify(fields)}`);
  const orderBars = await page.locator("#chart-orders rect.bar").count();
  check(orderBars >= 1, `the charts are still drawn after live refreshes (${orderBars} bars)`);
  await page.screenshot({ path: join(artifacts, `${engine}-4-actions.png`), fullPage: true });
  await page.uncheck("#live");

  check(await page.locator("#runs .stop-start").count() === 0, "finished runs offer no stop");

  // Reap now: the preview lists the expired claims (none), nothing is sent before the confirm.
  await page.click("#reap-start");
  await page.waitForSelector("#reap-preview:not([hidden])");
  const reapWhat = await page.locator("#reap-what").textContent();
  check(reapWhat.includes("fails the 0 claim(s)"), `the reap preview: ${reapWhat}`);
  check(postsTo("/v1/maintenance/reap").length === 0, "no reap was sent before the confirmation");
  await page.click("#reap-confirm");
  await page.waitForSelector("#reap-result:not([hidden])");
  const reaped = await page.locator("#reap-result").textContent();
  check(reaped.startsWith("reaped: 0 expired claim(s) failed"), `the reap's answer: ${reaped}`);
  check(postsTo("/v1/maintenance/reap").length === 1, "one reap was sent, after the confirmation");

  // An order at the attempt limit: its site's production scope holds one number, the first
  // order takes it, the second fails (and --max-attempts is 1).
  const api = (method, path, body) => fetch(`${base}${path}`, {
    method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  check((await api("PUT", "/v1/scopes/PO-XB", { width: 2, max: 1 })).status === 201,
        "a production scope with one number");
  const xb = (order) => ({ site_code: "XB", order_no: order, lot_no: "1" });
  check((await api("POST", "/v1/source-orders",
                   { orders: [{ ...xb("A"), quantity: 1 }, { ...xb("B"), quantity: 1 }] }))
          .status === 200, "two source orders of site XB");
  const failing = await (await api("POST", "/v1/schedule/runs", { orders: [xb("A"), xb("B")] }))
    .json();
  check(failing.counts && failing.counts.failed === 1, `one of them failed (${JSON.stringify(failing.counts)})`);
  await page.click("#refresh");
  await page.waitForFunction(() => document.querySelectorAll("#exhausted tr").length === 1);
  const limitRow = await page.locator("#exhausted tr").first().innerText();
  check(limitRow.includes("XB/B/1") && limitRow.includes("exhausted"),
        `the attempt-limit list shows it: ${limitRow}`);
  await page.locator("#exhausted input[type=checkbox]").first().check();
  await page.click("#requeue-start");
  await page.waitForSelector("#requeue-preview:not([hidden])");
  const requeueList = await page.locator("#requeue-list li").allTextContents();
  check(requeueList.length === 1 && requeueList[0] === "XB/B/1",
        `the re-queue preview (a dry run) lists the order: ${JSON.stringify(requeueList)}`);
  const dryRuns = postsTo("/v1/schedule/requeue");
  check(dryRuns.length === 1 && JSON.parse(dryRuns[0].body).dry_run === true,
        "only the dry run was sent before the confirmation");
  const stillThere = await (await fetch(`${base}/v1/schedule/exhausted`)).json();
  check(stillThere.orders.length === 1, "the dry run re-queued nothing");
  await page.screenshot({ path: join(artifacts, `${engine}-4-requeue-preview.png`), fullPage: true });
  await page.click("#requeue-confirm");
  await page.waitForSelector("#requeue-result:not([hidden])");
  const requeued = await page.locator("#requeue-result").textContent();
  check(requeued === "re-queued 1 order(s)", `the re-queue's answer: ${requeued}`);
  const sent = postsTo("/v1/schedule/requeue");
  check(sent.length === 2 && JSON.parse(sent[1].body).dry_run === false,
        "the re-queue itself was sent once confirmed");
  const cleared = await (await fetch(`${base}/v1/schedule/exhausted`)).json();
  check(cleared.orders.length === 0, "the server has it re-queued");
  await page.waitForFunction(() =>
    document.querySelector("#exhausted-summary").textContent === "no order(s) at the attempt limit");

  // A manual run of given lines: the preview lists the keys, the run starts once confirmed.
  await page.fill("#run-lines", "XB B 1\nXB/A/1");
  await page.click("#run-start");
  await page.waitForSelector("#run-preview:not([hidden])");
  const runList = await page.locator("#run-list li").allTextContents();
  check(JSON.stringify(runList) === JSON.stringify(["XB/B/1", "XB/A/1"]),
        `the run preview lists the lines: ${JSON.stringify(runList)}`);
  check(postsTo("/v1/schedule/runs").length === 0, "no run was sent before the confirmation");
  await page.click("#run-confirm");
  await page.waitForSelector("#run-result:not([hidden])");
  const runResult = await page.locator("#run-result").textContent();
  check(/^run \d+ is running with 1 item\(s\); skipped: XB\/A\/1 \(already_scheduled\)$/
          .test(runResult), `the run's answer: ${runResult}`);
  check(postsTo("/v1/schedule/runs").length === 1, "one run was sent, after the confirmation");
  await page.screenshot({ path: join(artifacts, `${engine}-5-actions.png`), fullPage: true });

  check(errors.length === 0, `no errors in the page (${errors.join("; ")})`);
  const checked = cli("check");
  check(checked.includes("ok"), "onceorder check is clean afterwards");
} catch (e) {
  check(false, `the run ended early: ${e.stack || e}`);
  if (pageErrors.length) console.log(`page errors: ${pageErrors.join("; ")}`);
} finally {
  if (browser) await browser.close();
  if (server) server.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}
console.log(failures === 0 ? "console: every check held" : `console: ${failures} checks failed`);
process.exit(failures === 0 ? 0 : 1);
