// The claim table both reports share: one row per claim with its order, amount, verdict, review and
// refund, fixed column widths (the money columns stay on screen at 1280 px) and a filter by verdict that
// works without script (radio buttons and CSS).
import { SafeHtml, html } from "./html.ts";
import type { ClaimTrace, Outcome } from "./model.ts";
import { OUTCOMES, OUTCOME_LABEL, amount, anchorOf, badge, breakable, duration, reviewText } from "./parts.ts";

/** Which flavour of table: the run report's (scenario, expected, match) or the served view's (received, review, time). */
type TableKind = "run" | "served";

function inputKind(t: ClaimTrace): string {
  return t.inputKind === "claim_text" ? "free text" : t.inputKind === "claim" ? "structured" : "";
}

function claimCell(t: ClaimTrace, anchorIndex: number, withLabel = false): SafeHtml {
  if (!t.claimId) return html`<td class="claim"><span class="muted">not submitted</span></td>`;
  const label = withLabel && t.label ? html`<span class="sub-line clamp" title="${t.label}">${t.label}</span>` : "";
  return html`<td class="claim"><a class="mono" href="#${anchorOf(t, anchorIndex)}">${t.claimId}</a><span class="sub-line">${inputKind(t)}${t.parentClaimId ? " · resubmitted" : ""}</span>${label}</td>`;
}

function verdictCell(t: ClaimTrace): SafeHtml {
  return html`<td class="verdict">${badge(t.outcome)} <span class="mono code">${t.reasonCode ?? ""}</span>${t.reason ? html`<span class="reason clamp" title="${t.reason}">${t.reason}</span>` : ""}</td>`;
}

function refundCell(t: ClaimTrace): SafeHtml {
  if (t.execution) {
    return html`<td class="num money" data-refund="${t.execution.amountEur ?? ""}"><span class="pass">${amount(t.execution.amountEur)}</span>${t.execution.approvedBy ? html`<span class="sub-line">approved by ${t.execution.approvedBy}</span>` : ""}</td>`;
  }
  if (t.notExecuted)
    return html`<td class="num money"><span class="fail">not executed</span><span class="sub-line mono">${t.notExecuted.code ?? ""}</span></td>`;
  if (t.reviewRequest && !t.reviewDecision)
    return html`<td class="num money"><span class="muted">awaiting review</span></td>`;
  return html`<td class="num money"><span class="muted">—</span></td>`;
}

function amountCell(t: ClaimTrace): SafeHtml {
  const proposed = t.verdict?.amountEur;
  const differs = proposed !== undefined && t.claimedEur !== undefined && proposed !== t.claimedEur;
  return html`<td class="num money">${amount(t.claimedEur ?? t.amountEur)}${differs ? html`<span class="sub-line">proposed ${amount(proposed)}</span>` : ""}</td>`;
}

function expectedCell(t: ClaimTrace): SafeHtml {
  const e = t.scenario?.expected;
  if (!e) return html`<td class="mono expected">—</td>`;
  return html`<td class="mono expected">${e.verdict}${e.reasonCode ? html`<span class="sub-line"> · ${breakable(e.reasonCode)}</span>` : ""}</td>`;
}

function matchMark(t: ClaimTrace): SafeHtml {
  if (t.matches === undefined) return html`<span class="muted">—</span>`;
  const g = t.raceGroup;
  if (g)
    return html`<span class="match ${g.matches ? "yes" : "no"}" data-race="${g.race}" title="race ${g.race} (${g.ids.join(", ")}): matched as a group, by count">${g.outcome} ${g.matches ? "✓" : "✗"}</span>`;
  return t.matches
    ? html`<span class="match yes" title="matches the expected outcome">✓</span>`
    : html`<span class="match no" title="differs from the expected outcome">✗</span>`;
}

/** The time of day (UTC) of an ISO timestamp, with the date beneath. */
function receivedCell(at: string | undefined): SafeHtml {
  if (!at) return html`<td class="mono">—</td>`;
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) return html`<td class="mono">${at}</td>`;
  const iso = new Date(ms).toISOString();
  return html`<td class="mono" title="${at}">${iso.slice(11, 19)}<span class="sub-line">${iso.slice(0, 10)}</span></td>`;
}

/** The verdict, and where a person decided the claim's review since, the final outcome (APPROVED, DENIED, …). */
function runVerdictCell(t: ClaimTrace): SafeHtml {
  const review = t.reviewDecision ? reviewText(t) : undefined;
  if (!review) return verdictCell(t);
  const status = t.reviewDecision?.decision ?? "";
  return html`<td class="verdict" data-final="${status}">${badge(t.outcome)} <span class="mono code">${t.reasonCode ?? ""}</span>${t.reason ? html`<span class="reason clamp" title="${t.reason}">${t.reason}</span>` : ""}<span class="sub-line final">then <span class="review-status ${status}">${review}</span></span></td>`;
}

function runRow(t: ClaimTrace, i: number, offset: number): SafeHtml {
  return html`<tr data-claim-id="${t.claimId}" data-verdict="${t.outcome}" data-expected="${t.scenario?.expected.verdict ?? ""}" data-scenario="${t.scenario?.id ?? ""}" data-match="${t.matches === undefined ? "" : String(t.matches)}">
<td class="num">${i + 1}</td>
<td class="scenario"><span class="mono">${t.scenario?.id ?? "—"}</span>${(t.scenario?.label ?? t.label) ? html`<span class="sub-line clamp" title="${t.scenario?.label ?? t.label ?? ""}">${t.scenario?.label ?? t.label ?? ""}</span>` : ""}</td>
${claimCell(t, offset + i)}
<td class="mono">${t.orderId ?? "—"}</td>
${amountCell(t)}
${runVerdictCell(t)}
${expectedCell(t)}
<td class="center">${matchMark(t)}</td>
${refundCell(t)}
</tr>`;
}

/** What the shadow policy decided for the claim, marked when it differs from the live verdict. */
function shadowCell(t: ClaimTrace): SafeHtml {
  const shadow = t.verdict?.shadow;
  if (!shadow) return html`<td class="shadow"><span class="muted">—</span></td>`;
  const mark = shadow.agrees
    ? html`<span class="match yes" title="the shadow policy agrees with the live verdict">✓</span>`
    : html`<span class="match no" title="the shadow policy decides otherwise">✗</span>`;
  return html`<td class="shadow" data-shadow="${shadow.verdict}" data-agrees="${String(shadow.agrees)}">${mark} ${badge(shadow.verdict)} <span class="sub-line mono code">${breakable(shadow.reasonCode)}</span></td>`;
}

function servedRow(t: ClaimTrace, i: number, offset: number, shadowed: boolean): SafeHtml {
  const review = reviewText(t);
  const status = t.reviewDecision?.decision ?? (t.reviewRequest ? "PENDING" : "");
  return html`<tr data-claim-id="${t.claimId}" data-verdict="${t.outcome}" data-review="${status}" data-order="${t.orderId ?? ""}">
<td class="num">${i + 1}</td>
${receivedCell(t.receivedAt)}
${claimCell(t, offset + i, true)}
<td class="mono">${t.orderId ?? "—"}</td>
${amountCell(t)}
${verdictCell(t)}
${shadowed ? shadowCell(t) : ""}
<td class="review">${review ? html`<span class="review-status ${status}">${review}</span>` : html`<span class="muted">—</span>`}${t.reviewDecision?.note ? html`<span class="sub-line clamp" title="${t.reviewDecision.note}">${t.reviewDecision.note}</span>` : ""}</td>
${refundCell(t)}
<td class="num">${duration(t.decisionMs)}</td>
</tr>`;
}

/** Radio buttons that filter the table that follows them by verdict (CSS only; counts per outcome). */
function renderFilter(name: string, claims: readonly ClaimTrace[]): SafeHtml {
  const counts = new Map<Outcome, number>();
  for (const t of claims) counts.set(t.outcome, (counts.get(t.outcome) ?? 0) + 1);
  const shown = OUTCOMES.filter((o) => (counts.get(o) ?? 0) > 0);
  const option = (value: string, label: SafeHtml | string, count: number, checked: boolean) =>
    html`<input type="radio" name="${name}" id="${name}-${value}" value="${value}"${checked ? new SafeHtml(" checked") : ""}><label for="${name}-${value}" data-filter="${value}">${label} <strong>${count}</strong></label>`;
  return html`<div class="filter" role="radiogroup" aria-label="Filter claims by verdict"><span class="muted">Show</span>
${option("all", "all", claims.length, true)}${shown.map((o) => option(o, OUTCOME_LABEL[o], counts.get(o) ?? 0, false))}</div>`;
}

/**
 * The claim table with its verdict filter. `name` keeps several tables on one page apart; `offset` is the
 * index of the first claim in the page's list of decision cycles (their anchors).
 */
export function renderClaimTable(
  claims: readonly ClaimTrace[],
  opts: { kind: TableKind; name: string; offset?: number },
): SafeHtml {
  const offset = opts.offset ?? 0;
  if (opts.kind === "run") {
    return html`${renderFilter(opts.name, claims)}
<div class="table-wrap"><table class="claims run" data-table="${opts.name}">
<colgroup><col class="c-n"><col class="c-scenario"><col class="c-claim"><col class="c-order"><col class="c-amount"><col class="c-verdict"><col class="c-expected"><col class="c-match"><col class="c-refund"></colgroup>
<thead><tr><th class="num">#</th><th>Scenario</th><th>Claim</th><th>Order</th><th class="num">Amount (EUR)</th><th>Verdict · reason</th><th>Expected</th><th class="center">Match</th><th class="num">Refund (EUR)</th></tr></thead>
<tbody>${claims.map((t, i) => runRow(t, i, offset))}</tbody>
</table></div>`;
  }
  // The shadow policy's column, when any claim shown was decided beside one (docs/backtest.md).
  const shadowed = claims.some((t) => t.verdict?.shadow !== undefined);
  return html`${renderFilter(opts.name, claims)}
<div class="table-wrap"><table class="claims served${shadowed ? " shadowed" : ""}" data-table="${opts.name}">
<colgroup><col class="c-n"><col class="c-received"><col class="c-claim"><col class="c-order"><col class="c-amount"><col class="c-verdict">${shadowed ? html`<col class="c-shadow">` : ""}<col class="c-review"><col class="c-refund"><col class="c-time"></colgroup>
<thead><tr><th class="num">#</th><th>Received (UTC)</th><th>Claim</th><th>Order</th><th class="num">Amount (EUR)</th><th>Verdict · reason</th>${shadowed ? html`<th>Shadow policy</th>` : ""}<th>Review</th><th class="num">Refund (EUR)</th><th class="num">Decided in</th></tr></thead>
<tbody>${claims.length === 0 ? html`<tr><td colspan="9" class="muted">No claims yet.</td></tr>` : claims.map((t, i) => servedRow(t, i, offset, shadowed))}</tbody>
</table></div>`;
}
