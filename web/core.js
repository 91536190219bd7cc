// The console's shared parts: the token (kept for the tab, sent only in the Authorization
// header), the API calls, the one error banner at the top, and small DOM builders. Every value
// is inserted as text, never as HTML.

export const $ = (id) => document.getElementById(id);
const tokenKey = "onceorder.token";

export const getToken = () => sessionStorage.getItem(tokenKey);
export function setToken(token) {
  if (token) sessionStorage.setItem(tokenKey, token);
  else sessionStorage.removeItem(tokenKey);
}

// A token in the address's fragment — the bare `/#token=…` that `onceorder serve` prints, or a
// link's `#/orders/ID?token=…` — is kept for the tab and taken out of the address bar and its
// history entry at once. A browser never sends the fragment to the server.
export function takeTokenFromAddress() {
  const hash = location.hash.slice(1);
  const q = hash.indexOf("?");
  const bare = !hash.startsWith("/");
  const path = bare ? "" : q < 0 ? hash : hash.slice(0, q);
  const params = new URLSearchParams(bare ? hash : q < 0 ? "" : hash.slice(q + 1));
  const token = params.get("token");
  if (token === null) return;
  if (token.trim()) setToken(token.trim());
  params.delete("token");
  const rest = params.toString();
  const fragment = bare ? (rest ? "#/?" + rest : "") : "#" + path + (rest ? "?" + rest : "");
  history.replaceState(history.state, "", location.pathname + location.search + fragment);
}

// Amounts are 64-bit: past 2^53 a JavaScript number would change their last digits, so an
// integer a double cannot hold exactly stays the text sent.
function parseJson(text) {
  return JSON.parse(text, (key, value, context) =>
    typeof value === "number" && !Number.isSafeInteger(value) && context &&
    /^-?[0-9]+$/.test(context.source) ? context.source : value);
}

async function readJson(res) {
  try { return parseJson(await res.text()); } catch (e) { return null; }
}

function headers() {
  const token = getToken();
  return token ? { Authorization: "Bearer " + token } : {};
}

// Every answer, also "server unreachable" (status 0), comes back as {status, body, retryAfter}.
async function call(path, init) {
  try {
    const res = await fetch(path, { ...init, headers: { ...headers(), ...(init.headers || {}) },
                                    cache: "no-store" });
    const retry = Number(res.headers.get("Retry-After"));
    return { status: res.status, body: await readJson(res), retryAfter: retry > 0 ? retry : 0 };
  } catch (e) {
    return { status: 0, body: null, retryAfter: 0 };
  }
}

export const getJson = (path) => call(path, { method: "GET" });

export function postJson(path, body) {
  return call(path, { method: "POST", body: body === undefined ? undefined : JSON.stringify(body),
                      headers: body === undefined ? {} : { "Content-Type": "application/json" } });
}

// /metrics is open (no token) and text; absent (404) when it has a listener of its own.
export async function getText(path) {
  try {
    const res = await fetch(path, { cache: "no-store" });
    return { status: res.status, text: res.status === 200 ? await res.text() : "" };
  } catch (e) {
    return { status: 0, text: "" };
  }
}

export function problemText(r) {
  if (r.status === 0) return "server unreachable";
  if (r.body && r.body.detail) {
    const fields = (r.body.errors || []).map((e) => `${e.field}: ${e.message}`).join("; ");
    return `${r.status} ${r.body.code}: ${r.body.detail}${fields ? " (" + fields + ")" : ""}`;
  }
  return `HTTP ${r.status}`;
}

// The error banner: every failed read of the visible view reports here, each message once,
// however many reads got it. A new view starts with it empty.
const reported = new Map(); // message → count
export const lastStatus = { worst: 200, retryAfter: 0 };

export function report(message) {
  reported.set(message, (reported.get(message) || 0) + 1);
  renderBanner();
}

export function clearBanner() {
  reported.clear();
  renderBanner();
}

function renderBanner() {
  const banner = $("banner");
  banner.replaceChildren();
  for (const message of reported.keys()) banner.appendChild(el("p", {}, message));
  banner.hidden = reported.size === 0;
}

// A read that must succeed: a failure goes to the banner (a 401 with what to do about it) and
// gives null.
export async function need(path) {
  const r = await getJson(path);
  if (r.status === 200) return r.body;
  reportFailure(path, r);
  return null;
}

export function reportFailure(path, r) {
  noteFailure(r);
  report(r.status === 401 ? `${problemText(r)} — give a token above (it stays in this tab)`
                          : `${path.split("?")[0]}: ${problemText(r)}`);
}

// Busy (503), rate-limited (429) and unreachable answers slow the live loop down.
export function noteFailure(r) {
  if (r.status === 0 || r.status === 429 || r.status === 503) {
    lastStatus.worst = r.status === 0 ? 503 : r.status;
    lastStatus.retryAfter = Math.max(lastStatus.retryAfter, r.retryAfter);
  }
}

// el("a", {href: "#/x", class: "id"}, "text", child…): attributes, then text or nodes.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

// Links to each entity's page: every id on every page is one.
const routeOf = {
  order: (id) => `#/orders/${id}`,
  run: (id) => `#/runs/${id}`,
  item: (id) => `#/items/${id}`,
  scope: (name) => `#/scopes/${encodeURIComponent(name)}`,
  warehouse: (id) => `#/warehouses/${id}`,
  endpoint: (name) => `#/endpoints/${encodeURIComponent(name)}`,
  // A customer and a principal have no page of their own: their orders, their actions.
  customer: (id) => `#/orders?customer_id=${id}`,
  principal: (name) => `#/audit?principal=${encodeURIComponent(name)}`,
};
export function link(kind, id, text) {
  if (id === null || id === undefined || id === "") return "";
  return el("a", { href: routeOf[kind](id), class: `id ${kind}-link` }, text ?? String(id));
}

// A source order's key; its site `W<warehouse_id>` is an order's line, whose order is found by
// its order_no through the orders' list (the key holds the order_no, not the id).
export const keyText = (k) => `${k.site_code}/${k.order_no}/${k.lot_no}`;
export function keyLinks(k) {
  const scope = link("scope", `PO-${k.site_code}`, k.site_code);
  const items = el("a", { href: "#/items?" + new URLSearchParams({ site_code: k.site_code,
    order_no: k.order_no, lot_no: k.lot_no }), class: "id key-link" }, `${k.order_no}/${k.lot_no}`);
  return el("span", {}, scope, "/", items);
}

// A table; `rows` are arrays of cells (text or nodes); `empty` says what would fill it.
export function table(head, rows, empty, rowAttrs = () => ({})) {
  if (!rows.length) return el("p", { class: "empty" }, empty);
  const body = rows.map((cells, i) => el("tr", rowAttrs(i),
    cells.map((c) => el("td", {}, c === null || c === undefined ? "" : c))));
  return el("div", { class: "scroll" },
            el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
               el("tbody", {}, body)));
}

// A definition list; `hidden` works on it as on any element (style.css).
export function facts(pairs) {
  return el("dl", { class: "facts" }, pairs.flatMap(([k, v]) => [el("dt", {}, k),
    el("dd", {}, v === null || v === undefined ? "—" : v)]));
}

export const section = (title, ...body) => el("section", {}, el("h2", {}, title), ...body);
export const time = (iso) => (iso ? el("time", { datetime: iso, title: iso },
                                        iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "")) : "");
