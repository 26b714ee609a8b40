// Replay: re-runs a recorded decision flow from its audit events — the extraction from the recorded
// model answer, the crew from its recorded inbound events, the self-check, the proposal, the kernel
// from its recorded inputs and the refund's bookkeeping — without calling a model, and says whether
// every step reproduces (after canonicalize). It fails closed: an event it cannot read, a step it
// cannot replay, or an event the claim's path needs but lacks makes the result INCOMPLETE; a replayed
// value that differs from the recorded one, or an event the path does not explain, makes it DIFFERENT.
// What it cannot check: inputs that decide nothing (an order field the kernel ignores, the analyst's
// prose, token usage) — replay proves the decision follows from the recorded inputs, not that they were true.
// This file follows one claim's path through the stages; each stage is replayed by the file named for it
// (extraction, crew, self-check, kernel, review, refund), the audit's own checks in audit.ts.
import type { CrewCompletedEvent, CrewFailedEvent } from "../../crew/index.ts";
import type { AuditEvent } from "../../integrity/index.ts";
import type { Claim } from "../../claim/claim.ts";
import { crewFailureReview } from "../../agents/crew.ts";
import { resubmittedClaimIdFor, reviewIdFor } from "../../kernel/review.ts";
import { RefundProposalOutputSchema } from "../../claim/proposal-output.ts";
import { selfCheck } from "../../agents/self-check.ts";
import { returnDfid, settlementDfid } from "../../kernel/claim-record.ts";
import { isReplayableKind, REPLAY_DETAILS } from "./events.ts";
import { AFTER_CREW, branch, enter, label, scope, unused } from "./context.ts";
import type { Ctx, Flow, Recorded, ReplayOptions, ReplayResult, ReplayStatus } from "./context.ts";
import { auditCheck, holdNotes } from "./audit.ts";
import { crewFailed, replayCrew } from "./crew.ts";
import { replayExtraction } from "./extraction.ts";
import { decided, rebuiltProposal, triaged } from "./kernel.ts";
import { review } from "./review.ts";
import { replayReturn } from "./returns.ts";
import { recordedResponsibility } from "./self-check.ts";
import { erasedIn, readDetails } from "./memo.ts";

/**
 * Replays the decision flow of `claimId` from the audit events (the claim's own, plus its run's SIMULATION_START);
 * its refund's settlement, audited under a flow of its own (the provider's answers, a failed refund's RETRY /
 * CLOSE), is not part of the decision and is left out, as is its return's progress (docs/returns.md: the return's
 * own flow, recorded events that no replay re-fetches).
 */
export function replayClaim(claimId: string, events: readonly AuditEvent[], opts: ReplayOptions = {}): ReplayResult {
  const payment = settlementDfid(claimId);
  const returned = returnDfid(claimId);
  const mine: Recorded[] = events
    .filter((e) => e.details.claim_id === claimId && e.dfid !== payment && e.dfid !== returned)
    .map((event, i) => {
      const r: Recorded = { n: i + 1, event };
      if (!isReplayableKind(event.event_type)) return r;
      const read = readDetails(event.event_type, event.details, REPLAY_DETAILS[event.event_type], opts.memo);
      return read.ok ? { ...r, parsed: read.data } : { ...r, error: read.issues };
    });
  const ctx: Ctx = { claimId, all: events, mine, used: new Set(), reported: new Set(), steps: [], path: [], opts };
  if (mine.length === 0) {
    scope(ctx, "audit").incomplete(`no audit events for claim ${claimId}`);
  } else {
    const flow = replayFlow(ctx);
    holdNotes(ctx);
    auditCheck(ctx, flow);
    replayReturn(
      ctx,
      events.filter((e) => e.dfid === returned),
    );
  }
  const status: ReplayStatus = ctx.steps.some((s) => s.status === "INCOMPLETE")
    ? "INCOMPLETE"
    : ctx.steps.some((s) => s.status === "DIFFERENT")
      ? "DIFFERENT"
      : "IDENTICAL";
  const erased = mine.flatMap((r) => erasedIn(r.event.details, opts.memo).map((p) => `${label(r)} ${p}`));
  return {
    claimId,
    status,
    ...(ctx.outcome ? { outcome: ctx.outcome } : {}),
    ...(ctx.reasonCode ? { reasonCode: ctx.reasonCode } : {}),
    path: ctx.path,
    steps: ctx.steps,
    ...(erased.length > 0 ? { erased } : {}),
  };
}

/** The claim's path from CLAIM_RECEIVED: extraction (free text), then triage or the crew and what follows it. */
function replayFlow(ctx: Ctx): Flow | undefined {
  const received = enter(ctx, "received", "intake");
  if (!received) return undefined;
  const { d, r } = received.CLAIM_RECEIVED;
  const flow: Flow = {
    claimId: ctx.claimId,
    dfid: r.event.dfid,
    receivedAt: d.received_at,
    ...(typeof d.simulation_id === "string" ? { simulationId: d.simulation_id } : {}),
    ...(d.parent_claim_id === undefined ? {} : { parentClaimId: d.parent_claim_id }),
  };
  const intake = scope(ctx, "intake");
  intake.expect(
    Date.parse(d.received_at) === Date.parse(r.event.created_at),
    `${label(r)} received_at ${d.received_at} is not its own time ${r.event.created_at}`,
  );
  checkParent(ctx, label(r), flow);
  let claim: Claim;
  if ("claim" in d.input) {
    intake.expect(d.input_kind === "claim", `${label(r)} says input_kind ${d.input_kind} for a structured claim`);
    intake.done("structured claim as received");
    claim = d.input.claim;
  } else {
    intake.expect(d.input_kind === "claim_text", `${label(r)} says input_kind ${d.input_kind} for a free-text claim`);
    intake.done("free-text claim as received");
    const extracted = replayExtraction(ctx, d.input.claim_text, flow);
    if (extracted === undefined) return flow;
    claim = extracted;
  }
  // Triage decided the claim (CLAIM_TRIAGED) or the crew started (CREW_STARTED): never both.
  if (unused(ctx, "CLAIM_TRIAGED").length === 0 && unused(ctx, "CREW_STARTED").length === 0) {
    scope(ctx, "crew").incomplete(
      "CREW_STARTED or CLAIM_TRIAGED is missing: neither the crew nor triage took the claim",
    );
    return flow;
  }
  if (unused(ctx, "CLAIM_TRIAGED").length > 0) {
    if (unused(ctx, "CREW_STARTED").length > 0)
      scope(ctx, "kernel").different("both CLAIM_TRIAGED and CREW_STARTED are recorded: a triaged claim has no crew");
    else triaged(ctx, claim, flow);
    return flow;
  }
  const end = replayCrew(ctx, claim, flow);
  if (end) afterCrew(ctx, end, claim, flow);
  return flow;
}

/**
 * A resubmitted claim's parent, as CLAIM_RECEIVED records it, is the claim whose review created it (the child's id
 * is derived from the parent's review) and the one the stored claim record names, when the caller has the record.
 */
function checkParent(ctx: Ctx, at: string, flow: Flow): void {
  const intake = scope(ctx, "intake");
  const parent = flow.parentClaimId;
  if (parent !== undefined)
    intake.expect(
      resubmittedClaimIdFor(reviewIdFor(parent)) === flow.claimId,
      `${at} names parent claim ${parent}, but ${flow.claimId} is not the claim a RESUBMIT of ${parent}'s review creates`,
    );
  const record = ctx.opts.claimRecord;
  if (record) intake.compare(`${at} parent_claim_id (the claim record's)`, parent, record.parent_claim_id);
}

/** How the crew ended decides what follows: a failure, the self-check, the order's data unusable, or the kernel. */
function afterCrew(ctx: Ctx, end: CrewCompletedEvent | CrewFailedEvent, claim: Claim, flow: Flow): void {
  if (end.type === "crew.failed") {
    const expected = crewFailureReview(end.reason, ctx.crewFailureCause);
    crewFailed(
      ctx,
      flow,
      claim,
      { reason_code: expected.reason_code, states: expected.reason, code: end.code, role: end.role },
      "the crew fails",
    );
    return;
  }
  const output = RefundProposalOutputSchema.safeParse(end.output);
  if (!output.success) {
    crewFailed(
      ctx,
      flow,
      claim,
      { reason_code: "CREW_OUTPUT_INVALID", output: end.output },
      "the crew's output is not a refund proposal",
    );
    return;
  }
  const responsibility = ctx.opts.responsibility ?? recordedResponsibility(ctx, flow);
  if (!responsibility) {
    scope(ctx, "self_check").incomplete(
      "no responsibility contract to self-check with: neither PROPOSAL_SUBMITTED nor the run's SIMULATION_START records one",
    );
    return;
  }
  const check = selfCheck(output.data, responsibility, claim);
  if (!check.ok) {
    if (!branch(ctx, "self_check", "self_check_failed", AFTER_CREW, "the self-check fails")) return;
    const f = enter(ctx, "self_check_failed", "self_check");
    if (!f) return;
    const s = scope(ctx, "self_check");
    const { d, raw, r } = f.CLAIMS_SELF_CHECK_FAILED;
    s.compare(`${label(r)} output (the crew's)`, raw.output, output.data);
    s.compare(`${label(r)} failures`, raw.failures, check.failures);
    s.expect(d.reason_code === "CLAIMS_SELF_CHECK_FAILED", `${label(r)} reason_code is ${d.reason_code}`);
    s.expect(
      check.failures.every((x) => d.reason.includes(x.message)),
      `${label(r)} reason does not state every failure`,
    );
    s.done(`fails again: ${check.failures.map((x) => x.check).join(", ")}`);
    review(ctx, flow, d, f.CLAIM_NEEDS_REVIEW, claim);
    return;
  }
  scope(ctx, "self_check").done("passed");
  // The kernel could not use the order's data: no kernel verdict, the claim went to a person.
  const dataInvalid = [...unused(ctx, "CLAIM_NEEDS_REVIEW"), ...unused(ctx, "REVIEW_REQUESTED")].find(
    (x) => (x.parsed as { reason_code?: string } | undefined)?.reason_code === "ORDER_DATA_INVALID",
  );
  if (dataInvalid && unused(ctx, "KERNEL_VERDICT").length === 0) {
    const f = enter(ctx, "order_data_invalid", "proposal");
    if (!f) return;
    if (!rebuiltProposal(ctx, f.AGENT_DECISION, output.data, flow)) return;
    scope(ctx, "proposal").done("the proposal crossed the wall; the order's data could not be used");
    review(ctx, flow, f.CLAIM_NEEDS_REVIEW.d, f.CLAIM_NEEDS_REVIEW, claim);
    return;
  }
  if (!branch(ctx, "self_check", "decided", AFTER_CREW, "the self-check passes and the proposal goes to the kernel"))
    return;
  decided(ctx, output.data, claim, flow);
}
