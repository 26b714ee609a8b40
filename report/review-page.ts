// The reviewers' page, `GET /review` (docs/reviews.md): one constant, self-contained HTML page. It holds no
// data and no secret: the reviewer pastes the reviewer token, the page keeps it for the tab only
// (sessionStorage) and calls the review API on its own origin — GET /reviews to list (and who you are, your
// approval limit), POST /claims/{id}/review/take to take a review, POST /claims/{id}/review to approve (optionally less), deny (with a note) or resubmit a corrected claim, and a failed
// refund's review (origin REFUND_FAILED) to retry it or close it unpaid (with a note) — and shows the API's errors
// as they come (a 409 when the balance is gone or another reviewer decided first, a 400 naming the field). Every
// value from the API is put into the page as text (textContent), never as HTML.
import { cspFor } from "./csp.ts";
import { CURRENCY_CODES, minorUnitsOf } from "../core/integrity/currency.ts";

/** The page's stylesheet: the report's dark palette. */
const REVIEW_PAGE_CSS = `
:root { color-scheme: dark; --bg: #0f1419; --panel: #171d25; --panel-2: #1e2631; --line: #2c3642; --text: #e6edf3; --muted: #9fb0c0; --link: #7cc4ff;
  --ok: #3fb950; --warn: #e3b341; --bad: #ff7b72; --review: #d2a8ff; --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 0; } h3 { font-size: 13px; color: var(--muted); text-transform: uppercase; letter-spacing: .6px; margin: 10px 0 4px; }
p { margin: 6px 0; } .muted { color: var(--muted); } .mono, code { font-family: var(--mono); font-size: 13px; }
.bar, .card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; margin: 12px 0; }
.bar { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; }
input, textarea, select, button { font: inherit; color: var(--text); background: var(--panel-2); border: 1px solid var(--line); border-radius: 6px; padding: 5px 8px; }
textarea { width: 100%; min-height: 54px; } input[type=number] { width: 120px; }
button { cursor: pointer; background: #21405f; border-color: var(--link); }
button.approve, button.retry { background: #12361d; border-color: var(--ok); } button.deny, button.close { background: #3d1518; border-color: var(--bad); } button.resubmit { background: #2e1f4a; border-color: var(--review); }
button:disabled { opacity: .5; cursor: wait; }
label { color: var(--muted); font-size: 13px; }
[hidden] { display: none !important; }
.badge { display: inline-block; padding: 0 9px; border-radius: 999px; font-size: 12px; font-weight: 700; border: 1px solid; }
.badge.ESCALATE { color: var(--warn); border-color: #bb8009; } .badge.NEEDS_REVIEW { color: var(--review); border-color: #8957e5; } .badge.REFUND_FAILED { color: var(--bad); border-color: #b62324; }
.head { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 14px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; } dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
blockquote { margin: 4px 0; padding: 6px 10px; border-left: 3px solid var(--link); background: var(--panel-2); white-space: pre-wrap; overflow-wrap: anywhere; }
ul.checks { list-style: none; padding: 0; margin: 0; font-family: var(--mono); font-size: 13px; }
.pass { color: var(--ok); } .fail { color: var(--bad); } .warn { color: var(--warn); }
.actions { display: flex; flex-wrap: wrap; gap: 10px; align-items: end; margin-top: 10px; }
.actions > div { display: flex; flex-direction: column; gap: 2px; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0 0; padding: 8px 10px; display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 6px 10px; }
fieldset legend { color: var(--muted); font-size: 13px; }
.msg { min-height: 1.5em; font-weight: 600; } .msg.ok { color: var(--ok); } .msg.error { color: var(--bad); }
.card.decided { border-color: var(--ok); } .card.overdue { border-color: var(--bad); }
.holder { color: var(--review); font-weight: 600; } .due.bad { color: var(--bad); font-weight: 600; }
details.passed-checks summary { cursor: pointer; color: var(--muted); font-size: 13px; }
`;

/** The page's script (a constant; the data it shows comes from the API at run time and goes in as text). */
const REVIEW_PAGE_SCRIPT = `(function () {
"use strict";
var KEY = "claims-reviewer-token";
var DECIMALS = ${JSON.stringify(Object.fromEntries(CURRENCY_CODES.filter((c) => minorUnitsOf(c) !== 2).map((c) => [c, minorUnitsOf(c)])))};
var $ = function (id) { return document.getElementById(id); };
var cursor = null, ids = 0, me = { id: "" };
function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined && text !== null) e.textContent = String(text); return e; }
function add(parent, children) { children.forEach(function (c) { if (c) parent.appendChild(c); }); return parent; }
function token() { return sessionStorage.getItem(KEY) || ""; }
function layer(n) { return n % 1 ? Math.floor(n) + "b" : String(n); }
// An amount in a currency with that currency's decimals (the review's currency: its amount's, else its order's; EUR).
function eur(v, c) { c = c || "EUR"; return typeof v === "number" ? v.toFixed(Object.prototype.hasOwnProperty.call(DECIMALS, c) ? DECIMALS[c] : 2) + " " + c : "—"; }
// An amount as the listing gives it: { value, currency } (exact, in its currency), else the EUR-named number beside it.
function amt(a, v, c) { return a && typeof a.value === "string" ? a.value + " " + a.currency : eur(v, c); }
function currencyOf(item) { return (item.amount && item.amount.currency) || (item.approved_amount && item.approved_amount.currency) || (item.order && item.order.currency) || (item.claim && item.claim.currency && item.claim.currency.toUpperCase()) || "EUR"; }
// The amounts of an item as numbers of its currency: \`amount_eur\` is kept only in EUR, \`amount\` is always given.
function normalise(item) {
  item.currency = currencyOf(item);
  if (item.amount_eur === undefined && item.amount) item.amount_eur = Number(item.amount.value);
  if (item.approved_amount_eur === undefined && item.approved_amount) item.approved_amount_eur = Number(item.approved_amount.value);
  return item;
}
function api(method, path, body) {
  var headers = { authorization: "Bearer " + token() };
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit", cache: "no-store" })
    .then(function (res) { return res.text().then(function (text) { var json = null; try { json = JSON.parse(text); } catch (e) { json = null; } return { status: res.status, body: json, text: text }; }); },
      function (err) { return { status: 0, body: null, text: "the API could not be reached (" + err.message + ")" }; });
}
function errorText(r) {
  var e = r.body && r.body.error;
  if (!e) return (r.status ? r.status + " " : "") + String(r.text || "no answer").slice(0, 300);
  var issues = Array.isArray(e.issues) ? " (" + e.issues.map(function (i) { return i.path + ": " + i.message; }).join("; ") + ")" : "";
  return r.status + " " + e.code + ": " + e.message + issues;
}
function say(node, text, kind) { node.textContent = text; node.className = "msg" + (kind ? " " + kind : ""); }
function showSignedIn() {
  var on = token() !== "";
  $("login").hidden = on; $("session").hidden = !on; $("list-bar").hidden = !on;
  if (!on) { $("list").textContent = ""; $("more").hidden = true; }
}
function kv(rows) {
  var dl = el("dl");
  rows.forEach(function (r) { if (r[1] === undefined || r[1] === null || r[1] === "") return; add(dl, [el("dt", "", r[0]), el("dd", r[2] || "", r[1])]); });
  return dl;
}
function claimSection(item) {
  var s = add(el("section"), [el("h3", "", "Claim")]);
  var c = item.claim;
  if (c) s.appendChild(kv([["Order", c.order_id, "mono"], ["Amount", eur(c.amount_eur, item.currency)], ["Category", c.category], ["Reason", c.reason], ["Purchased", c.purchase_date], ["Customer", c.customer_id, "mono"], ["Currency", c.currency], ["Asks for", outcomeAsked(c.outcome), "outcome"]]));
  if (typeof item.claim_text === "string") add(s, [el("p", "muted", "The customer's words (free text):"), el("blockquote", "", item.claim_text)]);
  if (!c && typeof item.claim_text !== "string") s.appendChild(el("p", "muted", "The claim could not be read."));
  var p = item.proposal;
  if (p && typeof p === "object") add(s, [el("h3", "", "Proposal"), kv([["Action", p.action], ["Order", p.order_id, "mono"], ["Amount", eur(p.amount_eur, item.currency)], ["Confidence", p.confidence], ["Reason", p.reason]])]);
  return s;
}
// What a claim asks besides a refund (docs/returns.md#outcomes); nothing when it asks nothing (a refund).
function outcomeAsked(o) { return o === "STORE_CREDIT" ? "store credit" : o === "EXCHANGE" ? "an exchange (a replacement)" : o === "REFUND" ? "a refund" : undefined; }
// The order's lines, each with its title when the shop gives one: what a free-text claim's items were matched to.
function linesList(o) {
  if (!Array.isArray(o.lines) || o.lines.length === 0) return null;
  var ul = el("ul", "order-lines");
  o.lines.forEach(function (l) { var li = el("li", "", (l.title || "(no title)") + (l.sku ? " · " + l.sku : "") + " · " + l.category + " · " + l.quantity + " × · " + amt(l.amount)); li.setAttribute("data-line", l.line_id); ul.appendChild(li); });
  return add(el("div"), [el("p", "", "Lines:"), ul]);
}
function factsSection(item) {
  var s = add(el("section", "facts"), [el("h3", "", "The order")]);
  var o = item.order;
  if (o) s.appendChild(kv([["Order", o.order_id, "mono"], ["Amount", amt(o.amount, o.amount_eur, item.currency)], ["Currency", o.currency], ["Purchased", o.purchase_date], ["Category", o.category], ["Customer", o.customer_id, "mono"]]));
  if (o) { var lines = linesList(o); if (lines) s.appendChild(lines); }
  else if (item.order_unread) s.appendChild(el("p", "order-unread warn", "The shop's order could not be read (" + item.order_unread.code + "): " + item.order_unread.reason));
  else s.appendChild(el("p", "muted", "No order to show."));
  var r = item.refunded || {};
  s.appendChild(kv([["Refunded automatically", amt(r.automatic, r.automatic_eur, item.currency)], ["Refunded on approval", amt(r.approved, r.approved_eur, item.currency)]].concat(item.customer_window ? [["Customer's window", item.customer_window.refunds + " refunds, " + amt(item.customer_window.refunded, item.customer_window.refunded_eur, item.currency)]] : [])));
  var others = Array.isArray(item.other_claims) ? item.other_claims : [];
  if (others.length) { var ul = el("ul", "checks other-claims"); others.forEach(function (c) { ul.appendChild(el("li", "", c.claim_id + " " + c.status + (c.verdict ? " " + c.verdict : "") + (c.reason_code ? " " + c.reason_code : "") + " · " + amt(c.amount, c.amount_eur, item.currency))); }); add(s, [el("p", "", "Other claims on the order:"), ul]); }
  var a = Array.isArray(item.approvals) ? item.approvals : [];
  if (item.awaiting === "SECOND_APPROVAL" && a.length) s.appendChild(el("p", "awaiting", "First approval by " + a[0].reviewer + " for " + amt(a[0].amount, a[0].amount_eur, item.currency) + ": awaiting a different reviewer's."));
  return s;
}
function checkLine(c) {
  var li = el("li", c.passed ? "check passed" : "check failed"); li.setAttribute("data-layer", String(c.layer));
  add(li, [el("span", c.passed ? "pass" : "fail", c.passed ? "✓ " : "✗ "), document.createTextNode(layer(c.layer) + " " + c.name + (c.reason_code ? " → " + c.reason_code : ""))]);
  return li;
}
function checksSection(item) {
  var s = add(el("section", "checks-section"), [el("h3", "", "Kernel checks")]);
  if (!Array.isArray(item.checks) || item.checks.length === 0) { s.appendChild(el("p", "muted", item.origin === "NEEDS_REVIEW" ? "The kernel did not decide: the claim went to review before it." : "No checks recorded.")); return s; }
  // In the order they ran; the failing ones first, the rest folded.
  var failing = item.checks.filter(function (c) { return !c.passed; }), passing = item.checks.filter(function (c) { return c.passed; });
  s.appendChild(el("p", "", (item.verdict || "") + " at layer " + layer(item.layer) + (item.verdict_id ? " · verdict " + item.verdict_id : "")));
  if (failing.length) { var ul = el("ul", "checks failing"); failing.forEach(function (c) { ul.appendChild(checkLine(c)); }); s.appendChild(ul); }
  if (passing.length) {
    var fold = el("details", "passed-checks"); var ok = el("ul", "checks"); passing.forEach(function (c) { ok.appendChild(checkLine(c)); });
    add(fold, [el("summary", "", passing.length + " check" + (passing.length === 1 ? "" : "s") + " passed"), ok]); s.appendChild(fold);
  }
  return s;
}
function refundSection(item) {
  var s = add(el("section", "refund"), [el("h3", "", "The refund the payment provider refused")]);
  s.appendChild(kv([["Execution", item.execution_id, "mono"], ["Amount", eur(item.amount_eur, item.currency)],
    ["Outcome", item.outcome === "STORE_CREDIT" ? "store credit" + (item.credit ? " with a " + item.credit.bonus_pct + "% bonus (" + item.credit.bonus.value + " " + item.credit.bonus.currency + ") on top" : "") : "refund (cash)", "outcome"], ["Order", item.order_id, "mono"], ["Provider", item.provider],
    ["Provider ref", item.provider_ref || "none (the provider created no refund)", "mono provider-ref"], ["Failure reason", item.failure_reason || "none given", "failure-reason"]]));
  s.appendChild(el("p", "muted", "Retry pays again under a new execution id (a new call to the provider; the claim is still paid at most once). Close unpaid releases the order's reservation (the money counts as not refunded); Close: paid out of band keeps it (counted as refunded, e.g. a bank transfer). Either binds the order like a denial: a later claim on it goes to a person."));
  return s;
}
function field(name, label, value, type) {
  var d = el("div"); var l = el("label", "", label); var i = el("input"); i.name = name; i.type = type || "text";
  if (type === "number") i.step = "0.01";
  if (value !== undefined && value !== null) i.value = String(value);
  l.htmlFor = i.id = "field-" + (++ids);
  return add(d, [l, i]);
}
function decide(item, card, msg, body, buttons) {
  buttons.forEach(function (b) { b.disabled = true; });
  say(msg, "Sending…");
  return api("POST", "claims/" + encodeURIComponent(item.claim_id) + "/review", body).then(function (r) {
    buttons.forEach(function (b) { b.disabled = false; });
    if (r.status === 401 || r.status === 403) { say(msg, errorText(r) + " — check the reviewer token.", "error"); return; }
    if (r.status !== 200) { say(msg, errorText(r), "error"); return; }
    var v = r.body.review || {};
    if (v.awaiting === "SECOND_APPROVAL") { say(msg, "First approval recorded (" + ((v.approvals || [])[0] ? amt(v.approvals[0].amount, v.approvals[0].amount_eur, item.currency) : "—") + "): a different reviewer must approve too.", "ok"); card.setAttribute("data-awaiting", "SECOND_APPROVAL"); return; }
    var text = v.status + (v.reviewer ? " by " + v.reviewer : "");
    if (v.status === "APPROVED") text += ": " + eur(v.amount ? Number(v.amount.value) : v.amount_eur, item.currency) + " refunded" + (r.body.execution_id ? " (" + r.body.execution_id + ")" : "");
    if (v.status === "RESUBMITTED") text += ": corrected claim " + r.body.resubmitted_claim_id;
    if (v.status === "RETRIED") text += ": paid again as " + r.body.execution_id;
    if (v.status === "CLOSED") text += v.paid_out_of_band ? ": closed as paid out of band, counted as refunded" : ": closed unpaid, the order's reservation released";
    say(msg, text, "ok");
    card.classList.add("decided"); card.setAttribute("data-status", v.status);
    var form = card.querySelector("form"); if (form) form.remove();
    var takeButton = card.querySelector('[data-action="take"]'); if (takeButton) takeButton.remove();
    var holder = card.querySelector(".holder"); if (holder) holder.textContent = "";
  });
}
function holderText(item) {
  if (!item.taken_by) return "";
  return item.taken_by === me.id ? "taken by you until " + item.taken_until : "taken by " + item.taken_by + " until " + item.taken_until;
}
function take(item, card, msg, button, holder) {
  button.disabled = true; say(msg, "Taking…");
  return api("POST", "claims/" + encodeURIComponent(item.claim_id) + "/review/take").then(function (r) {
    button.disabled = false;
    if (r.status !== 200) { say(msg, errorText(r), "error"); return; }
    item.taken_by = r.body.taken_by; item.taken_until = r.body.taken_until;
    holder.textContent = holderText(item); card.setAttribute("data-taken-by", item.taken_by);
    say(msg, "Yours until " + r.body.taken_until + ": nobody else can decide it meanwhile.", "ok");
  });
}
function refundActions(item, card, msg) {
  var form = el("form"); form.noValidate = true;
  var note = el("textarea"); note.name = "note"; note.placeholder = "Note (required to close; kept in the audit)";
  var buttons = [];
  var retry = el("button", "retry", "Retry the refund"); retry.type = "button"; retry.setAttribute("data-action", "retry");
  retry.addEventListener("click", function () {
    var body = { decision: "RETRY", review_id: item.review_id };
    if (note.value.trim()) body.note = note.value.trim();
    decide(item, card, msg, body, buttons);
  });
  var close = el("button", "close", "Close unpaid"); close.type = "button"; close.setAttribute("data-action", "close");
  close.addEventListener("click", function () {
    if (!note.value.trim()) { say(msg, "Write a note saying why the refund is closed unpaid (for example: refunded by bank transfer).", "error"); note.focus(); return; }
    decide(item, card, msg, { decision: "CLOSE", paid_out_of_band: false, note: note.value.trim(), review_id: item.review_id }, buttons);
  });
  var paid = el("button", "close", "Close: paid out of band"); paid.type = "button"; paid.setAttribute("data-action", "close-paid");
  paid.addEventListener("click", function () {
    if (!note.value.trim()) { say(msg, "Write a note saying how the refund was paid (for example: refunded by bank transfer).", "error"); note.focus(); return; }
    decide(item, card, msg, { decision: "CLOSE", paid_out_of_band: true, note: note.value.trim(), review_id: item.review_id }, buttons);
  });
  // No Retry where a retry cannot succeed (the order names no payment to refund): the reason instead.
  var blocked = item.retry && item.retry.possible === false;
  buttons.push(close, paid); if (!blocked) buttons.push(retry);
  return add(form, [add(el("div"), [el("label", "", "Note"), note]), add(el("div", "actions"), [blocked ? el("p", "retry-blocked warn", "Retry cannot succeed: " + item.retry.reason) : retry, close, paid])]);
}
function actions(item, card, msg) {
  var form = el("form"); form.noValidate = true;
  var note = el("textarea"); note.name = "note"; note.placeholder = "Note (required to deny; kept in the audit)";
  var noteBox = add(el("div"), [el("label", "", "Note"), note]);
  var row = el("div", "actions");
  var buttons = [];
  if (item.origin === "ESCALATE") {
    var amount = field("amount", "Approve amount (" + item.currency + ", at most " + eur(item.amount_eur, item.currency) + ")", item.amount_eur, "number");
    var approve = el("button", "approve", "Approve"); approve.type = "button"; approve.setAttribute("data-action", "approve");
    approve.addEventListener("click", function () {
      var raw = amount.querySelector("input").value.trim();
      var body = { decision: "APPROVE" };
      if (raw !== "") { var n = Number(raw); if (!isFinite(n)) { say(msg, "The amount is not a number.", "error"); return; } if (n !== item.amount_eur) body.amount_eur = n; }
      if (body.amount_eur !== undefined && body.amount_eur < item.amount_eur && !note.value.trim()) { say(msg, "Write a note saying why less than proposed is approved.", "error"); return; }
      if (note.value.trim()) body.note = note.value.trim();
      decide(item, card, msg, body, buttons);
    });
    add(row, [amount, approve]); buttons.push(approve);
  }
  var deny = el("button", "deny", "Deny"); deny.type = "button"; deny.setAttribute("data-action", "deny");
  deny.addEventListener("click", function () {
    if (!note.value.trim()) { say(msg, "Write a note saying why the claim is denied.", "error"); note.focus(); return; }
    decide(item, card, msg, { decision: "DENY", note: note.value.trim() }, buttons);
  });
  row.appendChild(deny); buttons.push(deny);
  add(form, [noteBox, row]);
  if (item.origin === "NEEDS_REVIEW") {
    var c = item.claim || {};
    var fs = add(el("fieldset"), [el("legend", "", "Corrected claim (resubmitted through the normal pipeline)"),
      field("order_id", "Order id", c.order_id), field("amount_eur", "Amount (" + item.currency + ")", c.amount_eur, "number"), field("category", "Category", c.category),
      field("reason", "Reason", c.reason), field("purchase_date", "Purchase date (optional)", c.purchase_date), field("customer_id", "Customer id (optional)", c.customer_id)]);
    var json = el("textarea"); json.name = "claim_json"; json.placeholder = "…or paste the corrected claim as JSON (used instead of the fields when not empty)";
    var resubmit = el("button", "resubmit", "Resubmit corrected claim"); resubmit.type = "button"; resubmit.setAttribute("data-action", "resubmit");
    resubmit.addEventListener("click", function () {
      var claim;
      if (json.value.trim()) {
        try { claim = JSON.parse(json.value); } catch (e) { say(msg, "The JSON is not valid: " + e.message, "error"); return; }
      } else {
        claim = {};
        fs.querySelectorAll("input").forEach(function (i) { var v = i.value.trim(); if (v !== "") claim[i.name] = i.name === "amount_eur" ? Number(v) : v; });
      }
      var body = { decision: "RESUBMIT", claim: claim };
      if (note.value.trim()) body.note = note.value.trim();
      decide(item, card, msg, body, buttons);
    });
    add(form, [fs, json, add(el("div", "actions"), [resubmit])]); buttons.push(resubmit);
  }
  return form;
}
function card(item) {
  var c = el("article", "card");
  c.setAttribute("data-claim-id", item.claim_id); c.setAttribute("data-review-id", item.review_id); c.setAttribute("data-origin", item.origin); c.setAttribute("data-status", item.status);
  var refund = item.origin === "REFUND_FAILED";
  if (refund) c.setAttribute("data-execution-id", item.execution_id);
  var overdue = item.status === "PENDING" && item.due_at && Date.parse(item.due_at) < Date.now();
  if (overdue) c.classList.add("overdue");
  if (item.taken_by) c.setAttribute("data-taken-by", item.taken_by);
  var holder = el("span", "holder", holderText(item));
  var head = add(el("div", "head"), [el("span", "badge " + item.origin, String(item.origin).replace("_", " ")), el("h2", "mono", item.reason_code), el("span", "mono", item.claim_id),
    el("span", "muted", "requested " + item.requested_at), item.due_at ? el("span", overdue ? "due bad" : "due muted", (overdue ? "overdue since " : "due ") + item.due_at) : null,
    item.amount_eur !== undefined ? el("strong", "", eur(item.amount_eur, item.currency)) : null, item.order_id ? el("span", "mono muted", item.order_id) : null, holder]);
  var msg = el("p", "msg"); msg.setAttribute("role", "status");
  if (item.status === "PENDING") {
    var takeButton = el("button", "take", item.taken_by === me.id ? "Keep it" : "Take"); takeButton.type = "button"; takeButton.setAttribute("data-action", "take");
    takeButton.addEventListener("click", function () { take(item, c, msg, takeButton, holder); });
    head.appendChild(takeButton);
  }
  add(c, [head, item.label ? el("p", "muted", item.label) : null, el("p", "reason", item.reason)]);
  if (refund) c.appendChild(refundSection(item));
  else add(c, [add(el("div", "cols"), [claimSection(item), checksSection(item)]), factsSection(item)]);
  if (item.status === "PENDING") c.appendChild(refund ? refundActions(item, c, msg) : actions(item, c, msg));
  else c.appendChild(el("p", "muted decided", item.status + (item.reviewer ? " by " + item.reviewer : "") + (item.approved_amount_eur !== undefined ? " for " + eur(item.approved_amount_eur, item.currency) : "") + ((item.approvals || []).length > 1 ? " (approvals: " + item.approvals.map(function (x) { return x.reviewer; }).join(", ") + ")" : "") + (item.decided_at ? " at " + item.decided_at : "") + (item.note ? " — " + item.note : "")));
  c.appendChild(msg);
  return c;
}
function load(more) {
  var status = $("status").value;
  var path = "reviews?status=" + encodeURIComponent(status) + "&limit=25" + (more && cursor ? "&cursor=" + encodeURIComponent(cursor) : "");
  say($("list-msg"), "Loading…");
  return api("GET", path).then(function (r) {
    if (r.status === 401 || r.status === 403) { sessionStorage.removeItem(KEY); showSignedIn(); say($("login-msg"), errorText(r) + " — the reviewer token was refused.", "error"); return; }
    if (r.status !== 200) { say($("list-msg"), errorText(r), "error"); return; }
    if (r.body.reviewer) {
      me = r.body.reviewer;
      $("whoami").textContent = "Signed in as " + me.id + (me.name && me.name !== me.id ? " (" + me.name + ")" : "") + " · " +
        (typeof me.max_approval_eur === "number" ? "you approve up to " + eur(me.max_approval_eur) + " alone" : "no approval limit of your own");
    }
    if (!more) $("list").textContent = "";
    r.body.items.forEach(function (item) { $("list").appendChild(card(normalise(item))); });
    cursor = r.body.next_cursor || null;
    $("more").hidden = !cursor;
    var n = $("list").children.length;
    say($("list-msg"), n === 0 ? "No " + status.toLowerCase() + " reviews." : n + " " + status.toLowerCase() + " review" + (n === 1 ? "" : "s") + " shown.");
  });
}
$("login").addEventListener("submit", function (ev) {
  ev.preventDefault();
  var t = $("token").value.trim();
  if (!t) { say($("login-msg"), "Paste the reviewer token (CLAIMS_REVIEWER_TOKEN).", "error"); return; }
  sessionStorage.setItem(KEY, t); $("token").value = ""; say($("login-msg"), ""); showSignedIn(); load(false);
});
$("logout").addEventListener("click", function () { sessionStorage.removeItem(KEY); showSignedIn(); });
$("refresh").addEventListener("click", function () { load(false); });
$("status").addEventListener("change", function () { load(false); });
$("more").addEventListener("click", function () { load(true); });
showSignedIn();
if (token()) load(false);
})();`;

/** The policy of the review page: its script and style by hash, API calls to its own origin only. */
export const REVIEW_PAGE_CSP = cspFor({ script: REVIEW_PAGE_SCRIPT, style: REVIEW_PAGE_CSS, connect: true });

/** The review page: constant HTML with its stylesheet and script inline (no data, no secret). */
export function renderReviewPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark">
<meta name="referrer" content="no-referrer">
<title>Claims Crew — reviews</title>
<style>${REVIEW_PAGE_CSS}</style>
</head>
<body>
<main>
<h1>Claims Crew — reviews</h1>
<p class="muted">Escalated claims, claims that need a person, and refunds the payment provider refused, the soonest due first. Take one, then approve (optionally a lower amount), deny with a note, or resubmit a corrected claim; retry a failed refund, or close it with a note. The reviewer token stays in this tab only.</p>
<form id="login" class="bar" autocomplete="off">
<label for="token">Reviewer token</label><input id="token" type="password" autocomplete="off" spellcheck="false" size="40">
<button type="submit">Use token</button><span id="login-msg" class="msg" role="status"></span>
</form>
<div id="session" class="bar" hidden>
<strong id="whoami"></strong><span class="muted">Decisions are recorded under the reviewer this token belongs to. Take a review before you work it: nobody else can decide it for 15 minutes.</span>
<button type="button" id="logout">Forget token</button>
</div>
<div id="list-bar" class="bar" hidden>
<label for="status">Show</label><select id="status"><option value="PENDING">pending</option><option value="APPROVED">approved</option><option value="DENIED">denied</option><option value="RESUBMITTED">resubmitted</option></select>
<button type="button" id="refresh">Refresh</button><span id="list-msg" class="msg" role="status"></span>
</div>
<div id="list"></div>
<p><button type="button" id="more" hidden>Load more</button></p>
</main>
<script>${REVIEW_PAGE_SCRIPT}</script>
</body>
</html>
`;
}
