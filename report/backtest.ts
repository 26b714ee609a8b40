// The HTML backtest report: the run report's page, styles and chart look, showing what a candidate policy
// would change — the totals before → after, charts of both, the flips table, and per flipped claim a
// drill-down of which kernel layer decided each way. Pure: the same backtest result gives the same bytes.
import type { BacktestReport, BacktestTotals, DecidedSide, FlipDetail } from "../core/history/backtest/index.ts";
import { paidBeforeReturnPairs } from "../core/history/backtest/returns.ts";
import { EVALUATION_ORDER } from "../core/kernel/kernel.ts";
import { KERNEL_LAYERS } from "../core/kernel/reason-codes.ts";
import type { SafeHtml } from "./html.ts";
import { html, trusted } from "./html.ts";
import { badge, eur, int, layerName } from "./parts.ts";
import { reportPage } from "./render.ts";

/** Options of `renderBacktestReport`. */
export interface BacktestRenderOptions {
  title?: string;
}

const f1 = (v: number): string => String(Math.round(v * 10) / 10);
const anchor = (claimId: string) => `flip-${claimId}`;

/** Horizontal bars of labelled values, before beside after, each pair on one row. */
function pairChart(
  name: string,
  caption: string,
  rows: readonly { label: string; before: number; after: number; cls: string }[],
  format: (v: number) => string,
): SafeHtml {
  const max = Math.max(...rows.flatMap((r) => [r.before, r.after]), 0);
  // Each row: its label on a line of its own, then the before and after bars.
  const x0 = 50;
  const width = 270;
  const rowHeight = 54;
  const height = Math.max(60, 8 + rows.length * rowHeight);
  const bar = (v: number, y: number, cls: string, what: string) => {
    const w = max > 0 ? Math.max(v > 0 ? 2 : 0, (v / max) * width) : 0;
    return html`<rect class="bar-bg" x="${x0}" y="${y}" width="${width}" height="14" rx="3"></rect><rect class="bar ${cls}" x="${x0}" y="${y}" width="${f1(w)}" height="14" rx="3"><title>${what}: ${format(v)}</title></rect><text class="value" x="380" y="${y + 11}" text-anchor="end">${format(v)}</text>`;
  };
  const body = rows.map((r, i) => {
    const y = 4 + i * rowHeight;
    return html`<g data-${name}="${r.label}" data-before="${r.before}" data-after="${r.after}"><text x="0" y="${y + 11}">${r.label}</text><text x="${x0 - 6}" y="${y + 27}" text-anchor="end">before</text>${bar(r.before, y + 16, "PENDING", `${r.label} before`)}<text x="${x0 - 6}" y="${y + 45}" text-anchor="end">after</text>${bar(r.after, y + 34, r.cls, `${r.label} after`)}</g>`;
  });
  return html`<figure class="chart" data-chart="${name}">
<figcaption>${caption}</figcaption>
<svg viewBox="0 0 380 ${height}" role="img" aria-label="${caption}, before and after">
${rows.length === 0 ? html`<text x="0" y="30">None before or after.</text>` : body}
</svg></figure>`;
}

function charts(r: BacktestReport): SafeHtml {
  const { before, after } = r.totals;
  const verdicts = (["ACCEPT", "ESCALATE", "REJECT"] as const).map((v) => ({
    label: v,
    before: r.verdicts.before[v],
    after: r.verdicts.after[v],
    cls: v,
  }));
  const codes = [...new Set([...Object.keys(before.by_reason), ...Object.keys(after.by_reason)])].sort();
  const reviews = codes.map((code) => ({
    label: code,
    before: before.by_reason[code] ?? 0,
    after: after.by_reason[code] ?? 0,
    cls: "ESCALATE",
  }));
  const money = [
    { label: "automatic", before: before.auto_refunded_eur, after: after.auto_refunded_eur, cls: "ACCEPT" },
  ];
  return html`<div class="charts">${pairChart("verdicts", "Verdicts", verdicts, String)}${pairChart("refunded", "Refunded without a person (EUR)", money, (v) => v.toFixed(2))}${pairChart("reviews", "Reviews by reason code", reviews, String)}</div>`;
}

const delta = (n: number, unit = "") => (n === 0 ? "±0" : `${n > 0 ? "+" : "−"}${Math.abs(n)}${unit}`);

/** The candidate file's own shadow policy, said to be left out. */
function shadowNote(r: BacktestReport): SafeHtml | string {
  const shadow = r.policy.ignored_shadow_policy;
  return shadow
    ? html`<p class="muted" data-note="ignored-shadow-policy">The file's <span class="mono">shadow_policy</span> (agent <span class="mono">${shadow.agent_id}</span> v${shadow.version}) is ${shadow.note}.</p>`
    : "";
}

function summary(r: BacktestReport): SafeHtml {
  const { before, after }: { before: BacktestTotals; after: BacktestTotals } = r.totals;
  const money = Math.round((after.auto_refunded_eur - before.auto_refunded_eur) * 100) / 100;
  const c = r.policy.contract;
  return html`<section id="summary" aria-labelledby="summary-h">
<h2 id="summary-h">What the candidate policy changes</h2>
<p class="muted">Agent <span class="mono">${r.policy.agent_id}</span>: up to ${eur(c.max_refund_without_escalation)} without a person, return window ${c.return_window_days} days, categories ${c.allowed_refund_categories.join(", ")}, escalate below confidence ${r.policy.escalate_on_uncertainty}. Histories: ${r.histories.map((h) => `${h.id} (${h.evaluated})`).join(", ")}.</p>
<p data-summary="changes"><strong>What changes:</strong> ${r.policy.changes === undefined ? html`<span class="muted">unknown (no recorded decision says the policy it was taken under)</span>` : r.policy.changes.length === 0 ? "nothing (the candidate is the recorded policy)" : r.policy.changes.map((c, i) => html`${i > 0 ? "; " : ""}<span class="mono">${c.setting}</span> ${c.from} → <strong>${c.to}</strong>`)}</p>
${shadowNote(r)}
<div class="grid">
<div class="card"><div class="muted">Claims re-decided</div><div class="big" data-summary="evaluated">${int(r.evaluated)}</div></div>
<div class="card"><div class="muted">Flips</div><div class="big ${r.flips.length === 0 ? "ok" : "bad"}" data-summary="flips">${int(r.flips.length)}</div></div>
<div class="card"><div class="muted">Refunded without a person</div><div class="big" data-summary="refunded">${eur(before.auto_refunded_eur)} → ${eur(after.auto_refunded_eur)}</div><div class="muted">${delta(money, " EUR")}</div>${
    (after.auto_refunded ?? before.auto_refunded ?? []).length > 0
      ? html`<div class="muted" data-summary="refunded-other">in other currencies, never added: ${[
          ...new Set([...(before.auto_refunded ?? []), ...(after.auto_refunded ?? [])].map((a) => a.currency)),
        ]
          .sort()
          .map(
            (c) =>
              `${before.auto_refunded?.find((a) => a.currency === c)?.value ?? "0"} → ${after.auto_refunded?.find((a) => a.currency === c)?.value ?? "0"} ${c}`,
          )
          .join("; ")}</div>`
      : ""
  }</div>
<div class="card"><div class="muted">Paid before the item was back</div><div class="big" data-summary="paid-before-return">${r.paid_before_return.before.claims} → ${r.paid_before_return.after.claims} claims</div><div class="muted">${paidBeforeReturnPairs(
    r.paid_before_return,
  )
    .map((p) => `${p.before} → ${p.after} ${p.currency}`)
    .join("; ")}</div></div>
<div class="card"><div class="muted">Reviews</div><div class="big" data-summary="reviews">${before.reviews} → ${after.reviews}</div><div class="muted">${delta(after.reviews - before.reviews)}</div></div>
<div class="card"><div class="muted">Not evaluable</div><div class="big" data-summary="not-evaluable">${int(r.not_evaluable.length)}</div></div>
</div>
${outcomesLines(r)}
${charts(r)}
</section>`;
}

/** The candidate's outcomes per currency (docs/backtest.md#outcomes), only where it gives anything but cash. */
function outcomesLines(r: BacktestReport): SafeHtml | string {
  const given = (r.outcomes ?? []).filter((o) => /[1-9]/.test(o.credit_issued.value) || o.exchanges > 0);
  if (given.length === 0) return "";
  return html`<ul data-summary="outcomes">${given.map(
    (o) =>
      html`<li>Under the candidate, in ${o.currency}: ${o.cash_refunded.value} refunded as cash, ${o.credit_issued.value} issued as store credit (its bonus ${o.bonus_cost.value}), ${o.exchanges} exchange${o.exchanges === 1 ? "" : "s"}</li>`,
  )}</ul>`;
}

function flipsTable(r: BacktestReport): SafeHtml {
  if (r.flip_details.length === 0)
    return html`<section id="flips"><h2>Flips</h2><p class="muted">No recorded decision changes under this policy.</p></section>`;
  const rows = r.flip_details.map(
    (f) => html`<tr data-flip="${f.claim_id}">
<td class="mono"><a href="#${anchor(f.claim_id)}">${f.claim_id}</a></td><td class="mono">${f.order_id ?? "—"}</td><td class="num">${f.amount_eur === null ? "—" : f.amount_eur.toFixed(2)}</td>
<td>${badge(f.from.verdict)} <span class="mono">${f.from.reason_code}</span></td><td>→</td><td>${badge(f.to.verdict)} <span class="mono">${f.to.reason_code}</span></td><td class="mono">${f.history}</td></tr>`,
  );
  return html`<section id="flips" aria-labelledby="flips-h"><h2 id="flips-h">Flips (${r.flip_details.length})</h2>
<div class="table-wrap"><table><thead><tr><th>Claim</th><th>Order</th><th class="num">EUR</th><th>Recorded</th><th></th><th>Candidate</th><th>History</th></tr></thead>
<tbody>${rows}</tbody></table></div></section>`;
}

/** The kernel layers in the order they run, with each one's checks on this side and the deciding layer marked. */
function layers(side: DecidedSide): SafeHtml {
  const items = EVALUATION_ORDER.map((n) => {
    const checks = side.checks.filter((c) => c.layer === n);
    const deciding = n === side.layer;
    const state =
      n === 12
        ? deciding
          ? "pass"
          : "skip"
        : checks.length === 0
          ? "skip"
          : checks.some((c) => !c.passed)
            ? "fail"
            : "pass";
    const mark = state === "pass" ? "✓" : state === "fail" ? "✗" : "·";
    return html`<li class="${deciding ? "deciding" : ""}${state === "skip" && !deciding ? " skipped" : ""}" data-layer="${n}" data-state="${state}"${deciding ? trusted(' data-deciding="true"') : ""}><span class="${state}">${mark}</span> <strong>${n === 12 ? "all layers passed" : `${layerName(n)} ${KERNEL_LAYERS[n]}`}</strong>${deciding ? html`<span class="tag">deciding layer</span>` : ""}
${checks.length > 0 ? html`<ul class="checks">${checks.map((c) => html`<li><span class="${c.passed ? "pass" : "fail"}">${c.passed ? "✓" : "✗"}</span> ${c.name}${c.reason_code ? html` → ${c.reason_code}` : ""}</li>`)}</ul>` : ""}</li>`;
  });
  return html`<ul class="layers">${items}</ul>`;
}

function drillDown(f: FlipDetail): SafeHtml {
  const side = (title: string, s: DecidedSide, which: string) =>
    html`<div class="card" data-side="${which}"><h3>${title}</h3><p>${badge(s.verdict)} <span class="mono">${s.reason_code}</span> — ${s.reason}</p>${layers(s)}</div>`;
  return html`<details class="cycle" id="${anchor(f.claim_id)}" data-claim-id="${f.claim_id}">
<summary><span class="mono">${f.claim_id}</span> ${badge(f.from.verdict)} → ${badge(f.to.verdict)} <span class="muted">order ${f.order_id ?? "—"}, ${f.amount_eur === null ? "no amount" : eur(f.amount_eur)}, decided ${f.decided_at}</span></summary>
<div class="cycle-body"><div class="grid">${side("Recorded (live policy)", f.from, "before")}${side("Candidate policy", f.to, "after")}</div></div>
</details>`;
}

function people(r: BacktestReport): SafeHtml {
  if (r.human_decisions.length === 0) return html``;
  const rows = r.human_decisions.map(
    (
      p,
    ) => html`<tr data-person="${p.claim_id}" data-sends="${p.candidate_sends_to_person}"><td class="mono">${p.claim_id}</td><td>${p.decision}${p.reviewer ? html` <span class="muted">by ${p.reviewer}</span>` : ""}</td>
<td>${badge(p.recorded.verdict)} <span class="mono">${p.recorded.reason_code}</span></td><td>${badge(p.candidate.verdict)} <span class="mono">${p.candidate.reason_code}</span></td><td>${p.candidate_sends_to_person ? "yes" : html`<strong>no</strong>`}</td><td data-note="${p.claim_id}">${p.reviewer_note ? html`<q>${p.reviewer_note}</q>` : ""}${p.reviewer_note && p.note ? html`<br>` : ""}${p.note ?? ""}</td></tr>`,
  );
  return html`<section id="people" aria-labelledby="people-h"><h2 id="people-h">Decided by a person (${r.human_decisions.length})</h2>
<p class="muted">A person's decision stays as it was taken and is not a flip; the column says whether the candidate would still have sent the claim to a person.</p>
<div class="table-wrap"><table><thead><tr><th>Claim</th><th>Decision</th><th>Recorded</th><th>Candidate</th><th>Sent to a person</th><th>Note</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}

function notEvaluable(r: BacktestReport): SafeHtml {
  if (r.not_evaluable.length === 0) return html``;
  return html`<section id="not-evaluable" aria-labelledby="ne-h"><h2 id="ne-h">Not evaluable (${r.not_evaluable.length})</h2>
<div class="table-wrap"><table><thead><tr><th>Claim</th><th>Why</th></tr></thead><tbody>${r.not_evaluable.map((n) => html`<tr data-not-evaluable="${n.claim_id}"><td class="mono">${n.claim_id}</td><td class="reason">${n.reason}</td></tr>`)}</tbody></table></div></section>`;
}

/** Renders a backtest result as a self-contained HTML page (pure; the same result gives the same bytes). */
export function renderBacktestReport(report: BacktestReport, opts: BacktestRenderOptions = {}): string {
  const title = opts.title ?? "Claims Crew — policy backtest";
  const sub = html`Recorded decisions re-decided by the kernel under a candidate policy, on a ledger simulated from its own decisions. No model was called and nothing was written.`;
  const body = html`${summary(report)}
${flipsTable(report)}
${report.flip_details.length > 0 ? html`<section id="drill-down"><h2>Which layer decided each way</h2>${report.flip_details.map(drillDown)}</section>` : ""}
${people(report)}
${notEvaluable(report)}`;
  return reportPage(title, sub, body, html`policy backtest`).value;
}
