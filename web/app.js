// The operator console: a sidebar of sections, a hash route for every list and every entity
// (`#/orders/ID`, `#/runs/ID`, `#/items/ID`, `#/scopes/NAME`, `#/warehouses/ID`, …) whose
// filters and cursor are in the address, one error banner at the top, and live mode: one poll
// loop that draws the visible view again, slower while the server is busy or away. The views
// are modules of their own (view-*.js). Plain DOM code, no dependencies.
import { $, clearBanner, lastStatus, setToken, takeTokenFromAddress } from "./core.js";
import * as overview from "./view-overview.js";
import * as orders from "./view-orders.js";
import * as production from "./view-production.js";
import * as numbers from "./view-numbers.js";
import * as stock from "./view-stock.js";
import * as handoff from "./view-handoff.js";

// [path pattern, view, sidebar entry]
const routes = [
  [/^\/$/, overview.overview, "overview"],
  [/^\/orders$/, orders.orderList, "orders"],
  [/^\/orders\/([^/]+)$/, orders.orderPage, "orders"],
  [/^\/runs$/, production.runList, "runs"],
  [/^\/runs\/([^/]+)$/, production.runPage, "runs"],
  [/^\/items$/, production.itemList, "items"],
  [/^\/items\/([^/]+)$/, production.itemPage, "items"],
  [/^\/claims$/, production.claimList, "claims"],
  [/^\/exhausted$/, production.exhaustedList, "exhausted"],
  [/^\/production-orders$/, production.productionOrderList, "production-orders"],
  [/^\/scopes$/, numbers.scopeList, "scopes"],
  [/^\/scopes\/([^/]+)$/, numbers.scopePage, "scopes"],
  [/^\/gaps$/, numbers.gapAudit, "gaps"],
  [/^\/warehouses$/, stock.warehouseList, "warehouses"],
  [/^\/warehouses\/([^/]+)$/, stock.warehousePage, "warehouses"],
  [/^\/ledger$/, stock.ledger, "ledger"],
  [/^\/endpoints$/, handoff.endpointList, "endpoints"],
  [/^\/endpoints\/([^/]+)$/, handoff.endpointPage, "endpoints"],
  [/^\/consumers$/, handoff.consumerList, "consumers"],
  [/^\/events$/, handoff.eventList, "events"],
  [/^\/audit$/, overview.audit, "audit"],
];

function parseAddress() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const q = hash.indexOf("?");
  const path = (q < 0 ? hash : hash.slice(0, q)) || "/";
  return { path, params: new URLSearchParams(q < 0 ? "" : hash.slice(q + 1)) };
}

let drawing = 0; // the newest draw; an older one that ends later is dropped

// Draws the view the address names. `fresh`: a navigation (the banner, the last result and the
// scroll position start anew); otherwise a live refresh of the same view.
async function draw(fresh) {
  const { path, params } = parseAddress();
  const found = routes.find(([re]) => re.test(path));
  const view = $("view");
  const mine = ++drawing;
  if (fresh) {
    clearBanner();
    $("result").hidden = true;
    view.dataset.ready = "false";
    for (const a of document.querySelectorAll("#nav a")) {
      a.classList.toggle("current", found !== undefined && a.dataset.nav === found[2]);
      a.toggleAttribute("aria-current", found !== undefined && a.dataset.nav === found[2]);
    }
  } else {
    clearBanner();
  }
  const ctx = { path, params, args: found ? found[0].exec(path).slice(1).map(decodeURIComponent) : [],
                refresh: () => draw(false) };
  const node = found ? await found[1](ctx) : notFound(path);
  if (mine !== drawing) return;
  view.replaceChildren(node);
  view.dataset.route = path;
  view.dataset.ready = "true";
  const h = view.querySelector("h1");
  document.title = `${h ? h.textContent : "OnceOrder"} · OnceOrder console`;
  if (fresh) window.scrollTo(0, 0);
}

function notFound(path) {
  const p = document.createElement("p");
  p.className = "empty";
  p.textContent = `No page at #${path}: pick one on the left.`;
  return p;
}

// Live mode: one loop, one draw at a time, of the visible view only; every 5 s, doubling up
// to a minute (or the server's Retry-After) while it answers busy or cannot be reached, and
// paused while an action's preview is open, a box is ticked or a field is being typed in.
const liveEvery = 5000;
const liveSlowest = 60000;
let liveDelay = liveEvery;
let liveTimer = null;

function busyWithInput() {
  const view = $("view");
  return view.querySelector(".preview:not([hidden])") !== null ||
         view.querySelector("input[type=checkbox]:checked") !== null ||
         (document.activeElement && view.contains(document.activeElement) &&
          /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName));
}

async function liveTick() {
  liveTimer = null;
  if (!$("live").checked) return;
  if (!document.hidden && !busyWithInput()) {
    lastStatus.worst = 200;
    lastStatus.retryAfter = 0;
    await draw(false);
    liveDelay = lastStatus.worst === 200 ? liveEvery
      : Math.min(liveSlowest, Math.max(liveDelay * 2, lastStatus.retryAfter * 1000));
  }
  $("live-state").textContent = liveDelay > liveEvery ? `slowed to ${liveDelay / 1000} s` : "";
  if ($("live").checked && liveTimer === null) liveTimer = setTimeout(liveTick, liveDelay);
}

function setLive() {
  clearTimeout(liveTimer);
  liveTimer = null;
  liveDelay = liveEvery;
  $("live-state").textContent = "";
  if ($("live").checked) liveTimer = setTimeout(liveTick, liveDelay);
}

takeTokenFromAddress();
$("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  setToken($("token").value.trim());
  $("token").value = "";
  draw(true);
});
$("live").addEventListener("change", setLive);
$("refresh").addEventListener("click", () => draw(false));
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && $("live").checked) setLive();
});
window.addEventListener("hashchange", () => {
  takeTokenFromAddress();
  draw(true);
});
draw(true);
