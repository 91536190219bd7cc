// The bugs the console once had, each checked (issue: "The console, rebuilt around
// navigation"): a failed look-up leaves nothing of the previous one on screen; a click on an
// order shows it in view; an operator can look an order up; no cancel for an order in
// production; every `pattern` valid; a 401 shown once; charts with axes, units and a time
// range, and the phase breakdown when /metrics has it; live mode one loop that slows down.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bannerText, check, dir, drawn, openPage, sleep, startServer, visit } from "./harness.mjs";

// A failed look-up after a good one: the 404 once at the top, nothing of the previous order
// (its facts list, a grid element, once stayed visible under the error).
async function failedLookUp(page, base, produced) {
  await visit(page, base, `/orders/${produced.order_id}`);
  await visit(page, base, "/orders/1");
  const banner = await bannerText(page);
  const shown = await page.evaluate((id) => [...document.querySelectorAll("dl, table")]
    .filter((e) => e.offsetParent !== null && e.textContent.includes(id)).length, produced.order_id);
  check(banner.includes("404") && shown === 0, `a failed look-up leaves no previous order on screen (${shown} shown; ${banner})`);
  const hiddenGrid = await page.evaluate(() => {
    const dl = document.createElement("dl");
    dl.className = "facts";
    dl.hidden = true;
    document.body.appendChild(dl);
    const display = getComputedStyle(dl).display;
    dl.remove();
    return display;
  });
  check(hiddenGrid === "none", `a hidden facts list is not displayed (display: ${hiddenGrid})`);
}

// A click on an order far down a long list (the events): its page is drawn at the top of the
// window.
async function clickShowsInView(page, base) {
  await visit(page, base, "/events");
  const link = page.locator("#view a.order-link").last();
  await link.scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await link.click();
  await page.waitForSelector(".order-page");
  await drawn(page, null);
  const top = await page.evaluate(() => {
    const r = document.querySelector("#view h1").getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight;
  });
  check(top, "a clicked order's page is in view (not further down the page)");
}

// The demo's orders are produced: no cancel offered, and the page says why.
async function noCancelInProduction(page, base, produced) {
  await visit(page, base, `/orders/${produced.order_id}`);
  const offered = await page.locator("#view .cancel-start").count();
  const why = await page.locator("#cancel-blocked").textContent().catch(() => "");
  check(offered === 0 && why.includes("in production"), `an order in production offers no cancel (${offered}; ${why})`);
}

// Every chart has both axes with their tick labels, a unit and the time range it shows.
async function chartsHaveAxes(page, base) {
  await visit(page, base, "/");
  for (const key of ["orders", "items", "numbers", "requests"]) {
    const c = await page.locator(`#chart-${key}`).evaluate((svg) => ({
      x: svg.querySelectorAll(".axis-x line").length, y: svg.querySelectorAll(".axis-y line").length,
      xt: [...svg.querySelectorAll(".axis-x text:not(.unit)")].map((t) => t.textContent),
      yt: [...svg.querySelectorAll(".axis-y text:not(.unit)")].map((t) => t.textContent),
      units: [...svg.querySelectorAll("text.unit")].map((t) => t.textContent),
      range: svg.closest("figure").querySelector(".range").textContent,
      bars: svg.querySelectorAll("rect.bar").length }));
    check(c.x >= 1 && c.y >= 1 && c.xt.length >= 2 && c.xt.every((t) => /^\d\d:\d\d$/.test(t)) && c.yt.length >= 2 &&
          c.yt[0] === "0" && c.units.some((u) => u.endsWith("/ min")) && c.units.includes("minute (UTC)") &&
          /^\d\d:\d\d–\d\d:\d\d UTC$/.test(c.range) && c.bars >= 1, `the ${key} chart has axes, units and its range: ${JSON.stringify(c)}`);
  }
}

// The placement phases: an empty state without the metric, a stacked chart with it (a
// /metrics answer with the histogram, given to the page in place of the server's).
async function phaseBreakdown(rec, base) {
  const { page } = rec;
  // The server's own histogram (the demo placed orders): drawn.
  await visit(page, base, "/");
  const served = await page.locator("#chart-phases rect.phase").count();
  check(served > 0, `the server's phase histogram is drawn (${served} bars)`);
  // A /metrics without it (an older server): the empty state says what would fill it.
  await page.route("**/metrics", (route) => route.fulfill({ status: 200, contentType: "text/plain",
                                                             body: "onceorder_up 1\n" }));
  await visit(page, base, "/orders");
  await visit(page, base, "/");
  const empty = await page.locator("#phases-empty").textContent().catch(() => "");
  check(empty.includes("onceorder_order_phase_seconds"), `without the metric, an empty state says what fills it: ${empty}`);
  await page.unroute("**/metrics");
  const series = [];
  for (const lines of ["1", "2-5"]) {
    for (const [phase, sum] of [["lock_wait", 0.02], ["round_trips", 0.05], ["other", 0.01]]) {
      const l = `phase="${phase}",lines="${lines}"`;
      series.push(`onceorder_order_phase_seconds_bucket{${l},le="+Inf"} 10`,
                  `onceorder_order_phase_seconds_sum{${l}} ${sum}`, `onceorder_order_phase_seconds_count{${l}} 10`);
    }
  }
  await page.route("**/metrics", (route) => route.fulfill({ status: 200, contentType: "text/plain", body: series.join("\n") + "\n" }));
  await visit(page, base, "/orders");
  await visit(page, base, "/");
  const bars = await page.locator("#chart-phases rect.phase").count();
  const title = bars ? await page.locator("#chart-phases rect.phase.round_trips").first().locator("title")
    .textContent() : "no chart";
  check(bars === 6 && title === "1 line(s), round_trips: 5.00 ms", `with the metric, the phases per cart size are drawn (${bars}; ${title})`);
  await page.unroute("**/metrics");
}

// Live mode: one draw every 5 s of the visible view only, and slower while the server is busy.
async function liveMode(rec, base) {
  const { page, requests } = rec;
  await visit(page, base, "/runs");
  const from = requests.length;
  await page.check("#live");
  await sleep(11500);
  const sent = requests.slice(from).map((r) => new URL(r.url).pathname);
  const runs = sent.filter((p) => p === "/v1/schedule/runs").length;
  const others = sent.filter((p) => p.startsWith("/v1/") && p !== "/v1/schedule/runs");
  // Two ticks in 11.5 s (one when a loaded machine draws slowly); a loop per second would be 11.
  check(runs >= 1 && runs <= 2 && others.length === 0,
        `live mode reads the visible view only, every 5 s (${runs} reads; others: ${others.join(" ")})`);
  await page.route("**/v1/schedule/runs?*", (route) => route.fulfill({ status: 503, contentType: "application/problem+json",
    headers: { "Retry-After": "1" }, body: JSON.stringify({ status: 503, code: "busy", detail: "try later" }) }));
  const slowed = await page.waitForFunction(() => document.querySelector("#live-state").textContent
    .startsWith("slowed to 10"), null, { timeout: 12000 }).then(() => true, () => false);
  check(slowed, "a busy server slows live mode down (to 10 s after one busy answer)");
  await page.unroute("**/v1/schedule/runs?*");
  await page.uncheck("#live");
}

export async function bugChecks({ browser, base, token, produced, artifacts, engine }) {
  const rec = await openPage(browser, 1400);
  await rec.page.goto(`${base}/#token=${token}`);
  await failedLookUp(rec.page, base, produced);
  await noCancelInProduction(rec.page, base, produced);
  await chartsHaveAxes(rec.page, base);
  await phaseBreakdown(rec, base);
  await liveMode(rec, base);
  await rec.page.close();
  const narrow = await openPage(browser, 800, 600);
  await narrow.page.goto(`${base}/#token=${token}`);
  await clickShowsInView(narrow.page, base);
  await narrow.page.screenshot({ path: join(artifacts, `${engine}-800-clicked-order.png`) });
  await narrow.page.close();
}

// A server with a tokens file of an operator and a viewer: without a token the 401 is shown
// once however many reads got it; an operator's link with a token for first login opens an
// order (its routes only), and the token is taken out of the address and never sent but in
// the Authorization header.
export async function tokenChecks({ browser, bin, db, order, artifacts, engine }) {
  const tokens = join(dir, "tokens");
  const operator = "operator-token-0123456789-0123456789-abc";
  writeFileSync(tokens, `${operator} operator ops\nviewer-token-0123456789-0123456789-abcd viewer watcher\n`, { mode: 0o600 });
  const server = await startServer(bin, db, ["--tokens", tokens, "--delivery-workers", "0"]);
  const rec = await openPage(browser, 1400);
  for (const route of ["/", `/orders/${order.order_id}`, "/orders", "/endpoints"]) {
    await visit(rec.page, server.base, route);
    const seen = await rec.page.evaluate(() => document.body.innerText.match(/\b401\b/g)?.length || 0);
    check(seen === 1 && (await bannerText(rec.page)).startsWith("401 unauthorized"), `without a token ${route} shows the 401 once (${seen} times)`);
  }
  await rec.page.screenshot({ path: join(artifacts, `${engine}-no-token.png`) });
  const from = rec.requests.length;
  await rec.page.goto(`${server.base}/#/orders/${order.order_id}?token=${operator}`);
  await rec.page.waitForFunction((id) => document.querySelector("#view").dataset.route === `/orders/${id}` &&
    document.querySelector("#view").dataset.ready === "true", order.order_id);
  check(!rec.page.url().includes("token") && rec.page.url().endsWith(`#/orders/${order.order_id}`),
        `the link's token is gone from the address bar (${rec.page.url()})`);
  const shown = await rec.page.locator(".order-page").count();
  const status = shown ? await rec.page.locator(".order-page").getAttribute("data-status") : "not shown";
  const lines = await rec.page.locator(".order-page section").nth(1).locator("tbody tr").count();
  check(status === "placed" && lines >= 1 && (await bannerText(rec.page)) === "",
        `an operator looks the order up: status ${status}, ${lines} lines, no error`);
  const sent = rec.requests.slice(from).filter((r) => r.url.includes("/v1/"));
  const own = sent.filter((r) => new URL(r.url).pathname === `/v1/orders/${order.order_id}`);
  check(own.length === 0, `the operator's look-up uses routes an operator may call (${own.length} admin-only reads)`);
  const leaked = rec.requests.filter((r) => r.url.includes(operator) || (r.body || "").includes(operator) ||
    Object.entries(r.headers).some(([k, v]) => k !== "authorization" && v.includes(operator)));
  check(leaked.length === 0 && sent.every((r) => r.headers.authorization === `Bearer ${operator}`),
        `the token goes in the Authorization header only (${leaked.length} elsewhere)`);
  check(!server.log.includes(operator), "the server's log never has the token");
  await rec.page.close();
  await viewerIsRefused(browser, server.base, artifacts, engine);
}

// A viewer's token reads the deliveries; its action gets the server's 403, shown, and the
// console then offers no more actions to that token.
async function viewerIsRefused(browser, base, artifacts, engine) {
  const rec = await openPage(browser, 1400);
  await rec.page.goto(`${base}/#/endpoints/down?token=viewer-token-0123456789-0123456789-abcd`);
  await rec.page.waitForSelector('#view tr[data-status="dead"] .redeliver-start');
  await rec.page.locator("#view .redeliver-start").first().click();
  await rec.page.locator("#view .redeliver-confirm").click();
  await rec.page.waitForSelector("#result:not([hidden])");
  const refused = await rec.page.locator("#result").textContent();
  check(refused.startsWith("not redelivered: 403 forbidden"), `the viewer's refusal is shown: ${refused}`);
  await rec.page.waitForSelector("#actions-refused");
  const offered = await rec.page.locator("#view button.start, #view input[type=checkbox]").count();
  check(offered === 0, `the viewer's token is offered no more actions (${offered})`);
  await rec.page.screenshot({ path: join(artifacts, `${engine}-viewer.png`) });
  await rec.page.close();
}
