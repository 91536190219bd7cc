// The operator console in a real browser (Debian's headless Chromium, driven by
// playwright-core): a server with the demo data, the lists rendered, and the actions (cancel an
// order, reap now, re-queue an order at the attempt limit, a manual run of given lines; redeliver
// dead deliveries, settle an in-doubt one), each after its preview and only once confirmed,
// carried out through the page, and refused to a viewer's token. Screenshots of each step go to
// the artifacts directory.
//
// Usage: node console_test.mjs ONCEORDER_BIN ARTIFACTS_DIR sqlite|postgresql
// (postgresql: inside pg_virtualenv, whose PG* variables name the server; a database of its
// own is created). Exit status 0 when every check held, 1 otherwise, 77 when Chromium is
// missing or PostgreSQL is not configured and not required (ctest reports a skip).
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
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

// Every request this script sends itself carries the admin token the server printed when it
// made its tokens file (one place, rather than a header at each call).
let apiToken = null;
const plainFetch = globalThis.fetch;
globalThis.fetch = (url, init = {}) => {
  const headers = new Headers(init.headers || {});
  if (apiToken && !headers.has("Authorization")) headers.set("Authorization", `Bearer ${apiToken}`);
  return plainFetch(url, { ...init, headers });
};

// `serve` on a free loopback port; resolves with the port from its log line and the admin
// token it printed when it made its tokens file (in the test's directory) at this start.
function startServer(extra = []) {
  // One attempt per order: an order whose production fails once is at the attempt limit. A
  // delivery whose receiver does not answer is given up on after 300 ms (in doubt, at most once).
  const server = spawn(bin, ["--db", db, "serve", "--listen", "127.0.0.1:0", "--max-attempts", "1",
                             "--delivery-timeout", "300ms", "--delivery-lease", "1s",
                             "--state-dir", dir, ...extra],
                       { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let log = "";
    const timer = setTimeout(() => reject(new Error("serve did not start:\n" + log)), 15000);
    const onData = (chunk) => {
      log += chunk;
      const m = /listening on \S+ port (\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        const made = /admin token: (\S+)\n/.exec(log);
        resolve({ server, port: Number(m[1]), token: made ? made[1] : null });
      }
    };
    server.stdout.on("data", onData);
    server.stderr.on("data", onData);
    server.on("exit", (code) => reject(new Error(`serve exited with ${code}:\n${log}`)));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Polls `probe` until it gives something truthy, which it returns.
async function until(what, probe, timeoutMs = 20000) {
  for (const end = Date.now() + timeoutMs; ; await sleep(200)) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

// A TCP server on a free loopback port; `onConnection` gets each socket.
async function listen(onConnection) {
  const s = createServer(onConnection);
  await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
  return s;
}

// The browser logs every 4xx answer as a console error; the actions this test has refused on
// purpose (a redeliver of a delivery no longer dead, a viewer's action) are not page errors.
const refusedOnPurpose = (text) =>
  /^Failed to load resource: the server responded with a status of (403|409)\b/.test(text);

let server = null;
let viewerServer = null;
let receiver = null;
const receiverSockets = [];
let browser = null;
const pageErrors = [];
// The deliveries of endpoint `name` with `status`, as the server has them.
async function deliveries(base, name, status) {
  const q = new URLSearchParams({ limit: "1000" });
  if (status) q.set("status", status);
  return (await (await fetch(`${base}/v1/endpoints/${name}/deliveries?${q}`)).json()).deliveries;
}
const deliveryOf = async (base, name, id) =>
  (await deliveries(base, name)).find((d) => String(d.event_id) === id);

// The cells of a delivery's row in the page: ["", event, type, key, status, attempt, …].
const rowCells = (page, id) => page.locator(`#deliveries tr[data-event="${id}"] td`).allTextContents();

// Events and endpoints: an endpoint where nothing listens (every send refused at once; one
// attempt, so its deliveries die), an at-most-once endpoint whose receiver reads the request and
// never answers (in doubt), and a consumer at the feed's start; then, in the page, their counts
// and lag, and the operator's actions on the deliveries, each after its preview. Resolves with
// the number of deliveries in doubt and how often the receiver got an event.
async function setUpEndpoints(base, api) {
  const closed = await listen(() => {});
  const downPort = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const received = new Map(); // event id → requests
  receiver = await listen((socket) => {
    receiverSockets.push(socket);
    socket.on("error", () => {});
    socket.once("data", (chunk) => {
      const id = /^idempotency-key: *(\d+)/im.exec(chunk.toString());
      if (id) received.set(id[1], (received.get(id[1]) || 0) + 1);
    });
  });
  const secret = "browser-test-secret-0123";
  check((await api("PUT", "/v1/endpoints/down", {
    url: `http://127.0.0.1:${downPort}/hook`, secret, max_attempts: 1, backoff_seconds: 1, after: "0",
  })).status === 201, "an endpoint where nothing listens, from the feed's start");
  check((await api("PUT", "/v1/endpoints/stall", {
    url: `http://127.0.0.1:${receiver.address().port}/hook`, secret, delivery: "at_most_once",
    types: ["order.placed"], after: "0",
  })).status === 201, "an at-most-once endpoint whose receiver never answers");
  check((await api("PUT", "/v1/consumers/x", { after: "0" })).status === 201,
        "a consumer at the feed's start");
  const placed = (await (await fetch(`${base}/v1/events?types=order.placed&limit=1000`)).json())
    .events.length;
  // Settled: every delivery to `down` dead or waiting for a dead one of its key; every
  // order's delivery to `stall` in doubt.
  await until("the deliveries to die and to be in doubt", async () => {
    const pending = await deliveries(base, "down", "pending");
    const dead = await deliveries(base, "down", "dead");
    const doubt = await deliveries(base, "stall", "in_doubt");
    return dead.length > 0 && pending.every((d) => d.blocked_by !== null) && doubt.length === placed;
  });
  return { inDoubt: placed, received: (id) => received.get(id) || 0 };
}

async function eventsAndEndpoints(page, base, postsTo, order) {
  const api = (method, path, body) => fetch(`${base}${path}`, {
    method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const { inDoubt, received } = await setUpEndpoints(base, api);

  await page.click("#refresh");
  await page.waitForSelector('#endpoints tr[data-name="stall"]');
  await page.waitForSelector('#consumers tr[data-name="x"]');
  const down = page.locator('#endpoints tr[data-name="down"] td');
  const downCells = await down.allTextContents();
  const deadMarked = await down.nth(5).getAttribute("class");
  check(Number(downCells[5]) > 0 && deadMarked === "attention",
        `the endpoint shows its dead deliveries, marked: ${JSON.stringify(downCells)}`);
  const stallCells = await page.locator('#endpoints tr[data-name="stall"] td').allTextContents();
  check(stallCells[3] === "at_most_once" && stallCells[2] === "order.placed" && inDoubt >= 2 &&
        stallCells[6] === String(inDoubt) &&
        await page.locator('#endpoints tr[data-name="stall"] td').nth(6).getAttribute("class") === "attention",
        `the other endpoint shows its delivery in doubt, marked: ${JSON.stringify(stallCells)}`);
  const summary = await page.locator("#endpoints-summary").textContent();
  check(summary.endsWith(`dead and ${inDoubt} in-doubt deliveries wait for an operator`),
        `the endpoints' summary: ${summary}`);
  const consumer = page.locator('#consumers tr[data-name="x"] td');
  const consumerCells = await consumer.allTextContents();
  check(Number(consumerCells[2]) > 20 && await consumer.nth(2).getAttribute("class") === "attention" &&
        Number(consumerCells[3]) > 0,
        `the consumer's lag, in events and seconds, marked: ${JSON.stringify(consumerCells)}`);
  await page.locator("#events-section").screenshot({ path: join(artifacts, `${engine}-7-endpoints.png`) });
  await redeliverOne(page, base, postsTo);
  await redeliverSeveral(page, postsTo);
  await blockedByShown(page, base, order);
  await settleInDoubt(page, base, api, postsTo, { inDoubt, received });
  await latestEvents(page, base);
}

// `down`'s deliveries, dead first, beside the list; one redelivered through the preview.
async function redeliverOne(page, base, postsTo) {
  await page.locator('#endpoints tr[data-name="down"]').click();
  await page.waitForSelector("#deliveries tr");
  check(await page.locator("#deliveries-status").inputValue() === "dead", "the dead ones are shown first");
  const statuses = await page.locator("#deliveries tr").evaluateAll((rs) => rs.map((r) => r.dataset.status));
  check(statuses.length > 0 && statuses.every((s) => s === "dead"), `only dead ones: ${statuses.length}`);
  const inView = await page.evaluate(() => {
    const top = document.querySelector("#deliveries-panel").getBoundingClientRect().top;
    return top >= 0 && top < window.innerHeight / 2;
  });
  check(inView, "the deliveries are scrolled into view");
  const ids = await page.locator("#deliveries tr").evaluateAll((rs) => rs.map((r) => r.dataset.event));
  const first = await rowCells(page, ids[0]);
  check(first[6].startsWith("no connection") && first[5] === "1",
        `a dead delivery's attempt and last outcome: ${JSON.stringify(first)}`);
  const redeliverPath = "/v1/endpoints/down/redeliver";
  await page.locator(`#deliveries tr[data-event="${ids[0]}"] button.redeliver`).click();
  await page.waitForSelector("#delivery-preview:not([hidden])");
  const what = await page.locator("#delivery-what").textContent();
  const list = await page.locator("#delivery-list li").allTextContents();
  check(what.startsWith("Redeliver 1 dead delivery(ies) to down") && what.includes("fresh budget of 1") &&
        list.length === 1 && list[0].startsWith(`event ${ids[0]} (`),
        `the preview says what the redeliver does: ${what} ${JSON.stringify(list)}`);
  check(postsTo(redeliverPath).length === 0, "nothing was redelivered before the confirmation");
  await page.locator("#events-section").screenshot({ path: join(artifacts, `${engine}-8-redeliver-preview.png`) });
  await page.click("#delivery-confirm");
  await page.waitForSelector("#delivery-result:not([hidden])");
  const result = await page.locator("#delivery-result").textContent();
  check(result === `redelivered event(s) ${ids[0]} to down: pending again, sent within about a second`,
        `the redeliver's answer: ${result}`);
  const sent = postsTo(redeliverPath);
  check(sent.length === 1 && sent[0].body === `{"event_ids":[${ids[0]}]}`, `one redeliver sent: ${sent.map((p) => p.body)}`);
  const again = await until("the redelivered one to be sent again", async () => {
    const d = await deliveryOf(base, "down", ids[0]);
    return d.attempt === 2 && d.status === "dead" ? d : null;
  });
  await page.click("#deliveries-form button");
  await page.waitForFunction((id) => {
    const row = document.querySelector(`#deliveries tr[data-event="${id}"]`);
    return row && row.children[5].textContent === "2";
  }, ids[0]);
  check(again.attempt === 2, "it was sent once more (attempt 2), and is dead again");
}

// Two ticked dead deliveries redelivered in one request.
async function redeliverSeveral(page, postsTo) {
  const redeliverPath = "/v1/endpoints/down/redeliver";
  const ids = await page.locator("#deliveries tr").evaluateAll((rs) => rs.map((r) => r.dataset.event));
  for (const id of [ids[2], ids[3]]) {
    await page.locator(`#deliveries tr[data-event="${id}"] input[type=checkbox]`).check();
  }
  await page.click("#redeliver-ticked");
  await page.waitForSelector("#delivery-preview:not([hidden])");
  const list = await page.locator("#delivery-list li").allTextContents();
  check(list.length === 2 && list[0].startsWith(`event ${ids[2]} `) && list[1].startsWith(`event ${ids[3]} `),
        `the preview lists the ticked ones: ${JSON.stringify(list)}`);
  const before = postsTo(redeliverPath).length;
  await page.click("#delivery-confirm");
  await page.waitForSelector("#delivery-result:not([hidden])");
  const result = await page.locator("#delivery-result").textContent();
  check(result.startsWith(`redelivered event(s) ${ids[2]}, ${ids[3]} to down`), `the answer: ${result}`);
  const sent = postsTo(redeliverPath).slice(before);
  check(sent.length === 1 && sent[0].body === `{"event_ids":[${ids[2]},${ids[3]}]}`,
        `both in one request: ${sent.map((p) => p.body)}`);
}

// The cancelled order's cancel waits for its dead order.placed: the pending list says so.
async function blockedByShown(page, base, order) {
  await page.selectOption("#deliveries-status", "pending");
  await page.click("#deliveries-form button");
  const row = page.locator("#deliveries tr", { hasText: "order.cancelled" });
  await row.waitFor();
  const cells = await row.locator("td").allTextContents();
  const placed = (await deliveries(base, "down", "dead"))
    .find((d) => d.key === order.order_id && d.type === "order.placed");
  check(cells[3] === order.order_id && cells[4].startsWith("pending") && placed &&
        cells[7] === String(placed.event_id),
        `the cancel waits for its dead order.placed (blocked by): ${JSON.stringify(cells)}`);
}

// `stall`'s deliveries in doubt: one is sent again (once more, in doubt again), then marked
// delivered, each after its preview; one settled through the API while its preview is open is
// refused (409) with the server's detail shown.
async function settleInDoubt(page, base, api, postsTo, { inDoubt, received }) {
  const resolvePath = "/v1/endpoints/stall/resolve";
  await page.locator('#endpoints tr[data-name="stall"]').click();
  await page.waitForSelector('#deliveries tr[data-status="in_doubt"]');
  check(await page.locator("#deliveries-status").inputValue() === "in_doubt",
        "an endpoint with nothing dead shows its in-doubt deliveries first");
  const [id, other] = await page.locator("#deliveries tr").evaluateAll((rs) => rs.map((r) => r.dataset.event));
  check(await page.locator("#deliveries input[type=checkbox]").count() === 0 &&
        await page.locator("#deliveries button.redeliver").count() === 0,
        "an in-doubt delivery offers no redeliver");
  check(received(id) === 1, `the receiver got the event once (${received(id)})`);
  await page.click(`#deliveries tr[data-event="${id}"] button.send-again`);
  await page.waitForSelector("#delivery-preview:not([hidden])");
  const what = await page.locator("#delivery-what").textContent();
  check(what.includes("OnceOrder will send it once more; only if you know the receiver did not get it") &&
        await page.locator("#delivery-confirm").textContent() === "Confirm: send again",
        `the send-again preview: ${what}`);
  check(postsTo(resolvePath).length === 0, "nothing was resolved before the confirmation");
  await page.locator("#events-section").screenshot({ path: join(artifacts, `${engine}-9-in-doubt-preview.png`) });
  await page.click("#delivery-confirm");
  await page.waitForSelector("#delivery-result:not([hidden])");
  const resent = await page.locator("#delivery-result").textContent();
  check(resent.startsWith(`event ${id} to stall is pending`), `the answer: ${resent}`);
  check(postsTo(resolvePath).at(-1).body === `{"event_id":${id},"delivered":false}`, "sent as delivered: false");
  await until("the delivery to be sent once more and in doubt again", async () => {
    const d = await deliveryOf(base, "stall", id);
    return d.status === "in_doubt" && d.attempt === 2;
  });
  check(received(id) === 2, `the receiver got it a second time (${received(id)})`);
  await page.click("#deliveries-form button");
  await page.waitForFunction((id) => {
    const row = document.querySelector(`#deliveries tr[data-event="${id}"]`);
    return row && row.children[5].textContent === "2";
  }, id);
  await page.click(`#deliveries tr[data-event="${id}"] button.mark-delivered`);
  await page.waitForSelector("#delivery-preview:not([hidden])");
  const markWhat = await page.locator("#delivery-what").textContent();
  check(markWhat.includes("the receiver got it; OnceOrder will not send it again"),
        `the mark-delivered preview: ${markWhat}`);
  await page.click("#delivery-confirm");
  await page.waitForSelector("#delivery-result:not([hidden])");
  const settled = await page.locator("#delivery-result").textContent();
  check(settled.startsWith(`event ${id} to stall is delivered`), `the answer: ${settled}`);
  check((await deliveryOf(base, "stall", id)).status === "delivered", "the server has it delivered");

  await page.click(`#deliveries tr[data-event="${other}"] button.mark-delivered`);
  await page.waitForSelector("#delivery-preview:not([hidden])");
  check((await api("POST", resolvePath, { event_id: Number(other), delivered: true })).status === 200,
        "meanwhile, the other one was settled through the API");
  await page.click("#delivery-confirm");
  await page.waitForSelector("#delivery-result:not([hidden])");
  const refused = await page.locator("#delivery-result").textContent();
  check(refused.startsWith("not settled: 409 conflict: ") && refused.includes("not in_doubt") &&
        await page.locator("#delivery-result").getAttribute("class") === "bad",
        `the conflict's detail is shown: ${refused}`);
  const left = String(inDoubt - 2);
  await page.waitForFunction((left) =>
    document.querySelector('#endpoints tr[data-name="stall"]').children[6].textContent === left, left);
  const leftClass = await page.locator('#endpoints tr[data-name="stall"] td').nth(6).getAttribute("class");
  check(await page.locator('#deliveries tr').count() === inDoubt - 2 &&
        leftClass === (inDoubt > 2 ? "attention" : null),
        `the list and the count show the ${left} still in doubt (marked: ${leftClass})`);
  await page.locator("#events-section").screenshot({ path: join(artifacts, `${engine}-10-settled.png`) });
}

// The latest events go on from the console's cursor: a new order's event comes on top.
async function latestEvents(page, base) {
  const placed = await fetch(`${base}/v1/orders`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Idempotency-Key": "browser-2" },
    body: JSON.stringify({ customer_id: 9, warehouse_id: 1, lines: [{ sku_id: 101, quantity: 1 }] }),
  });
  const order = await placed.json();
  check(placed.status === 201, `another order was placed (${placed.status} ${JSON.stringify(order)})`);
  await until("its event to be readable", async () =>
    (await (await fetch(`${base}/v1/events?types=order.placed&limit=1000`)).json())
      .events.some((e) => e.key === order.order_id));
  await page.click("#refresh");
  await page.waitForFunction((key) =>
    document.querySelector("#feed tr td:nth-child(3)").textContent === key, order.order_id);
  const rows = await page.locator("#feed tr").count();
  check(rows === 20, `the newest order's event is on top of the 20 latest (${rows})`);
  await page.selectOption("#feed-types", "order.cancelled");
  await page.waitForFunction(() => [...document.querySelectorAll("#feed tr td:nth-child(2)")]
    .every((td) => td.textContent === "order.cancelled") && document.querySelectorAll("#feed tr").length === 1);
  check(true, "filtered by type: the one cancel");
  await page.selectOption("#feed-types", "");
  await page.waitForFunction(() => document.querySelectorAll("#feed tr").length === 20);
}

// A viewer's token reads the deliveries, and its action gets the server's 403 shown; the
// console then offers no more actions to that token. (No route tells the console its role.)
async function viewerIsRefused(base) {
  const tokens = join(dir, "tokens");
  writeFileSync(tokens, "viewer-token-0123456789-0123456789-abc viewer watcher\n", { mode: 0o600 });
  const started = await startServer(["--tokens", tokens, "--delivery-workers", "0"]);
  viewerServer = started.server;
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  // Before its token is given, the page's reads are answered 401, as they should be.
  const unauthorized = (text) => text.includes("the server responded with a status of 401");
  page.on("console", (m) => {
    if (m.type() === "error" && !refusedOnPurpose(m.text()) && !unauthorized(m.text())) {
      pageErrors.push(m.text());
    }
  });
  await page.goto(`http://127.0.0.1:${started.port}/`);
  await page.waitForFunction(() => document.querySelector("#endpoints-summary").textContent.startsWith("401"));
  const noToken = await page.locator("#endpoints-summary").textContent();
  check(noToken.startsWith("401 unauthorized: "), `without a token the section says why: ${noToken}`);
  await page.fill("#token", "viewer-token-0123456789-0123456789-abc");
  await page.click("#token-form button");
  await page.locator('#endpoints tr[data-name="down"]').click();
  await page.waitForSelector('#deliveries tr[data-status="dead"]');
  const id = await page.locator("#deliveries tr").first().getAttribute("data-event");
  const before = await deliveryOf(base, "down", id);
  await page.click(`#deliveries tr[data-event="${id}"] button.redeliver`);
  await page.click("#delivery-confirm");
  await page.waitForSelector("#delivery-result:not([hidden])");
  const refused = await page.locator("#delivery-result").textContent();
  check(refused.startsWith("not redelivered: 403 forbidden: a viewer token only reads"),
        `the viewer's refusal is shown: ${refused}`);
  await page.waitForSelector("#deliveries-refused:not([hidden])");
  check(await page.locator("#deliveries button").count() === 0 &&
        await page.locator("#deliveries input[type=checkbox]").count() === 0 &&
        await page.locator("#redeliver-ticked").isHidden(),
        "the viewer's token is offered no more actions");
  const after = await deliveryOf(base, "down", id);
  check(after.status === "dead" && after.attempt === before.attempt, "the refused action changed nothing");
  await page.locator("#events-section").screenshot({ path: join(artifacts, `${engine}-11-viewer.png`) });
  await page.close();
}

try {
  cli("migrate");
  cli("demo");
  const started = await startServer();
  server = started.server;
  const base = `http://127.0.0.1:${started.port}`;
  apiToken = started.token;
  check(apiToken !== null && apiToken.length >= 32, "serve made its tokens file and printed its admin token");
  const refusedWithout = await plainFetch(`${base}/v1/schedule/runs`);
  check(refusedWithout.status === 401, `a request without a token is refused (${refusedWithout.status})`);

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
  page.on("console", (m) => {
    if (m.type() === "error" && !refusedOnPurpose(m.text())) errors.push(m.text());
  });
  // Every request the page sends that changes something, to show none goes before its
  // confirmation.
  const posts = [];
  page.on("request", (r) => {
    if (r.method() === "POST") posts.push({ path: new URL(r.url()).pathname, body: r.postData() });
  });
  const postsTo = (path) => posts.filter((p) => p.path === path);
  // Logged in through the address's fragment, which the console then takes out of the address.
  await page.goto(`${base}/#token=${apiToken}`);
  check(!page.url().includes("token"), `the token is gone from the address bar (${page.url()})`);

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
  // The events section before any endpoint or consumer exists: empty states, and the feed's
  // newest events (the demo's and the order placed above), newest first.
  await page.waitForFunction(() => document.querySelectorAll("#feed tr").length > 0);
  check(await page.locator("#endpoints-summary").textContent() ===
        "no endpoints (PUT /v1/endpoints/{name} adds one)", "no endpoints yet");
  check(await page.locator("#consumers-summary").textContent() ===
        "no consumers (PUT /v1/consumers/{name} adds one)", "no consumers yet");
  check(await page.locator("#deliveries-panel").isHidden(), "no endpoint's deliveries are open");
  const feedIds = await page.locator("#feed tr").evaluateAll((rs) => rs.map((r) => Number(r.dataset.event)));
  const firstEvent = await page.locator("#feed tr").first().locator("td").allTextContents();
  check(feedIds.length === 20 && feedIds.every((id, i) => i === 0 || id < feedIds[i - 1]) &&
        firstEvent[1] === "order.placed" && firstEvent[2] === order.order_id,
        `the latest 20 events, newest (the order placed) first: ${JSON.stringify(firstEvent.slice(0, 3))}`);
  check(await page.locator("#feed-more").isHidden(), "the feed was read to its head: no More");
  await page.locator("#events-section").screenshot({ path: join(artifacts, `${engine}-6-events-empty.png`) });
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
  // admin serve made at its first start.
  await page.waitForFunction(() => document.querySelectorAll("#actions tr").length === 2,
                             null, { timeout: 12000 });
  const actions = await page.locator("#actions tr").allInnerTexts();
  const fields = actions.map((r) => r.split("\t"));
  check(fields[0][4] === "run.create" && fields[1][4] === "order.cancel" &&
        fields[1][5] === order.order_id && fields.every((f) => f[2] === "admin"),
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

  await eventsAndEndpoints(page, base, postsTo, order);
  await viewerIsRefused(base);

  check(errors.length === 0, `no errors in the page (${errors.join("; ")})`);
  const checked = cli("check");
  check(checked.includes("ok"), "onceorder check is clean afterwards");
} catch (e) {
  check(false, `the run ended early: ${e.stack || e}`);
  if (pageErrors.length) console.log(`page errors: ${pageErrors.join("; ")}`);
} finally {
  if (browser) await browser.close();
  if (server) server.kill("SIGTERM");
  if (viewerServer) viewerServer.kill("SIGTERM");
  for (const socket of receiverSockets) socket.destroy();
  if (receiver) receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(failures === 0 ? "console: every check held" : `console: ${failures} checks failed`);
process.exit(failures === 0 ? 0 : 1);
