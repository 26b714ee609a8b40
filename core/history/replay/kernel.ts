// Replay of the kernel: triage on its recorded inputs, the proposal rebuilt as it crossed the wall, the kernel
// deciding again on its recorded inputs (with a recorded shadow verdict), the lost races noted before it, and what
// its verdict leads to (an ACCEPT's refund, an ESCALATE's review).
import { erasedPaths } from "../../privacy/sealing.ts";
import { kernelReadyProposal } from "../erased-proposal.ts";
import { legacyNotReservedText, notReservedText, parseMoney } from "../../kernel/index.ts";
import { buildProposal } from "../../integrity/index.ts";
import type { PolicyProposal } from "../../integrity/index.ts";
import type { Claim } from "../../claim/claim.ts";
import { buildTriageVerdictRecord, buildVerdictRecord } from "../../kernel/execution.ts";
import { resubmittedClaimIdFor, reviewIdFor } from "../../kernel/review.ts";
import { decideClaim, triageClaim } from "../../kernel/kernel.ts";
import type { ClaimVerdict, DecideClaimInput, TriageInput } from "../../kernel/kernel.ts";
import type { RefundProposalOutput } from "../../claim/proposal-output.ts";
import { decideShadow } from "../../kernel/shadow.ts";
import type { ReplayDetails } from "./events.ts";
import { enter, label, message, scope, unused } from "./context.ts";
import type { Ctx, Flow, Found, Scope } from "./context.ts";
import { execution } from "./refund.ts";
import { readOrder } from "../../kernel/order-view.ts";
import type { Money } from "../../kernel/money.ts";
import { currencyFor } from "../../kernel/public-amount.ts";
import type { Order } from "../../integrity/contracts.ts";
import { humanReview } from "./review.ts";

/**
 * The kernel's recorded parent claim is the one intake recorded. A claim received before intake recorded the parent
 * (an older audit) has none there; its kernel's parent is then checked against the claim's own id, which a RESUBMIT
 * derives from its parent's review.
 */
export function checkKernelParent(k: Scope, at: string, recorded: unknown, flow: Flow): void {
  if (flow.parentClaimId !== undefined || recorded === undefined) {
    k.compare(`${at} parentClaimId (the one intake recorded)`, recorded, flow.parentClaimId);
    return;
  }
  k.expect(
    typeof recorded === "string" && resubmittedClaimIdFor(reviewIdFor(recorded)) === flow.claimId,
    `${at} parentClaimId ${String(recorded)}: intake recorded no parent and ${flow.claimId} is not the claim a RESUBMIT of its review creates`,
  );
}

/** Triage: the kernel's triage on its recorded inputs rejects the claim as recorded (KERNEL_VERDICT). */
export function triaged(ctx: Ctx, claim: Claim, flow: Flow): void {
  const f = enter(ctx, "triaged", "kernel");
  if (!f) return;
  const k = scope(ctx, "kernel");
  const { raw, r } = f.CLAIM_TRIAGED;
  const inputs = raw.triage_inputs as Record<string, unknown>;
  const at = label(r);
  k.compare(`${at} claim (the one intake stored)`, inputs.claim, claim);
  k.compare(`${at} receivedAt`, inputs.receivedAt, flow.receivedAt);
  k.compare(`${at} claimId`, inputs.claimId, flow.claimId);
  k.compare(`${at} dfid`, inputs.dfid, flow.dfid);
  checkKernelParent(k, at, inputs.parentClaimId, flow);
  let replayed: Record<string, unknown> | undefined;
  let verdict: ClaimVerdict | undefined;
  try {
    const triageInput = {
      ...inputs,
      claim,
      order: inputs.order ?? undefined,
      ledgerEntry: inputs.ledgerEntry ?? undefined,
    } as unknown as TriageInput;
    verdict = triageClaim(triageInput);
    if (verdict) {
      const record = buildTriageVerdictRecord({
        verdict,
        claim,
        claimId: flow.claimId,
        dfid: flow.dfid,
        decidedAt: triageInput.decidedAt,
        policy: { contract: triageInput.contract, responsibility: triageInput.responsibility },
        ...(flow.simulationId === undefined ? {} : { simulationId: flow.simulationId }),
      });
      // A triage verdict's key hashes the claim: with the customer's reason erased it is taken as recorded.
      const keyed = erasedPaths(claim).length > 0 ? { ...record, ...recordedKeys(f.KERNEL_VERDICT.d) } : record;
      replayed = { ...keyed, layer: verdict.layer, checks: verdict.checks };
    }
  } catch (e) {
    k.incomplete(`triage cannot run on ${at}'s inputs: ${message(e)}`);
    return;
  }
  if (!verdict || !replayed) {
    k.different(`on ${at}'s inputs triage lets the claim through to the crew, but the record has it decided`);
    return;
  }
  k.compare(`${label(f.KERNEL_VERDICT.r)}`, f.KERNEL_VERDICT.raw, replayed);
  k.done(
    `triaged: ${verdict.verdict} ${verdict.reason_code} at layer ${verdict.layer}, no model call${erasedPaths(claim).length > 0 ? " (the verdict's id and key hash the erased reason: taken as recorded)" : ""}`,
  );
  ctx.outcome = verdict.verdict;
  ctx.reasonCode = verdict.reason_code;
}

/** The proposal as it crossed the wall, rebuilt from AGENT_DECISION and the crew's output, checked against the record. */
export function rebuiltProposal(
  ctx: Ctx,
  decision: Found<"AGENT_DECISION">,
  output: RefundProposalOutput,
  flow: Flow,
): PolicyProposal | undefined {
  const p = scope(ctx, "proposal");
  p.compare(`${label(decision.r)} output (the crew's)`, decision.raw.output, output);
  let proposal: PolicyProposal;
  try {
    const rec = decision.d.proposal;
    proposal = buildProposal({
      dfid: rec.dfid,
      agentId: rec.agent_id,
      output,
      createdAt: rec.created_at,
      validForMs: rec.valid_for_ms,
    });
    // An erased reason (claims erase) is hashed into the proposal's id and idempotency key: those two are taken as
    // recorded and said so; everything the decision reads (order, amount, category, confidence) is still compared.
    if (erasedPaths(output).length > 0) {
      proposal = { ...proposal, proposal_id: rec.proposal_id, idempotency_key: rec.idempotency_key };
      p.done(
        `the proposal's id and idempotency key hash the customer's erased reason: taken as recorded (${rec.idempotency_key.slice(0, 16)}…)`,
      );
    }
  } catch (e) {
    p.incomplete(`the proposal cannot be rebuilt from ${label(decision.r)}: ${message(e)}`);
    return undefined;
  }
  p.compare(`${label(decision.r)} proposal`, decision.raw.proposal, proposal);
  p.expect(proposal.dfid === flow.dfid, `the proposal names flow ${proposal.dfid}, the claim's is ${flow.dfid}`);
  p.expect(
    proposal.created_at === decision.r.event.created_at,
    `the proposal's created_at ${proposal.created_at} is not ${label(decision.r)}'s time`,
  );
  return proposal;
}

/** The proposal as it crossed the wall, the kernel on its recorded inputs, and an ACCEPT's refund. */
export function decided(ctx: Ctx, output: RefundProposalOutput, claim: Claim, flow: Flow): void {
  const f = enter(ctx, "decided", "proposal");
  if (!f) return;
  const proposal = rebuiltProposal(ctx, f.AGENT_DECISION, output, flow);
  if (!proposal) return;
  scope(ctx, "proposal").done(`idempotency key ${proposal.idempotency_key.slice(0, 16)}…`);

  const k = scope(ctx, "kernel");
  const submitted = f.PROPOSAL_SUBMITTED;
  const inputs = submitted.raw.kernel_inputs as Record<string, unknown>;
  const at = label(submitted.r);
  k.compare(`${at} proposal (the one the crew made)`, inputs.proposal, proposal);
  k.compare(`${at} claim (the one intake stored)`, inputs.claim, claim);
  k.compare(`${at} receivedAt`, inputs.receivedAt, flow.receivedAt);
  k.compare(`${at} claimId`, inputs.claimId, flow.claimId);
  k.compare(`${at} dfid`, inputs.dfid, flow.dfid);
  checkKernelParent(k, at, inputs.parentClaimId, flow);
  let verdict: ClaimVerdict;
  let replayed: Record<string, unknown>;
  // An erased proposal's recorded key hashes the reason it no longer has: the kernel (whose first layer checks the
  // key against the content) decides on the erased proposal with its own key, and the verdict's id and key derived
  // from it are set back to the recorded ones; every check and the verdict itself are compared as always.
  const erased = erasedPaths(proposal.params).length > 0;
  let forKernel = proposal;
  try {
    if (erased) forKernel = kernelReadyProposal(proposal);
    const kernelInput = {
      ...inputs,
      proposal: forKernel,
      order: inputs.order ?? undefined,
      ledgerEntry: inputs.ledgerEntry ?? undefined,
      customerWindow: inputs.customerWindow ?? undefined,
    } as unknown as DecideClaimInput;
    verdict = decideClaim(kernelInput);
    const built = buildVerdictRecord({
      verdict,
      policy: { contract: kernelInput.contract, responsibility: kernelInput.responsibility },
      proposal: forKernel,
      claimId: flow.claimId,
      dfid: flow.dfid,
      decidedAt: kernelInput.decidedAt,
      ...(flow.simulationId === undefined ? {} : { simulationId: flow.simulationId }),
    });
    // A recorded shadow verdict is decided again under the shadow policy recorded beside it.
    const shadowPolicy = f.KERNEL_VERDICT.d.shadow?.policy;
    const shadow = shadowPolicy ? decideShadow(kernelInput, verdict, shadowPolicy) : undefined;
    const record = erased
      ? { ...built, verdict_id: f.KERNEL_VERDICT.d.verdict_id, idempotency_key: proposal.idempotency_key }
      : built;
    replayed = { ...record, layer: verdict.layer, checks: verdict.checks, ...(shadow ? { shadow } : {}) };
  } catch (e) {
    k.incomplete(`the kernel cannot run on ${at}'s inputs: ${message(e)}`);
    return;
  }
  const verdictRecord = f.KERNEL_VERDICT;
  k.compare(`${label(verdictRecord.r)}`, verdictRecord.raw, replayed);
  k.done(`${verdict.verdict} ${verdict.reason_code} at layer ${verdict.layer}`);
  ctx.outcome = verdict.verdict;
  ctx.reasonCode = verdict.reason_code;
  // A reservation that lost a race was noted before the kernel decided again on the ledger it then saw.
  const notes = unused(ctx, "CLAIM_REFUND_NOT_EXECUTED");
  k.compare(
    `${at} lost_races (the CLAIM_REFUND_NOT_EXECUTED notes recorded)`,
    submitted.d.lost_races ?? 0,
    notes.length,
  );
  for (const note of notes) {
    ctx.used.add(note.n);
    const d = note.parsed as ReplayDetails<"CLAIM_REFUND_NOT_EXECUTED"> | undefined;
    if (!d) continue;
    k.compare(`${label(note)} verdict_id`, d.verdict_id, verdictRecord.d.verdict_id);
    // The proposal's amount in the order's currency; audits recorded before the reason named it read it as EUR cents.
    const proposed = parseMoney(proposal.params.amount_eur, currencyFor(submitted.d.kernel_inputs.order ?? undefined));
    k.expect(
      proposed.ok &&
        (d.reason.includes(notReservedText(proposed.money)) ||
          d.reason.includes(legacyNotReservedText(proposed.money.minor))),
      `${label(note)} reason does not name the refund of the proposal`,
    );
    k.expect(d.code !== "ALREADY_REFUNDED_FOR_CLAIM", `${label(note)}: a lost race names ${d.code}`);
  }
  if (verdict.verdict === "ACCEPT")
    execution(
      ctx,
      verdict,
      proposal,
      verdictRecord.d.verdict_id,
      orderTotalOf(submitted.d.kernel_inputs.order),
      flow,
      currencyFor(submitted.d.kernel_inputs.order ?? undefined),
      {
        contract: submitted.d.kernel_inputs.contract,
        order: submitted.d.kernel_inputs.order,
        claim,
        decidedAt: submitted.d.kernel_inputs.decidedAt,
      },
    );
  if (verdict.verdict === "ESCALATE") {
    humanReview(ctx, flow, "ESCALATE", {
      reason_code: verdict.reason_code,
      reason: verdict.reason,
      verdictId: verdictRecord.d.verdict_id,
      amountEur: verdictRecord.d.amount_eur,
      orderId: verdictRecord.d.order_id ?? claim.order_id,
      currency: currencyFor(submitted.d.kernel_inputs.order ?? undefined),
    });
  }
}

/** The id and key of a recorded verdict (what replay takes as recorded when they hash an erased field). */
function recordedKeys(d: { verdict_id: string; idempotency_key: string }): {
  verdict_id: string;
  idempotency_key: string;
} {
  return { verdict_id: d.verdict_id, idempotency_key: d.idempotency_key };
}

/** The recorded order's total in its currency (its `amount` in the one-line form), or undefined without a readable order. */
function orderTotalOf(order: Order | null | undefined): Money | undefined {
  if (!order) return undefined;
  const reading = readOrder(order);
  return reading.ok ? reading.view.total : undefined;
}
