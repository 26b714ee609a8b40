// The self-contained HTML audit report (SPEC §7.4), built only from one simulation's audit events.
// Pure and deterministic: the same events (and options) always give the same bytes.
import type { AuditEvent } from "../core/integrity/audit.ts";
import { EVALUATION_ORDER, KERNEL_LAYERS } from "../core/claims/reason-codes.ts";
import { SafeHtml, html, prettyJson, trusted } from "./html.ts";
import { NO_USAGE, addUsage, buildReportModel, compareRoles } from "./model.ts";
import type { ClaimTrace, Outcome, ReportModel, Usage } from "./model.ts";
import { REPORT_CSS } from "./styles.ts";

/** Options of `renderReport`; nothing time-dependent is added unless given. */
export interface RenderOptions {
  title?: string;
  /** Shown in the header as the generation time (ISO); omitted when not given, to keep output deterministic. */
  generatedAt?: string;
}

const OUTCOME_LABEL: Record<Outcome, string> = {
  ACCEPT: "ACCEPT",
  ESCALATE: "ESCALATE",
  REJECT: "REJECT",
  NEEDS_REVIEW: "NEEDS REVIEW",
  PENDING: "NO VERDICT",
  NOT_RUN: "NOT RUN",
};

const ROLE_LABEL: Record<string, string> = { extractor: "Extractor", claims_analyst: "Claims Analyst", decision_maker: "Decision Maker" };

// Opens a decision cycle when the page is opened at (or navigates to) its anchor. The report reads fully without it.
const SCRIPT = `(function(){function o(){var h=location.hash.slice(1);if(!h)return;var e=document.getElementById(h);if(e&&e.tagName==="DETAILS")e.open=true;}window.addEventListener("hashchange",o);o();})();`;

const eur = (v: number | undefined): string => (v === undefined ? "—" : `${v.toFixed(2)} EUR`);
const int = (v: number): string => String(v).replace(/\B(?=(\d{3})+(?!\d))/g, " ");
const roleLabel = (role: string): string => ROLE_LABEL[role] ?? role;

function badge(outcome: string): SafeHtml {
  const known = outcome in OUTCOME_LABEL;
  return html`<span class="badge ${known ? outcome : "other"}">${known ? OUTCOME_LABEL[outcome as Outcome] : outcome}</span>`;
}

function anchorOf(t: ClaimTrace, index: number): string {
  const slug = (t.claimId || t.scenario?.id || "claim").replace(/[^A-Za-z0-9_-]/g, "_");
  return `cycle-${index + 1}-${slug}`;
}

function est(u: Usage | undefined): SafeHtml {
  return u?.estimated ? html`<span class="est" title="estimated: the endpoint reported no token counts">est.</span>` : html``;
}

function kv(rows: [string, unknown][]): SafeHtml {
  const shown = rows.filter(([, v]) => v !== undefined && v !== null && v !== "");
  return html`<dl class="kv">${shown.map(([k, v]) => html`<dt>${k}</dt><dd>${v instanceof SafeHtml ? v : typeof v === "object" ? html`<code>${JSON.stringify(v)}</code>` : String(v)}</dd>`)}</dl>`;
}

function expectedText(t: ClaimTrace): string {
  const e = t.scenario?.expected;
  if (!e) return "—";
  return e.reasonCode ? `${e.verdict} · ${e.reasonCode}` : e.verdict;
}

function matchMark(t: ClaimTrace): SafeHtml {
  if (t.matches === undefined) return html`<span class="muted">—</span>`;
  return t.matches ? html`<span class="match yes" title="matches the expected outcome">✓</span>` : html`<span class="match no" title="differs from the expected outcome">✗</span>`;
}

function renderSummary(m: ReportModel): SafeHtml {
  const s = m.start;
  const banners: SafeHtml[] = [];
  if (!m.end) banners.push(html`<div class="banner" data-banner="incomplete"><strong>Run incomplete:</strong> the audit has no SIMULATION_END event${m.endProblem ? html` that can be read (${m.endProblem})` : ""}; the batch may have crashed or still be running. Totals below are computed from the claim events.</div>`);
  if (!s) banners.push(html`<div class="banner" data-banner="no-start"><strong>No run configuration:</strong> ${m.startProblem ?? "the audit has no SIMULATION_START event"}; agent, orders and expectations are unknown.</div>`);
  const recorded = m.end ? { matched: m.end.matched, total: m.end.total } : { matched: m.matched, total: m.withExpectation };
  if (m.end && m.end.matched !== m.matched) {
    banners.push(html`<div class="banner bad" data-banner="mismatch">SIMULATION_END records ${m.end.matched} matched, but the claim events show ${m.matched} of ${m.withExpectation}.</div>`);
  }
  const allMatched = recorded.total > 0 && recorded.matched === recorded.total;
  const llm = s ? `${s.llm.provider} · ${s.llm.model}` : "unknown";
  const chips = (["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW", "PENDING", "NOT_RUN"] as const)
    .filter((o) => m.counts[o] > 0 || ["ACCEPT", "ESCALATE", "REJECT", "NEEDS_REVIEW"].includes(o))
    .map((o) => html`<span data-count="${o}" data-value="${m.counts[o]}">${badge(o)} <strong>${m.counts[o]}</strong></span>`);
  return html`<section id="summary" aria-labelledby="summary-h">
<h2 id="summary-h">Run summary</h2>
${banners}
<div class="grid">
<div class="card"><div class="muted">Scenarios matching expectation</div>
<div class="big ${allMatched ? "ok" : "bad"}"><span data-summary="matched">${recorded.matched}</span> / <span data-summary="total">${recorded.total}</span></div>
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
${s ? html`<dt>Role</dt><dd>${s.agent.responsibility.role}</dd>
<dt>Policies</dt><dd>${s.agent.responsibility.allowed_policy_types.join(", ")}</dd>
<dt>Limit</dt><dd>${eur(s.agent.contract.max_refund_without_escalation)} without escalation</dd>
<dt>Window</dt><dd>${s.agent.contract.return_window_days} days</dd>
<dt>Categories</dt><dd>${s.agent.contract.allowed_refund_categories.join(", ")}</dd>
<dt>Escalate below</dt><dd>confidence ${s.agent.responsibility.escalate_on_uncertainty}</dd>` : ""}
</dl></div>
<div class="card"><dl>
<dt>Claims</dt><dd data-summary="claims">${m.claims.filter((t) => t.outcome !== "NOT_RUN").length}</dd>
<dt>Refunds executed</dt><dd data-summary="refunds">${m.refunds.count} <span class="muted">(${eur(m.refunds.totalEur)})</span></dd>
<dt>LLM calls</dt><dd>${m.totalUsage.calls}</dd>
<dt>Total tokens</dt><dd data-summary="tokens">${int(m.totalUsage.total)}${est(m.totalUsage)}</dd>
<dt>Audit events</dt><dd>${m.eventCount}</dd>
</dl></div>
</div>
</section>`;
}

function renderTrace(m: ReportModel): SafeHtml {
  const rows = m.claims.map((t, i) => {
    const refund = t.execution
      ? html`<span class="pass">${eur(t.execution.amountEur)}</span>`
      : t.notExecuted
        ? html`<span class="fail">not executed</span><span class="reason">${t.notExecuted.code ?? ""}</span>`
        : html`<span class="muted">—</span>`;
    return html`<tr data-claim-id="${t.claimId}" data-verdict="${t.outcome}" data-expected="${t.scenario?.expected.verdict ?? ""}" data-scenario="${t.scenario?.id ?? ""}" data-match="${t.matches === undefined ? "" : String(t.matches)}">
<td class="num">${i + 1}</td>
<td class="mono">${t.scenario?.id ?? "—"}</td>
<td class="label">${t.scenario?.label ?? t.label ?? ""}</td>
<td class="mono nowrap">${t.claimId ? html`<a href="#${anchorOf(t, i)}">${t.claimId}</a>` : html`<span class="muted">not submitted</span>`}</td>
<td>${t.inputKind === "claim_text" ? "free text" : t.inputKind === "claim" ? "structured" : "—"}</td>
<td class="nowrap">${badge(t.outcome)}</td>
<td><span class="mono">${t.reasonCode ?? "—"}</span>${t.reason ? html`<span class="reason">${t.reason}</span>` : ""}</td>
<td class="mono">${expectedText(t)}</td>
<td>${matchMark(t)}</td>
<td>${refund}</td>
</tr>`;
  });
  return html`<section id="trace" aria-labelledby="trace-h">
<h2 id="trace-h">Per-claim trace</h2>
<div class="table-wrap"><table>
<thead><tr><th class="num">#</th><th>Scenario</th><th>Label</th><th>Claim</th><th>Input</th><th>Verdict</th><th>Reason code</th><th>Expected</th><th>Match</th><th>Refund executed</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
</section>`;
}

function renderInput(t: ClaimTrace): SafeHtml {
  const input =
    t.inputKind === "claim_text"
      ? html`<p class="muted">Customer text (shown verbatim, treated as data):</p><blockquote class="customer">${typeof t.input === "string" ? t.input : JSON.stringify(t.input)}</blockquote>`
      : t.input !== undefined
        ? html`<pre>${prettyJson(t.input)}</pre>`
        : html`<p class="muted">No CLAIM_RECEIVED event.</p>`;
  const x = t.extraction;
  const extraction = !x
    ? ""
    : x.ok
      ? html`<p>Extracted claim:</p><pre>${prettyJson(x.claim ?? x.extracted)}</pre>${x.warnings.length > 0 ? html`<ul>${x.warnings.map((w) => html`<li class="muted">${w}</li>`)}</ul>` : ""}`
      : html`<p class="fail">Extraction failed: <span class="mono">${x.reasonCode ?? "?"}</span> — ${x.reason ?? ""}</p>${x.extracted !== undefined ? html`<p class="muted">Partial extraction:</p><pre>${prettyJson(x.extracted)}</pre>` : ""}`;
  return html`<li><h3>Claim received</h3>${kv([["Received", t.receivedAt], ["Label", t.label]])}${input}${extraction}</li>`;
}

function renderAnalysis(t: ClaimTrace): SafeHtml {
  const failures = t.stepFailures.length > 0 ? html`<ul>${t.stepFailures.map((f) => html`<li class="fail">${f}</li>`)}</ul>` : "";
  return html`<li><h3>Claims Analyst</h3>${t.analysis !== undefined ? html`<pre>${t.analysis}</pre>` : html`<p class="muted">${t.crewStarted ? "No analysis recorded." : "No analysis: the crew did not run for this claim."}</p>`}${failures}</li>`;
}

function renderProposal(t: ClaimTrace): SafeHtml {
  const o = t.decisionOutput;
  const p = t.proposal;
  const body = o
    ? kv([
        ["Action", o.action],
        ["Order", o.order_id],
        ["Amount", typeof o.amount_eur === "number" ? eur(o.amount_eur) : o.amount_eur],
        ["Category", o.category],
        ["Confidence", o.confidence],
        ["Reason", o.reason],
        ["Proposal id", p?.proposal_id],
        ["Policy kind", p?.policy_kind],
        ["Valid for", typeof p?.valid_for_ms === "number" ? `${p.valid_for_ms} ms` : undefined],
      ])
    : html`<p class="muted">${t.crewStarted ? "No proposal: the crew did not produce one." : "No proposal: the crew did not run for this claim."}</p>`;
  const crew = t.crewFailure ? html`<p class="fail">Crew failed: <span class="mono">${t.crewFailure.reasonCode ?? "?"}</span> — ${t.crewFailure.reason ?? ""}</p>` : "";
  return html`<li><h3>Decision Maker proposal</h3>${body}${crew}</li>`;
}

function renderSelfCheck(t: ClaimTrace): SafeHtml {
  const s = t.selfCheck;
  const head =
    s.status === "passed"
      ? html`<p class="pass">✓ passed (policy kind allowed, confidence at or above the contract's threshold)</p>`
      : s.status === "failed"
        ? html`<p class="fail">✗ failed — the proposal did not cross the wall</p>`
        : html`<p class="skip">not reached</p>`;
  return html`<li><h3>Self-check</h3>${head}${s.failures.length > 0 ? html`<ul>${s.failures.map((f) => html`<li class="fail">${f}</li>`)}</ul>` : ""}</li>`;
}

function renderKernel(t: ClaimTrace): SafeHtml {
  const v = t.verdict;
  if (!v) return html`<li><h3>Kernel</h3><p class="skip">No kernel verdict${t.outcome === "NEEDS_REVIEW" ? " (the claim went to human review before the kernel)" : ""}.</p></li>`;
  const deciding = v.layer;
  // In the order the layers run: alignment (8) right after the schema (1), then the table's order.
  const layers = EVALUATION_ORDER
    .map((n) => ({ n, name: KERNEL_LAYERS[n] }))
    .map(({ n, name }) => {
      const checks = v.checks.filter((c) => c.layer === n);
      const failed = checks.some((c) => !c.passed);
      const isDeciding = n === deciding;
      const state = n === 12 ? (isDeciding ? "pass" : "skip") : checks.length === 0 ? "skip" : failed ? "fail" : "pass";
      const mark = state === "pass" ? "✓" : state === "fail" ? "✗" : "·";
      return html`<li class="${isDeciding ? "deciding" : ""}${state === "skip" && !isDeciding ? " skipped" : ""}" data-layer="${n}" data-state="${state}"${isDeciding ? trusted(' data-deciding="true"') : ""}>
<span class="${state}">${mark}</span> <strong>${n === 12 ? "all layers passed" : `${n} ${name}`}</strong>${isDeciding ? html`<span class="tag">deciding layer</span>` : ""}${state === "skip" && n !== 12 ? html` <span class="muted">not reached</span>` : ""}
${checks.length > 0 ? html`<ul class="checks">${checks.map((c) => html`<li><span class="${c.passed ? "pass" : "fail"}">${c.passed ? "✓" : "✗"}</span> ${c.name}${c.reasonCode ? html` → ${c.reasonCode}` : ""}</li>`)}</ul>` : ""}
</li>`;
    });
  const k = t.kernelInputs;
  const inputs = k
    ? html`<p class="muted">Authoritative inputs the kernel saw (claim received ${k.receivedAt ?? "?"}, decided ${k.decidedAt ?? "?"}):</p>
<dl class="kv"><dt>Order</dt><dd>${k.order === undefined || k.order === null ? "not in the context store" : html`<pre>${prettyJson(k.order)}</pre>`}</dd>
<dt>Ledger before</dt><dd>${k.ledgerEntry === undefined || k.ledgerEntry === null ? "no refunds on this order yet" : html`<pre>${prettyJson(k.ledgerEntry)}</pre>`}</dd></dl>`
    : "";
  return html`<li><h3>Kernel</h3>
<p>${badge(v.verdict)} <span class="mono">${v.reasonCode ?? ""}</span> — ${v.reason ?? ""}</p>
${kv([["Verdict id", v.verdictId], ["Policy kind", v.policyKind], ["Order", v.orderId], ["Amount", v.amountEur === undefined ? undefined : eur(v.amountEur)], ["Decided", v.decidedAt]])}
<ul class="layers">${layers}</ul>${inputs}</li>`;
}

function renderExecution(t: ClaimTrace): SafeHtml {
  let body: SafeHtml;
  if (t.execution) {
    const x = t.execution;
    body = html`<p class="pass">✓ refund executed: ${eur(x.amountEur)} on <span class="mono">${x.orderId ?? "?"}</span></p>${kv([["Execution id", x.executionId], ["Refunded on the order after", x.refundedAfterEur === undefined ? undefined : eur(x.refundedAfterEur)]])}`;
  } else if (t.notExecuted) {
    body = html`<p class="fail">✗ not executed: <span class="mono">${t.notExecuted.code ?? "?"}</span> — ${t.notExecuted.reason ?? ""}</p>`;
  } else if (t.verdict) {
    body = html`<p class="muted">No execution: only ACCEPT executes (verdict ${t.verdict.verdict}).</p>`;
  } else {
    body = html`<p class="muted">No execution.</p>`;
  }
  const review = t.review ? html`<p>${badge("NEEDS_REVIEW")} <span class="mono">${t.review.reasonCode ?? ""}</span> — ${t.review.reason ?? ""}</p>` : "";
  return html`<li><h3>Execution</h3>${body}${review}</li>`;
}

function renderCalls(t: ClaimTrace): SafeHtml {
  if (t.llmCalls.length === 0) return html``;
  return html`<h3>LLM calls</h3><div class="table-wrap"><table><thead><tr><th>Role</th><th>Model</th><th class="num">Attempts</th><th class="num">Prompt</th><th class="num">Completion</th><th class="num">Total</th><th class="num">ms</th><th>Result</th></tr></thead><tbody>
${t.llmCalls.map((c) => html`<tr><td>${roleLabel(c.role)}</td><td class="mono">${c.model ?? "—"}</td><td class="num">${c.attempts ?? "—"}</td><td class="num">${c.usage ? int(c.usage.prompt) : "—"}</td><td class="num">${c.usage ? int(c.usage.completion) : "—"}</td><td class="num">${c.usage ? int(c.usage.total) : "—"}${est(c.usage)}</td><td class="num">${c.durationMs ?? "—"}</td><td>${c.ok ? html`<span class="pass">ok</span>` : html`<span class="fail">failed</span>`}${c.error ? html` <span class="muted">${c.error}</span>` : ""}</td></tr>`)}
</tbody></table></div>`;
}

function renderCycles(m: ReportModel): SafeHtml {
  const blocks = m.claims.map((t, i) =>
    t.outcome === "NOT_RUN"
      ? html``
      : html`<details class="cycle" id="${anchorOf(t, i)}" data-claim-id="${t.claimId}">
<summary><span class="mono">${t.scenario?.id ?? "—"}</span> ${badge(t.outcome)} <span class="mono">${t.claimId}</span> <span>${t.scenario?.label ?? t.label ?? ""}</span> <span class="muted mono">${t.reasonCode ?? ""}</span></summary>
<div class="cycle-body">
<ol class="steps">${renderInput(t)}${renderAnalysis(t)}${renderProposal(t)}${renderSelfCheck(t)}${renderKernel(t)}${renderExecution(t)}</ol>
${renderCalls(t)}
<p class="muted">DFID <span class="mono">${t.dfid}</span> · ${t.eventCount} audit events</p>
</div>
</details>`,
  );
  return html`<section id="cycles" aria-labelledby="cycles-h">
<h2 id="cycles-h">Decision cycle per claim</h2>
<p class="muted">Analysis → proposal → self-check → kernel layers → execution. Click a claim to open it.</p>
${blocks}
</section>`;
}

function renderOrders(m: ReportModel): SafeHtml {
  const s = m.start;
  if (!s) return html`<section id="orders" aria-labelledby="orders-h"><h2 id="orders-h">Authoritative orders</h2><p class="muted">Unknown: the audit has no readable SIMULATION_START.</p></section>`;
  const allowed = new Set(s.agent.contract.allowed_refund_categories);
  const rows = s.orders.map((o) => {
    const refunded = m.claims.filter((t) => t.execution?.orderId === o.order_id).reduce((sum, t) => sum + Math.round((t.execution?.amountEur ?? 0) * 100), 0) / 100;
    const claims = m.claims.filter((t) => (t.verdict?.orderId ?? (t.decisionOutput?.order_id as string | undefined)) === o.order_id);
    return html`<tr data-order-id="${o.order_id}"><td class="mono">${o.order_id}</td><td>${o.purchase_date}</td><td>${o.category}${allowed.has(o.category) ? "" : html` <span class="fail">(not refundable)</span>`}</td><td class="num">${o.amount.toFixed(2)}</td><td>${o.currency}</td><td>${o.customer_id ?? "—"}</td><td class="num">${refunded > 0 ? refunded.toFixed(2) : "—"}</td><td class="mono">${claims.map((t) => t.scenario?.id ?? t.claimId).join(", ") || "—"}</td></tr>`;
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

function renderTokens(m: ReportModel): SafeHtml {
  const roles = m.usageByRole.map((r) => r.role).sort(compareRoles);
  const cell = (u: Usage | undefined) => (u ? html`<td class="num" title="prompt ${u.prompt} · completion ${u.completion}">${int(u.total)}${est(u)}</td>` : html`<td class="num muted">—</td>`);
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
      return html`<tr data-claim-id="${t.claimId}"><td class="mono">${t.scenario?.id ?? "—"}</td><td class="mono">${t.claimId}</td>${roles.map((r) => cell(per.get(r)))}<td class="num">${total.calls}</td><td class="num">${int(total.prompt)}</td><td class="num">${int(total.completion)}</td>${cell(total)}</tr>`;
    });
  const byRole = m.usageByRole.map(
    (r) => html`<tr data-role="${r.role}"><td>${roleLabel(r.role)}</td><td class="num">${r.usage.calls}</td><td class="num">${int(r.usage.prompt)}</td><td class="num">${int(r.usage.completion)}</td>${cell(r.usage)}</tr>`,
  );
  const t = m.totalUsage;
  return html`<section id="tokens" aria-labelledby="tokens-h">
<h2 id="tokens-h">Token usage</h2>
${t.estimated ? html`<p class="muted">Counts marked <span class="est">est.</span> are estimates: the model reported no token usage.</p>` : ""}
${rows.length === 0 ? html`<p class="muted">No LLM calls were recorded.</p>` : html`
<h3>Per role</h3>
<div class="table-wrap"><table>
<thead><tr><th>Role</th><th class="num">Calls</th><th class="num">Prompt</th><th class="num">Completion</th><th class="num">Total</th></tr></thead>
<tbody>${byRole}</tbody>
<tfoot><tr><td>Total</td><td class="num">${t.calls}</td><td class="num">${int(t.prompt)}</td><td class="num">${int(t.completion)}</td><td class="num" data-summary="tokens-total">${int(t.total)}${est(t)}</td></tr></tfoot>
</table></div>
<h3>Per claim (total tokens per role)</h3>
<div class="table-wrap"><table>
<thead><tr><th>Scenario</th><th>Claim</th>${roles.map((r) => html`<th class="num">${roleLabel(r)}</th>`)}<th class="num">Calls</th><th class="num">Prompt</th><th class="num">Completion</th><th class="num">Total</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`}
</section>`;
}

/** Renders one simulation's audit events as a self-contained HTML page (pure; same events → same bytes). */
export function renderReport(events: readonly AuditEvent[], opts: RenderOptions = {}): string {
  const m = buildReportModel(events);
  const title = opts.title ?? `Claims Crew audit report — ${m.simulationId ?? "unknown simulation"}`;
  const page = html`<!doctype html>
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
<p class="sub">Built only from the audit trail (${m.eventCount} events)${opts.generatedAt ? html` · generated ${opts.generatedAt}` : ""}. The LLM proposes, the kernel disposes.</p>
</header>
${renderSummary(m)}
${renderTrace(m)}
${renderCycles(m)}
${renderOrders(m)}
${renderTokens(m)}
<footer>Claims Crew · audit report for simulation <span class="mono">${m.simulationId ?? "unknown"}</span>. Verdict colours: ${badge("ACCEPT")} ${badge("ESCALATE")} ${badge("REJECT")} ${badge("NEEDS_REVIEW")}</footer>
</main>
<script>${trusted(SCRIPT)}</script>
</body>
</html>
`;
  return page.value;
}
