// The decision cycle of one claim (docs/audit.md): input → analysis → proposal → self-check → kernel layers →
// execution → human review, built from the claim's trace; shared by the run report and the served view.
import { EVALUATION_ORDER } from "../core/kernel/kernel.ts";
import { KERNEL_LAYERS } from "../core/kernel/reason-codes.ts";
import type { SafeHtml } from "./html.ts";
import { html, prettyJson, trusted } from "./html.ts";
import type { ClaimTrace } from "./model.ts";
import { anchorOf, badge, duration, est, eur, int, kv, layerName, roleLabel } from "./parts.ts";

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
  return html`<li><h3>Claim received</h3>${kv([
    ["Received", t.receivedAt],
    ["Label", t.label],
  ])}${input}${extraction}</li>`;
}

function renderAnalysis(t: ClaimTrace): SafeHtml {
  const failures =
    t.stepFailures.length > 0 ? html`<ul>${t.stepFailures.map((f) => html`<li class="fail">${f}</li>`)}</ul>` : "";
  return html`<li><h3>${t.analysisBy}</h3>${t.analysis !== undefined ? html`<pre>${t.analysis}</pre>` : html`<p class="muted">${t.crewStarted ? "No analysis recorded." : "No analysis: the crew did not run for this claim."}</p>`}${failures}</li>`;
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
  const crew = t.crewFailure
    ? html`<p class="fail">Crew failed: <span class="mono">${t.crewFailure.reasonCode ?? "?"}</span> — ${t.crewFailure.reason ?? ""}</p>`
    : "";
  return html`<li><h3>${t.analysisBy === "Claims Officer" ? "Claims Officer" : "Decision Maker"} proposal</h3>${body}${crew}</li>`;
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
  if (!v)
    return html`<li><h3>Kernel</h3><p class="skip">No kernel verdict${t.outcome === "NEEDS_REVIEW" ? " (the claim went to human review before the kernel)" : ""}.</p></li>`;
  const deciding = v.layer;
  // In the order the layers run: alignment (8) right after the schema (1), then the table's order.
  const layers = EVALUATION_ORDER.map((n) => ({ n, name: KERNEL_LAYERS[n] })).map(({ n, name }) => {
    const checks = v.checks.filter((c) => c.layer === n);
    const failed = checks.some((c) => !c.passed);
    const isDeciding = n === deciding;
    const state = n === 12 ? (isDeciding ? "pass" : "skip") : checks.length === 0 ? "skip" : failed ? "fail" : "pass";
    const mark = state === "pass" ? "✓" : state === "fail" ? "✗" : "·";
    return html`<li class="${isDeciding ? "deciding" : ""}${state === "skip" && !isDeciding ? " skipped" : ""}" data-layer="${n}" data-state="${state}"${isDeciding ? trusted(' data-deciding="true"') : ""}>
<span class="${state}">${mark}</span> <strong>${n === 12 ? "all layers passed" : `${layerName(n)} ${name}`}</strong>${isDeciding ? html`<span class="tag">deciding layer</span>` : ""}${state === "skip" && n !== 12 ? html` <span class="muted">not reached</span>` : ""}
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
${kv([
  ["Verdict id", v.verdictId],
  ["Policy kind", v.policyKind],
  ["Order", v.orderId],
  ["Amount", v.amountEur === undefined ? undefined : eur(v.amountEur)],
  ["Decided", v.decidedAt],
])}
<ul class="layers">${layers}</ul>${inputs}</li>`;
}

function renderExecution(t: ClaimTrace): SafeHtml {
  let body: SafeHtml;
  if (t.execution) {
    const x = t.execution;
    body = html`<p class="pass">✓ refund executed: ${eur(x.amountEur)} on <span class="mono">${x.orderId ?? "?"}</span>${x.approvedBy ? html` <span class="tag">approved by ${x.approvedBy}</span>` : ""}</p>${kv(
      [
        ["Execution id", x.executionId],
        ["Refunded on the order after", x.refundedAfterEur === undefined ? undefined : eur(x.refundedAfterEur)],
        [
          "Outcome",
          x.outcome?.kind === "STORE_CREDIT"
            ? `store credit, bonus ${x.outcome.bonus}`
            : x.outcome?.kind === "EXCHANGE"
              ? "exchange: reserved, no money moves (ExchangeRequested)"
              : undefined,
        ],
      ],
    )}`;
  } else if (t.notExecuted) {
    body = html`<p class="fail">✗ not executed: <span class="mono">${t.notExecuted.code ?? "?"}</span> — ${t.notExecuted.reason ?? ""}</p>`;
  } else if (t.verdict) {
    body = html`<p class="muted">No execution: only ACCEPT${t.verdict.verdict === "ESCALATE" ? " or a reviewer's approval" : ""} executes (verdict ${t.verdict.verdict}).</p>`;
  } else {
    body = html`<p class="muted">No execution.</p>`;
  }
  const review = t.review
    ? html`<p>${badge("NEEDS_REVIEW")} <span class="mono">${t.review.reasonCode ?? ""}</span> — ${t.review.reason ?? ""}</p>`
    : "";
  return html`<li><h3>Execution</h3>${body}${review}${renderPayment(t)}</li>`;
}

/** What the payment provider made of the refund (a batch run's: a rehearsed decline), and a reviewer's RETRY / CLOSE of it. */
function renderPayment(t: ClaimTrace): SafeHtml | "" {
  const p = t.payment;
  if (!p) return "";
  const status =
    p.status === "SETTLED"
      ? html`<span class="pass">✓ paid</span>`
      : p.status === "FAILED"
        ? html`<span class="fail">✗ payment failed</span>${p.failureReason ? html`: ${p.failureReason}` : ""}`
        : html`<span class="muted">payment not answered</span>`;
  const d = p.decision;
  const decided = d
    ? html`<p data-payment-decision="${d.decision}"><strong>${d.decision}</strong>${d.reviewer ? html` by ${d.reviewer}` : ""}${d.decision === "CLOSE" ? (d.paidOutOfBand ? ": paid out of band, counted as refunded" : ": left unpaid, the reservation released") : ""}${d.note ? html` — ${d.note}` : ""}</p>`
    : "";
  return html`<p data-payment="${p.status ?? ""}">${status}${p.provider ? html` <span class="tag">${p.provider}</span>` : ""}</p>${decided}`;
}

function renderReview(t: ClaimTrace): SafeHtml {
  const r = t.reviewRequest;
  const d = t.reviewDecision;
  if (!r && !d)
    return html`<li data-step="review"><h3>Human review</h3><p class="skip">${t.outcome === "ESCALATE" || t.outcome === "NEEDS_REVIEW" ? "No review was recorded." : "Not needed: the kernel decided."}</p></li>`;
  const requested = r
    ? html`<p data-review="requested">Review <span class="mono">${r.reviewId ?? "?"}</span> requested (${r.origin ?? "?"}): <span class="mono">${r.reasonCode ?? ""}</span> — ${r.reason ?? ""}</p>${kv(
        [
          ["Requested", r.requestedAt],
          ["Amount under review", r.amountEur === undefined ? undefined : eur(r.amountEur)],
        ],
      )}`
    : "";
  const decided = d
    ? html`<p data-review="decided" data-decision="${d.decision}"><span class="${d.decision === "APPROVE" ? "pass" : d.decision === "DENY" ? "fail" : "skip"}">${d.decision === "APPROVE" ? "✓" : d.decision === "DENY" ? "✗" : "↻"}</span> <strong>${d.decision}</strong>${d.reviewer ? html` by ${d.reviewer}` : ""}${d.decidedAt ? html` <span class="muted">at ${d.decidedAt}</span>` : ""}</p>
${kv([
  ["Approved amount", d.amountEur === undefined ? undefined : eur(d.amountEur)],
  ["Note", d.note],
  ["Execution id", d.executionId],
  ["Corrected claim", d.resubmittedClaimId],
])}`
    : html`<p class="muted" data-review="pending">Waiting for a reviewer.</p>`;
  return html`<li data-step="review"><h3>Human review</h3>${requested}${decided}</li>`;
}

function renderCalls(t: ClaimTrace): SafeHtml {
  if (t.llmCalls.length === 0) return html``;
  return html`<h3>LLM calls</h3><div class="table-wrap"><table><thead><tr><th>Role</th><th>Model</th><th class="num">Attempts</th><th class="num">Prompt</th><th class="num">Completion</th><th class="num">Total</th><th class="num">ms</th><th>Result</th></tr></thead><tbody>
${t.llmCalls.map((c) => html`<tr><td>${roleLabel(c.role)}</td><td class="mono">${c.model ?? "—"}</td><td class="num">${c.attempts ?? "—"}</td><td class="num">${c.usage ? int(c.usage.prompt) : "—"}</td><td class="num">${c.usage ? int(c.usage.completion) : "—"}</td><td class="num">${c.usage ? int(c.usage.total) : "—"}${est(c.usage)}</td><td class="num">${c.durationMs ?? "—"}</td><td>${c.ok ? html`<span class="pass">ok</span>` : html`<span class="fail">failed</span>`}${c.error ? html` <span class="muted">${c.error}</span>` : ""}</td></tr>`)}
</tbody></table></div>`;
}

/** The claim's events the report could not read (their details do not follow their schema). */
function renderUnreadable(t: ClaimTrace): SafeHtml | "" {
  if (t.unreadable.length === 0) return "";
  return html`<ul>${t.unreadable.map((u) => html`<li class="fail">Not read: ${u}</li>`)}</ul>`;
}

/** The decision cycle of every claim that ran, closed, with its anchor. */
export function renderCycles(claims: readonly ClaimTrace[]): SafeHtml {
  const blocks = claims.map((t, i) =>
    t.outcome === "NOT_RUN"
      ? html``
      : html`<details class="cycle" id="${anchorOf(t, i)}" data-claim-id="${t.claimId}">
<summary><span class="mono">${t.scenario?.id ?? "—"}</span> ${badge(t.outcome)} <span class="mono">${t.claimId}</span> <span>${t.scenario?.label ?? t.label ?? ""}</span> <span class="muted mono">${t.reasonCode ?? ""}</span></summary>
<div class="cycle-body">
<ol class="steps">${renderInput(t)}${renderAnalysis(t)}${renderProposal(t)}${renderSelfCheck(t)}${renderKernel(t)}${renderExecution(t)}${renderReview(t)}</ol>
${renderCalls(t)}${renderUnreadable(t)}
<p class="muted">DFID <span class="mono">${t.dfid}</span> · ${t.eventCount} audit events${t.decisionMs !== undefined ? html` · decided ${duration(t.decisionMs)} after receipt` : ""}${t.parentClaimId ? html` · corrects <span class="mono">${t.parentClaimId}</span>` : ""}</p>
</div>
</details>`,
  );
  return html`<section id="cycles" aria-labelledby="cycles-h">
<h2 id="cycles-h">Decision cycle per claim</h2>
<p class="muted">Analysis → proposal → self-check → kernel layers → execution → human review. Click a claim to open it.</p>
${blocks}
</section>`;
}
