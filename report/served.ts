// The live view of claims sent to the API (`claims serve` or a deployment), built only from their audit
// events: one group per `simulation_id` the claims were sent with, and "served claims" for those sent
// without one. A served claim has no batch around it (no SIMULATION_START / END, no expectations), so this
// view shows what the audit does know — verdicts, money, reviews, decision times — and never a run that
// "may have crashed". Pure and deterministic: the same events (and options) always give the same bytes.
import type { AuditEvent } from "../core/integrity/audit.ts";
import type { Reconciliation } from "../core/kernel/settlement.ts";
import { median, renderCharts } from "./charts.ts";
import { renderClaimTable } from "./claim-table.ts";
import { renderCycles } from "./cycle.ts";
import type { SafeHtml } from "./html.ts";
import { html } from "./html.ts";
import { buildReportModel } from "./model.ts";
import type { ReportModel } from "./model.ts";
import { OUTCOMES, badge, duration, est, eur, int } from "./parts.ts";
import { renderReport, reportPage } from "./render.ts";
import { moneyStates } from "./money-states.ts";
import type { MoneyStates, Tally } from "./money-states.ts";
import type { RenderOptions } from "./render.ts";

/** Options of `renderServedReport`; nothing time-dependent is added unless given. */
interface ServedRenderOptions extends RenderOptions {
  /** Every authorised refund with its settlement (docs/payments.md); the section is left out without it. */
  reconciliation?: Reconciliation;
  /** What the events cover, for the header (e.g. "the 200 most recent claims"); the caller knows, the events do not. */
  scope?: string;
}

/** The group of claims sent without a `simulation_id`. */
const SERVED_GROUP = "served";

type Group = { key: string; simulationId: string | undefined; model: ReportModel; money: MoneyStates };

/** Splits the events by `details.simulation_id`: claims without one first, then each simulation in order of first appearance. */
function groupEvents(events: readonly AuditEvent[]): Group[] {
  const byKey = new Map<string, AuditEvent[]>();
  for (const e of events) {
    const sim =
      typeof e.details.simulation_id === "string" && e.details.simulation_id !== ""
        ? e.details.simulation_id
        : undefined;
    const key = sim === undefined ? SERVED_GROUP : `sim:${sim}`;
    const list = byKey.get(key);
    if (list) list.push(e);
    else byKey.set(key, [e]);
  }
  const keys = [...byKey.keys()].sort((a, b) => (a === SERVED_GROUP ? -1 : b === SERVED_GROUP ? 1 : 0));
  return keys.map((key) => {
    const model = buildReportModel(byKey.get(key)!);
    // A live view reads newest first: the table, its numbers and the decision cycles below it.
    return {
      key,
      money: moneyStates(byKey.get(key)!),
      simulationId: key === SERVED_GROUP ? undefined : key.slice(4),
      model: { ...model, claims: [...model.claims].reverse() },
    };
  });
}

function slug(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/g, "_");
}

/** "3 (3979.99 EUR)" */
const tally = (t: Tally) => html`${t.count} <span class="muted">(${eur(t.eur)})</span>`;

function renderGroupSummary(m: ReportModel, money: MoneyStates): SafeHtml {
  const ran = m.claims.filter((t) => t.outcome !== "NOT_RUN");
  const chips = OUTCOMES.filter(
    (o) => m.counts[o] > 0 || ["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW"].includes(o),
  ).map(
    (o) => html`<span data-count="${o}" data-value="${m.counts[o]}">${badge(o)} <strong>${m.counts[o]}</strong></span>`,
  );
  const times = ran.map((t) => t.decisionMs).filter((v): v is number => v !== undefined);
  const agents = [
    ...new Set(ran.map((t) => t.proposal?.agent_id).filter((a): a is string => typeof a === "string")),
  ].sort();
  const pendingReviews = m.reviews.requested - m.reviews.decided;
  return html`<div class="grid">
<div class="card"><div class="muted">Claims</div><div class="big" data-summary="claims">${ran.length}</div>
<div class="chips">${chips}</div></div>
<div class="card"><dl>
<dt>Refunded</dt><dd data-summary="refunds" data-value="${money.settled.count}">${tally(money.settled)} <span class="muted">settled by the provider</span></dd>
${money.paidOutOfBand.count > 0 ? html`<dt>Paid out of band</dt><dd data-summary="paid-out-of-band">${tally(money.paidOutOfBand)} <span class="muted">CLOSEd by a reviewer as paid</span></dd>` : ""}
<dt>Authorised</dt><dd data-summary="authorised">${tally(money.authorised)}</dd>
<dt>Pending</dt><dd data-summary="refunds-pending">${tally(money.pending)} <span class="muted">with the provider</span></dd>
<dt>Failed</dt><dd data-summary="refunds-failed">${tally(money.failed)}</dd>
${money.closedUnpaid.count > 0 ? html`<dt>Closed unpaid</dt><dd data-summary="closed-unpaid">${tally(money.closedUnpaid)}</dd>` : ""}
<dt>after review</dt><dd data-summary="refunded-approved">${eur(m.money.refundedApproved)} <span class="muted">authorised</span></dd>
<dt>Escalated</dt><dd data-summary="escalated">${eur(m.money.escalatedPending)} <span class="muted">awaiting review</span></dd>
<dt>Rejected</dt><dd data-summary="rejected">${eur(m.money.rejected)}</dd>
</dl></div>
<div class="card"><dl>
<dt>Reviews</dt><dd data-summary="reviews">${m.reviews.requested} opened · ${m.reviews.decided} decided</dd>
<dt>Waiting</dt><dd data-summary="reviews-pending">${pendingReviews} for a reviewer</dd>
<dt>Decision time</dt><dd data-summary="decision-median">median ${duration(median(times))}</dd>
<dt>Slowest</dt><dd>${duration(times.length > 0 ? Math.max(...times) : undefined)}</dd>
<dt>In progress</dt><dd data-summary="in-progress">${m.counts.PENDING} without an outcome yet</dd>
</dl></div>
<div class="card"><dl>
<dt>Agents</dt><dd data-summary="agents">${agents.length > 0 ? agents.join(", ") : html`<span class="muted">no proposal yet</span>`}</dd>
<dt>Models</dt><dd>${m.models.length > 0 ? m.models.join(", ") : html`<span class="muted">no LLM call yet</span>`}</dd>
<dt>LLM calls</dt><dd>${m.totalUsage.calls}</dd>
<dt>Total tokens</dt><dd data-summary="tokens">${int(m.totalUsage.total)}${est(m.totalUsage)}</dd>
<dt>Audit events</dt><dd>${m.eventCount}</dd>
</dl></div>
</div>`;
}

function renderGroup(g: Group, offset: number): SafeHtml {
  const id = slug(g.key);
  const heading =
    g.simulationId === undefined
      ? html`<h2 id="group-${id}-h">Served claims <span class="muted">sent without a simulation_id</span></h2>`
      : html`<h2 id="group-${id}-h">Simulation <span class="mono">${g.simulationId}</span> <span class="muted">claims sent with this simulation_id</span></h2>`;
  return html`<section class="group" id="group-${id}" data-group="${g.simulationId ?? SERVED_GROUP}" aria-labelledby="group-${id}-h">
${heading}
${renderGroupSummary(g.model, g.money)}
${renderCharts(g.model, `chart-${id}`)}
<h3>Claims, newest first</h3>
${renderClaimTable(g.model.claims, { kind: "served", name: `f-${id}`, offset })}
</section>`;
}

/** The reconciliation section: totals by settlement status and every refund that is not settled. */
function renderReconciliation(r: Reconciliation): SafeHtml {
  const open = r.refunds.filter((x) => x.status !== "SETTLED");
  const rows = open.map(
    (x) =>
      html`<tr data-status="${x.status}"><td class="mono">${x.claim_id}</td><td class="mono">${x.execution_id}</td><td>${eur(x.amount_eur)}</td><td>${x.status}</td><td class="mono">${x.provider_ref ?? "—"}</td><td>${x.failure_reason ?? ""}</td></tr>`,
  );
  return html`<section class="group" id="reconciliation" aria-labelledby="reconciliation-h">
<h2 id="reconciliation-h">Reconciliation <span class="muted">authorised refunds and their settlement with the payment provider</span></h2>
<p data-totals="true">${int(r.refunds.length)} refunds · settled ${eur(r.totals.settled_eur)} · pending ${eur(r.totals.pending_eur)} · failed ${eur(r.totals.failed_eur)}</p>
${open.length === 0 ? html`<p class="muted">Every refund is settled.</p>` : html`<table><thead><tr><th>claim</th><th>execution</th><th>amount</th><th>status</th><th>provider ref</th><th>reason</th></tr></thead><tbody>${rows}</tbody></table>`}
</section>`;
}

/** Renders the audit events of served claims as one self-contained HTML page (pure; same events → same bytes). */
export function renderServedReport(events: readonly AuditEvent[], opts: ServedRenderOptions = {}): string {
  const groups = groupEvents(events);
  const title =
    opts.title ??
    (groups.length === 1 && groups[0]!.simulationId !== undefined
      ? `Claims Crew — served claims of ${groups[0]!.simulationId}`
      : "Claims Crew — served claims");
  const claims = groups.flatMap((g) => g.model.claims);
  let offset = 0;
  const sections = groups.map((g) => {
    const section = renderGroup(g, offset);
    offset += g.model.claims.length;
    return section;
  });
  const empty =
    groups.length === 0
      ? html`<section class="group" data-group="${SERVED_GROUP}"><h2>Served claims</h2><p class="muted" data-empty="true">No claims yet: send one with <span class="mono">POST /claims</span> and reload this page.</p></section>`
      : "";
  const sub = html`Live view of ${opts.scope ?? `${claims.length} claims`} sent to the API, built only from their audit trail (${events.length} events)${opts.generatedAt ? html` · generated ${opts.generatedAt}` : ""}. Reload for the latest. The LLM proposes, the kernel disposes.`;
  const body = html`${empty}${opts.reconciliation ? renderReconciliation(opts.reconciliation) : ""}${sections}
${claims.length > 0 ? renderCycles(claims) : ""}`;
  const page = reportPage(title, sub, body, html`served claims`);
  return page.value;
}

/**
 * The report the audit calls for: a batch run's report when the events hold its SIMULATION_START or
 * SIMULATION_END, else the served view (claims sent to the API under a simulation_id, or without one).
 */
export function renderAuditReport(events: readonly AuditEvent[], opts: ServedRenderOptions = {}): string {
  const isRun = events.some((e) => e.event_type === "SIMULATION_START" || e.event_type === "SIMULATION_END");
  return isRun ? renderReport(events, opts) : renderServedReport(events, opts);
}
