// What the console's browser test needs around the page: a database with the demo data on the
// engine under test, `onceorder serve` processes, checks that count failures, and the page
// itself with its errors and requests recorded.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";

export const dir = mkdtempSync(join(tmpdir(), "onceorder-browser-"));
export const state = { failures: 0, servers: [] };

export function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) state.failures += 1;
}

export function makeDb(engine) {
  if (engine !== "postgresql") return `sqlite:${join(dir, "console.db")}`;
  const name = `oo_browser_${process.pid}`;
  execFileSync("createdb", [name]);
  return `postgresql:///${name}`;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Polls `probe` until it gives something truthy, which it returns.
export async function until(what, probe, timeoutMs = 20000) {
  for (const end = Date.now() + timeoutMs; ; await sleep(200)) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

// A TCP server on a free loopback port; `onConnection` gets each socket.
export async function listen(onConnection) {
  const s = createServer(onConnection);
  await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
  return s;
}

// `serve` on a free loopback port; resolves with its base URL, the admin token it printed when
// it made its tokens file (in the test's directory) and its log so far.
export function startServer(bin, db, extra = []) {
  // One attempt per order: an order whose production fails once is at the attempt limit. A
  // delivery whose receiver does not answer is given up on after 300 ms (in doubt).
  const server = spawn(bin, ["--db", db, "serve", "--listen", "127.0.0.1:0", "--max-attempts", "1",
                             "--delivery-timeout", "300ms", "--delivery-lease", "1s",
                             "--state-dir", dir, ...extra], { stdio: ["ignore", "pipe", "pipe"] });
  state.servers.push(server);
  const out = { log: "" };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("serve did not start:\n" + out.log)), 15000);
    const onData = (chunk) => {
      out.log += chunk;
      const m = /listening on \S+ port (\d+)/.exec(out.log);
      if (m && !out.base) {
        clearTimeout(timer);
        const made = /admin token: (\S+)\n/.exec(out.log);
        Object.assign(out, { base: `http://127.0.0.1:${m[1]}`, token: made ? made[1] : null });
        resolve(out);
      }
    };
    server.stdout.on("data", onData);
    server.stderr.on("data", onData);
    server.on("exit", (code) => reject(new Error(`serve exited with ${code}:\n${out.log}`)));
  });
}

// Requests this script sends itself, with a token.
export function api(base, token) {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${base}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers } });
    const text = await res.text();
    let json = null;
    try { json = JSON.parse(text); } catch (e) { /* not JSON */ }
    return { status: res.status, body: json };
  };
}

// The browser logs every 4xx answer as a console error: the console reads some routes that
// may answer 4xx on purpose (a route this server lacks, an order looked up that does not
// exist, a token refused); those are shown in the banner, which the checks look at.
const expectedLoad = (text) => /^Failed to load resource: the server responded with a status of (40[0134]|409)\b/.test(text);

// A page of the console; `errors` collects script errors and every other console error or
// warning (an invalid `pattern` is one), `requests` every request the page sent. With
// CONSOLE_WEB_DIR set, the console's files come from that directory instead of the binary:
// how a broken variant of the console is shown to fail these checks without a rebuild.
export async function openPage(browser, width, height = 900) {
  const page = await browser.newPage({ viewport: { width, height } });
  const rec = { page, errors: [], requests: [] };
  page.on("pageerror", (e) => rec.errors.push(String(e)));
  page.on("console", (m) => {
    if ((m.type() === "error" || m.type() === "warning") && !expectedLoad(m.text())) rec.errors.push(m.text());
  });
  page.on("request", (r) => rec.requests.push({ method: r.method(), url: r.url(), headers: r.headers(), body: r.postData() }));
  const override = process.env.CONSOLE_WEB_DIR;
  if (override) {
    const types = { ".js": "text/javascript", ".css": "text/css", ".html": "text/html" };
    await page.route(/\/[A-Za-z0-9._-]*\.(js|css|html)$|\/$/, (route) => {
      const name = new URL(route.request().url()).pathname.slice(1) || "index.html";
      const file = join(override, name);
      if (!existsSync(file)) return route.continue();
      return route.fulfill({ status: 200, contentType: types[extname(file)], body: readFileSync(file) });
    });
  }
  return rec;
}

// Goes to a route of the console and waits until its view is drawn.
export async function visit(page, base, route) {
  // The same address again changes nothing in a page: it is loaded afresh instead.
  const same = page.url() === `${base}/#${route}`;
  await page.goto(`${base}/#${route}`);
  if (same) await page.reload();
  await page.waitForSelector(`#view[data-ready="true"]`, { timeout: 15000 });
  await page.waitForFunction((r) => document.querySelector("#view").dataset.route === r.split("?")[0], route);
}

// Waits until the view is drawn again after a click that changes the address or the view.
export async function drawn(page, route) {
  await page.waitForFunction((r) => {
    const v = document.querySelector("#view");
    return v.dataset.ready === "true" && (r === null || location.hash === "#" + r);
  }, route, { timeout: 15000 });
}

export const bannerText = (page) => page.locator("#banner").evaluate((b) => (b.hidden ? "" : b.textContent));
