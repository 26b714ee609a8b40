// The self-contained HTML audit report (docs/audit.md), built only from one simulation's audit events.
// Pure and deterministic: the same events (and options) always give the same bytes.
import type { AuditEvent } from "../core/integrity/audit.ts";
import { callsCost, DEFAULT_PRICE_TABLE } from "../core/llm/prices.ts";
import type { PriceTable } from "../core/llm/prices.ts";
import { renderCharts } from "./charts.ts";
import { renderClaimTable } from "./claim-table.ts";
import { renderCycles } from "./cycle.ts";
import type { SafeHtml } from "./html.ts";
import { html, trusted } from "./html.ts";
import { NO_USAGE, addUsage, buildReportModel, compareRoles } from "./model.ts";
import type { ReportModel, Usage } from "./model.ts";
import { badge, est, eur, int, roleLabel } from "./parts.ts";
import { readOrder } from "../core/kernel/order-view.ts";
import { describeReturnWindow } from "../core/kernel/policy.ts";
import { formatMoney } from "../core/kernel/money.ts";
import { REPORT_CSS } from "./styles.ts";
import { cspFor } from "./csp.ts";

/** Options of `renderReport`; nothing time-dependent is added unless given. */
export interface RenderOptions {
  title?: string;
  /** The model prices the cost per claim is computed with (default: the built-in table, docs/llm.md). */
  prices?: PriceTable;
  /** Shown in the header as the generation time (ISO); omitted when not given, to keep output deterministic. */
  generatedAt?: string;
}

/** Opens a decision cycle when the page is opened at (or navigates to) its anchor. The report reads fully without it. */
export const REPORT_SCRIPT = `(function(){function o(){var h=location.hash.slice(1);if(!h)return;var e=document.getElementById(h);if(e&&e.tagName==="DETAILS")e.open=true;}window.addEventListener("hashchange",o);o();})();`;

/** The policy both reports are served with: their one script and stylesheet by hash, nothing else. */
export const REPORT_CSP = cspFor({ script: REPORT_SCRIPT, style: REPORT_CSS });

function renderSummary(m: ReportModel): SafeHtml {
  const s = m.start;
  const banners: SafeHtml[] = [];
  if (!m.end)
    banners.push(
      html`<div class="banner" data-banner="incomplete"><strong>Run incomplete:</strong> the audit has no SIMULATION_END event${m.endProblem ? html` that can be read (${m.endProblem})` : ""}; the batch was interrupted (Ctrl-C), crashed, or is still running. Totals below are computed from the claim events.</div>`,
    );
  if (!s)
    banners.push(
      html`<div class="banner" data-banner="no-start"><strong>No run configuration:</strong> ${m.startProblem ?? "the audit has no SIMULATION_START event"}; agent, orders and expectations are unknown.</div>`,
    );
  // The console's count: every claim row, then every review step (a person's decision the run took).
  const steps = m.end?.review_steps ?? [];
  const recorded = m.end
    ? { matched: m.end.matched + steps.filter((r) => r.matches).length, total: m.end.total + steps.length }
    : { matched: m.matched, total: m.withExpectation };
  if (m.end && m.end.matched !== m.matched) {
    banners.push(
      html`<div class="banner bad" data-banner="mismatch">SIMULATION_END records ${m.end.matched} matched, but the claim events show ${m.matched} of ${m.withExpectation}.</div>`,
    );
  }
  const allMatched = recorded.total > 0 && recorded.matched === recorded.total;
  const llm = s ? `${s.llm.provider} · ${s.llm.model}` : "unknown";
  const chips = (["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW", "PENDING", "NOT_RUN"] as const)
    .filter((o) => m.counts[o] > 0 || ["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW"].includes(o))
    .map(
      (o) =>
        html`<span data-count="${o}" data-value="${m.counts[o]}">${badge(o)} <strong>${m.counts[o]}</strong></span>`,
    );
  return html`<section id="summary" aria-labelledby="summary-h">
<h2 id="summary-h">Run summary</h2>
${banners}
<div class="grid">
<div class="card"><div class="muted">Scenarios matching expectation</div>
<div class="big ${allMatched ? "ok" : "bad"}"><span data-summary="matched">${recorded.matched}</span> / <span data-summary="total">${recorded.total}</span></div>
${steps.length > 0 ? html`<div class="muted" data-summary="rows">${m.end?.total ?? 0} scenario claims · ${steps.length} review steps</div>` : ""}
<div class="chips">${chips}</div></div>
<div class="card"><dl>
<dt>Simulation</dt><dd class="mono" data-summary="simulation-id">${m.simulationId ?? "unknown"}</dd>
${s ? html`<dt>Run id</dt><dd class="mono">${s.run_id}</dd>` : ""}
<dt>Started</dt><dd>${s?.started_at ?? "unknown"}</dd>
<dt>Ended</dt><dd>${m.end ? html`${m.end.ended_at} <span class="muted">(${int(m.end.duration_ms)} ms)</span>` : html`<span class="muted">run incomplete</span>`}</dd>
<dt>Stack</dt><dd>${s?.stack ?? "unknown"}</dd>
<dt>LLM</dt><dd data-summary="llm">${llm}${m.models.length > 0 ? html` <span class="muted">(answered by ${m.models.join(", ")})</span>` : ""}</dd>
</dl></div>
<div class="card"><dl>
<dt>Agent</dt><dd data-summary="agent">${s ? `${s.agent.agent_id} v${s.agent.version}` : "unknown"}</dd>
${
  s
    ? html`<dt>Role</dt><dd>${s.agent.responsibility.role}</dd>
<dt>Policies</dt><dd>${s.agent.responsibility.allowed_policy_types.join(", ")}</dd>
<dt>Limit</dt><dd>${eur(s.agent.contract.max_refund_without_escalation)} without escalation</dd>
<dt>Window</dt><dd>${describeReturnWindow(s.agent.contract)}</dd>
<dt>Categories</dt><dd>${s.agent.contract.allowed_refund_categories.join(", ")}</dd>
<dt>Escalate below</dt><dd>confidence ${s.agent.responsibility.escalate_on_uncertainty}</dd>`
    : ""
}
</dl></div>
<div class="card"><dl>
<dt>Claims</dt><dd data-summary="claims">${m.claims.filter((t) => t.outcome !== "NOT_RUN").length}</dd>
<dt>Refunds authorised</dt><dd data-summary="refunds">${m.refunds.count} <span class="muted">(${m.refunds.totals.length > 0 ? m.refunds.totals.map((a) => `${a.value} ${a.currency}`).join(", ") : eur(0)}; a batch's refunds are reserved on its ledger, never paid)</span></dd>
<dt>Reviews</dt><dd data-summary="reviews">${m.reviews.requested} opened · ${m.reviews.decided} decided</dd>
<dt>LLM calls</dt><dd>${m.totalUsage.calls}</dd>
<dt>Total tokens</dt><dd data-summary="tokens">${int(m.totalUsage.total)}${est(m.totalUsage)}</dd>
<dt>Audit events</dt><dd>${m.eventCount}</dd>
</dl></div>
</div>
${renderCharts(m, "run")}
</section>`;
}

function renderTrace(m: ReportModel): SafeHtml {
  return html`<section id="trace" aria-labelledby="trace-h">
<h2 id="trace-h">Per-claim trace</h2>
${renderClaimTable(m.claims, { kind: "run", name: "trace" })}
</section>`;
}

function renderOrders(m: ReportModel): SafeHtml {
  const s = m.start;
  if (!s)
    return html`<section id="orders" aria-labelledby="orders-h"><h2 id="orders-h">Authoritative orders</h2><p class="muted">Unknown: the audit has no readable SIMULATION_START.</p></section>`;
  const allowed = new Set(s.agent.contract.allowed_refund_categories);
  const rows = s.orders.map((o) => {
    const refunded =
      m.claims
        .filter((t) => t.execution?.orderId === o.order_id)
        .reduce((sum, t) => sum + Math.round((t.execution?.amountEur ?? 0) * 100), 0) / 100;
    const claims = m.claims.filter(
      (t) => (t.verdict?.orderId ?? (t.decisionOutput?.order_id as string | undefined)) === o.order_id,
    );
    const reading = readOrder(o);
    if (!reading.ok)
      return html`<tr data-order-id="${o.order_id}"><td class="mono">${o.order_id}</td><td>${o.purchase_date}</td><td colspan="6" class="fail">garbled: ${reading.problem}</td></tr>`;
    const { view } = reading;
    const categories = [...new Set(view.lines.map((l) => l.category))].join(", ");
    return html`<tr data-order-id="${o.order_id}"><td class="mono">${o.order_id}</td><td>${o.purchase_date}</td><td>${categories}${view.lines.every((l) => allowed.has(l.category)) ? "" : html` <span class="fail">(not refundable)</span>`}</td><td class="num">${formatMoney(view.total)}</td><td>${o.currency}</td><td>${o.customer_id ?? "—"}</td><td class="num">${refunded > 0 ? refunded.toFixed(2) : "—"}</td><td class="mono">${claims.map((t) => t.scenario?.id ?? t.claimId).join(", ") || "—"}</td></tr>`;
  });
  return html`<section id="orders" aria-labelledby="orders-h">
<h2 id="orders-h">Authoritative orders</h2>
<p class="muted">The context store the kernel validated against (never shown to the crew).</p>
<div class="table-wrap"><table>
<thead><tr><th>Order</th><th>Purchase date</th><th>Category</th><th class="num">Amount</th><th>Currency</th><th>Customer</th><th class="num">Refunded this run</th><th>Claims</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
</section>`;
}

/** The model cost of calls at `prices`, as a table cell (USD; "unpriced" calls named). */
function costCell(
  calls: readonly { model: string | undefined; usage: Usage | undefined; batch?: boolean }[],
  prices: PriceTable,
) {
  const cost = callsCost(
    prices,
    calls.map((c) => ({
      model: c.model,
      ...(c.usage ? { usage: { prompt_tokens: c.usage.prompt, completion_tokens: c.usage.completion } } : {}),
      // A call through the OpenAI Batch API is priced at its discount (docs/llm.md, "Batch mode").
      ...(c.batch ? { batch: true } : {}),
    })),
  );
  const unpriced = cost.unpriced > 0 ? ` + ${cost.unpriced} unpriced` : "";
  return html`<td class="num" data-cost-usd="${cost.usd.toFixed(6)}">$${cost.usd.toFixed(5)}${unpriced}</td>`;
}

function renderTokens(m: ReportModel, prices: PriceTable): SafeHtml {
  const roles = m.usageByRole.map((r) => r.role).sort(compareRoles);
  const cell = (u: Usage | undefined) =>
    u
      ? html`<td class="num" title="prompt ${u.prompt} · completion ${u.completion}">${int(u.total)}${est(u)}</td>`
      : html`<td class="num muted">—</td>`;
  const rows = m.claims
    .filter((t) => t.llmCalls.length > 0)
    .map((t) => {
      const per = new Map<string, Usage>();
      let total = NO_USAGE;
      for (const c of t.llmCalls) {
        const u = c.usage ?? { ...NO_USAGE, calls: 1 };
        per.set(c.role, addUsage(per.get(c.role) ?? NO_USAGE, u));
        total = addUsage(total, u);
      }
      return html`<tr data-claim-id="${t.claimId}"><td class="mono">${t.scenario?.id ?? "—"}</td><td class="mono">${t.claimId}</td>${roles.map((r) => cell(per.get(r)))}<td class="num">${total.calls}</td><td class="num">${int(total.prompt)}</td><td class="num">${int(total.completion)}</td>${cell(total)}${costCell(t.llmCalls, prices)}</tr>`;
    });
  const byRole = m.usageByRole.map(
    (r) =>
      html`<tr data-role="${r.role}"><td>${roleLabel(r.role)}</td><td class="num">${r.usage.calls}</td><td class="num">${int(r.usage.prompt)}</td><td class="num">${int(r.usage.completion)}</td>${cell(r.usage)}</tr>`,
  );
  const t = m.totalUsage;
  return html`<section id="tokens" aria-labelledby="tokens-h">
<h2 id="tokens-h">Token usage</h2>
${t.estimated ? html`<p class="muted">Counts marked <span class="est">est.</span> are estimates: the model reported no token usage.</p>` : ""}
${
  rows.length === 0
    ? html`<p class="muted">No LLM calls were recorded.</p>`
    : html`
<h3>Per role</h3>
<div class="table-wrap"><table>
<thead><tr><th>Role</th><th class="num">Calls</th><th class="num">Prompt</th><th class="num">Completion</th><th class="num">Total</th></tr></thead>
<tbody>${byRole}</tbody>
<tfoot><tr><td>Total</td><td class="num">${t.calls}</td><td class="num">${int(t.prompt)}</td><td class="num">${int(t.completion)}</td><td class="num" data-summary="tokens-total">${int(t.total)}${est(t)}</td></tr></tfoot>
</table></div>
<h3>Per claim (total tokens per role, model cost at the price table's USD per million tokens)</h3>
<div class="table-wrap"><table>
<thead><tr><th>Scenario</th><th>Claim</th>${roles.map((r) => html`<th class="num">${roleLabel(r)}</th>`)}<th class="num">Calls</th><th class="num">Prompt</th><th class="num">Completion</th><th class="num">Total</th><th class="num">Model cost</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
</section>`;
}

/**
 * The page every report shares: head with the report's CSS, a header (title and a subtitle), the body, a
 * footer naming what the page is with the verdict colours, and the report's script.
 */
export function reportPage(title: string, sub: SafeHtml, body: SafeHtml, what: SafeHtml): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark">
<title>${title}</title>
<style>${trusted(REPORT_CSS)}</style>
</head>
<body>
<main>
<header>
<h1>${title}</h1>
<p class="sub">${sub}</p>
</header>
${body}
<footer>Claims Crew · ${what}. Verdict colours: ${badge("ACCEPT")} ${badge("ESCALATE")} ${badge("REJECT")} ${badge("NEEDS_REVIEW")}</footer>
</main>
<script>${trusted(REPORT_SCRIPT)}</script>
</body>
</html>
`;
}

/** Renders one simulation's audit events as a self-contained HTML page (pure; same events → same bytes). */
export function renderReport(events: readonly AuditEvent[], opts: RenderOptions = {}): string {
  const m = buildReportModel(events);
  const title = opts.title ?? `Claims Crew audit report — ${m.simulationId ?? "unknown simulation"}`;
  const sub = html`Built only from the audit trail (${m.eventCount} events)${opts.generatedAt ? html` · generated ${opts.generatedAt}` : ""}. The LLM proposes, the kernel disposes.`;
  const body = html`${renderSummary(m)}
${renderTrace(m)}
${renderCycles(m.claims)}
${renderOrders(m)}
${renderTokens(m, opts.prices ?? DEFAULT_PRICE_TABLE)}`;
  const page = reportPage(
    title,
    sub,
    body,
    html`audit report for simulation <span class="mono">${m.simulationId ?? "unknown"}</span>`,
  );
  return page.value;
}
