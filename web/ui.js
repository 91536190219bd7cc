// Parts the views share: filter forms and cursor pages kept in the address, the
// preview-then-confirm actions, and the result line at the top that an action leaves.
import { $, el, getToken, problemText } from "./core.js";

// The route's address with other parameters: a filter or a page is a link like any other.
export function href(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") q.set(k, v);
  const s = q.toString();
  return "#" + path + (s ? "?" + s : "");
}

// Filter fields as a form whose submit goes to the same list with the filters in the address
// (and from its first page). A field: {name, label, options?: [[value, text]], size?, numeric?}.
export function filterForm(ctx, fields) {
  const inputs = fields.map((f) => {
    const value = ctx.params.get(f.name) || "";
    const input = f.options
      ? el("select", { name: f.name }, f.options.map(([v, t]) => el("option", { value: v }, t)))
      : el("input", { name: f.name, size: f.size || 10, maxlength: f.max || 64,
                      inputmode: f.numeric ? "numeric" : null,
                      pattern: f.numeric ? "[1-9][0-9]{0,18}" : f.pattern || null });
    input.value = value;
    return el("label", {}, f.label + " ", input);
  });
  const form = el("form", { class: "filters", autocomplete: "off" }, inputs,
                  el("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!form.reportValidity()) return;
    const params = {};
    for (const f of fields) params[f.name] = form.elements[f.name].value.trim();
    location.hash = href(ctx.path, params);
  });
  return form;
}

// The pages of a list: the API's cursor goes into the address as `after`.
export function pager(ctx, nextAfter, count, noun) {
  const params = Object.fromEntries(ctx.params);
  const here = ctx.params.get("after");
  return el("p", { class: "pager" },
    `${count} ${noun}${here ? " on this page" : ""}`,
    here ? el("a", { href: href(ctx.path, { ...params, after: null }), class: "first" }, "First page") : null,
    nextAfter !== null && nextAfter !== undefined
      ? el("a", { href: href(ctx.path, { ...params, after: nextAfter }), class: "next" }, "Next page →")
      : null);
}

// No route tells the console its token's role, so a 403 on an action marks the token that got
// it: no action is offered again while that token is in use.
let refusedToken;
export const tokenRefused = () => refusedToken !== undefined && refusedToken === getToken();
export function noteRefusal(r) {
  if (r.status === 403) refusedToken = getToken();
}

// The result of the last action, at the top of the view (the view is drawn again under it).
export function showResult(text, ok) {
  const out = $("result");
  out.textContent = text;
  out.className = ok ? "ok" : "bad";
  out.hidden = false;
  out.scrollIntoView({ block: "nearest" });
}

// An action: a button, then a preview of what it touches (what the server says now), then a
// confirmation; nothing is sent before it. `preview()` gives {what, lines, confirm} or
// {refuse: text}; `run()` gives {ok, text}; `done()` draws the view again.
export function action({ label, name, preview, run, done }) {
  if (tokenRefused()) return el("span", { class: "refused" }, "");
  const box = el("div", { class: "preview", hidden: true });
  const start = el("button", { type: "button", class: `start ${name}-start` }, label);
  start.addEventListener("click", async () => {
    const p = await preview();
    if (p.refuse) return showResult(p.refuse, false);
    const confirm = el("button", { type: "button", class: `danger ${name}-confirm` }, p.confirm);
    const back = el("button", { type: "button", class: "back" }, "Not now");
    box.replaceChildren(el("p", { class: "what" }, p.what),
                        el("ul", {}, (p.lines || []).map((t) => el("li", {}, t))), confirm, back);
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" });
    back.addEventListener("click", () => { box.hidden = true; });
    confirm.addEventListener("click", async () => {
      box.hidden = true;
      $("result").hidden = true;
      const r = await run();
      await done();
      showResult(r.text, r.ok);
    });
  });
  return el("span", { class: "action" }, start, box);
}

// An action's failure as a line of the result.
export const failed = (what, r) => ({ ok: false, text: `${what}: ${problemText(r)}` });
