// Replay: re-runs a recorded decision flow from its audit events — the extraction from the recorded
// model answer, the crew from its recorded inbound events, the self-check, the proposal, the kernel
// from its recorded inputs and the refund's bookkeeping — without calling a model, and says whether
// every step reproduces (after canonicalize). It fails closed: an event it cannot read, a step it
// cannot replay, or an event the claim's path needs but lacks makes the result INCOMPLETE; a replayed
// value that differs from the recorded one, or an event the path does not explain, makes it DIFFERENT.
// What it cannot check: inputs that decide nothing (an order field the kernel ignores, the analyst's
// prose, token usage) — replay proves the decision follows from the recorded inputs, not that they were true.
import { assertLedgerEntry, formatEur, parseCents } from "../kernel/index.ts";
import { canonicalize, initialCrewSnapshot, stepCrewMany } from "../crew/index.ts";
import type {
  AgentStepCompletedEvent,
  AgentStepFailedEvent,
  AgentStepRequestedEvent,
  CrewCompletedEvent,
  CrewFailedEvent,
  CrewSnapshot,
  FixerInvokedEvent,
  InboundCrewEvent,
  OutboundCrewEvent,
} from "../crew/index.ts";
import { buildProposal } from "../integrity/index.ts";
import type { AuditEvent, PolicyProposal, ResponsibilityContract } from "../integrity/index.ts";
import type { Claim } from "../claim/claim.ts";
import {
  AnalystOutputSchema,
  CLAIMS_CREW_NAME,
  CLAIMS_ROLES,
  claimsCrewGraph,
  claimsCrewInput,
  crewFailureReview,
} from "../agents/crew.ts";
import type { CrewFailureCause } from "../agents/crew.ts";
import { buildTriageVerdictRecord, buildVerdictRecord, executionIdFor, planExecution } from "../kernel/execution.ts";
import { approvalExecutionIdFor, resubmittedClaimIdFor, reviewIdFor } from "../kernel/review.ts";
import { claimFromExtraction, extractionFailureReasonCode } from "../extraction/extraction.ts";
import { decideClaim, triageClaim } from "../kernel/kernel.ts";
import type { ClaimVerdict, DecideClaimInput, TriageInput } from "../kernel/kernel.ts";
import { RefundProposalOutputSchema } from "../claim/proposal-output.ts";
import type { RefundProposalOutput } from "../claim/proposal-output.ts";
import { decideShadow } from "../kernel/shadow.ts";
import { isReplayableKind, REPLAY_DETAILS, STAGE_EVENTS } from "./replay-events.ts";
import type { ReplayDetails, ReplayStage, ReplayableKind } from "./replay-events.ts";
import { selfCheck, selfCheckRepairReason } from "../agents/self-check.ts";
import { auditDetailsIssues, SimulationStartDetailsSchema } from "./audit-events.ts";

/** IDENTICAL: every step reproduces; DIFFERENT: a step gives another result; INCOMPLETE: something could not be replayed or is missing. */
type ReplayStatus = "IDENTICAL" | "DIFFERENT" | "INCOMPLETE";

/** The steps a replay reports on. */
type ReplayStepName =
  | "intake"
  | "extraction"
  | "crew"
  | "self_check"
  | "proposal"
  | "kernel"
  | "execution"
  | "review"
  | "audit";

/** One reported step of a replay; a step with several problems is reported once per problem. */
interface ReplayStep {
  step: ReplayStepName;
  status: ReplayStatus;
  detail: string;
  recorded?: unknown;
  replayed?: unknown;
}

/** The result of replaying one claim. */
export interface ReplayResult {
  claimId: string;
  /** INCOMPLETE when any step is, else DIFFERENT when any step is, else IDENTICAL. */
  status: ReplayStatus;
  /** How the claim ends on replay (absent when replay stopped before the end). */
  outcome?: "ACCEPT" | "REJECT" | "ESCALATE" | "NEEDS_REVIEW";
  reasonCode?: string;
  /** The stages (STAGE_EVENTS) whose events were found, in flow order. */
  path: ReplayStage[];
  steps: ReplayStep[];
}

/** Replay options: the responsibility contract to self-check with (default: the one the claim's audit records). */
interface ReplayOptions {
  responsibility?: ResponsibilityContract;
  /**
   * The claim's review as stored, when the caller has it. The audit alone cannot show that a person's final
   * decision was deleted (a pending review is a complete flow); the stored review can, so replay then
   * requires REVIEW_DECIDED for a decided review, and refuses one for a pending review.
   */
  review?: { status: string; decision?: string | undefined; reviewer?: string | undefined; note?: string | undefined };
  /**
   * The claim's record as stored, when the caller has it: its `parent_claim_id` (the claim a reviewer's RESUBMIT
   * corrected, absent otherwise) must be the one the audit records, so an audit that drops or changes the parent
   * (and with it the escalation of a resubmitted claim) does not replay IDENTICAL.
   */
  claimRecord?: { parent_claim_id?: string | undefined };
}

/** One of the claim's recorded events, with its 1-based position among them and its parsed details. */
interface Recorded {
  n: number;
  event: AuditEvent;
  parsed?: unknown;
  error?: string;
}

/** A stage's event found and read. */
interface Found<K extends ReplayableKind> {
  r: Recorded;
  d: ReplayDetails<K>;
  raw: Record<string, unknown>;
}

type StageFinds<S extends ReplayStage> = { [K in Extract<(typeof STAGE_EVENTS)[S][number], ReplayableKind>]: Found<K> };

/** What every event of the flow shares: the claim, its flow id, its run and when it was received. */
interface Flow {
  claimId: string;
  dfid: string;
  receivedAt: string;
  simulationId?: string;
  /** The claim a reviewer's RESUBMIT corrected, as CLAIM_RECEIVED records it. */
  parentClaimId?: string;
}

interface Ctx {
  claimId: string;
  all: readonly AuditEvent[];
  mine: Recorded[];
  used: Set<number>;
  reported: Set<number>;
  steps: ReplayStep[];
  path: ReplayStage[];
  opts: ReplayOptions;
  outcome?: ReplayResult["outcome"];
  reasonCode?: string;
  /** A person's decision on the claim's review, when one was recorded. */
  review?: string;
  /** The step error whose delivery ended the crew in failure, if one did. */
  crewFailureCause?: CrewFailureCause;
}

const same = (a: unknown, b: unknown) =>
  a === undefined || b === undefined ? a === b : canonicalize(a) === canonicalize(b);
const label = (r: Recorded) => `${r.event.event_type} #${r.n}`;
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Collects one step's problems; `done` reports the step IDENTICAL only if it had none. */
function scope(ctx: Ctx, step: ReplayStepName) {
  let problems = 0;
  const push = (status: ReplayStatus, detail: string, recorded?: unknown, replayed?: unknown) => {
    if (status !== "IDENTICAL") problems++;
    ctx.steps.push({
      step,
      status,
      detail,
      ...(recorded === undefined ? {} : { recorded }),
      ...(replayed === undefined ? {} : { replayed }),
    });
  };
  return {
    incomplete: (detail: string) => push("INCOMPLETE", detail),
    different: (detail: string, recorded?: unknown, replayed?: unknown) =>
      push("DIFFERENT", detail, recorded, replayed),
    /** Reports DIFFERENT unless `recorded` and `replayed` are the same JSON. */
    compare(what: string, recorded: unknown, replayed: unknown): boolean {
      if (same(recorded, replayed)) return true;
      push("DIFFERENT", `${what}: the recorded value differs from the replayed one`, recorded, replayed);
      return false;
    },
    /** Reports DIFFERENT with `detail` unless `ok`. */
    expect(ok: boolean, detail: string): boolean {
      if (!ok) push("DIFFERENT", detail);
      return ok;
    },
    done(detail: string) {
      if (problems === 0) push("IDENTICAL", detail);
    },
    get clean() {
      return problems === 0;
    },
  };
}

/** Replays the decision flow of `claimId` from the audit events (the claim's own, plus its run's SIMULATION_START). */
export function replayClaim(claimId: string, events: readonly AuditEvent[], opts: ReplayOptions = {}): ReplayResult {
  const mine: Recorded[] = events
    .filter((e) => e.details.claim_id === claimId)
    .map((event, i) => {
      const r: Recorded = { n: i + 1, event };
      if (!isReplayableKind(event.event_type)) return r;
      const parsed = REPLAY_DETAILS[event.event_type].safeParse(event.details);
      return parsed.success ? { ...r, parsed: parsed.data } : { ...r, error: auditDetailsIssues(parsed.error) };
    });
  const ctx: Ctx = { claimId, all: events, mine, used: new Set(), reported: new Set(), steps: [], path: [], opts };
  if (mine.length === 0) {
    scope(ctx, "audit").incomplete(`no audit events for claim ${claimId}`);
  } else {
    const flow = replayFlow(ctx);
    holdNotes(ctx);
    auditCheck(ctx, flow);
  }
  const status: ReplayStatus = ctx.steps.some((s) => s.status === "INCOMPLETE")
    ? "INCOMPLETE"
    : ctx.steps.some((s) => s.status === "DIFFERENT")
      ? "DIFFERENT"
      : "IDENTICAL";
  return {
    claimId,
    status,
    ...(ctx.outcome ? { outcome: ctx.outcome } : {}),
    ...(ctx.reasonCode ? { reasonCode: ctx.reasonCode } : {}),
    path: ctx.path,
    steps: ctx.steps,
  };
}

function unused(ctx: Ctx, kind: string): Recorded[] {
  return ctx.mine.filter((r) => r.event.event_type === kind && !ctx.used.has(r.n));
}

/** The step that reads a kind, where it is not the step entering its stage. */
const KIND_STEP: Partial<Record<ReplayableKind, ReplayStepName>> = {
  CLAIM_TRIAGED: "kernel",
  PROPOSAL_SUBMITTED: "kernel",
  KERNEL_VERDICT: "kernel",
  CLAIM_NEEDS_REVIEW: "review",
};

/**
 * Takes the events of `stage` (each exactly once): reports a missing or unreadable one as INCOMPLETE
 * and returns nothing; a kind recorded twice is DIFFERENT (the first is used).
 */
function enter<S extends ReplayStage>(ctx: Ctx, stage: S, step: ReplayStepName): StageFinds<S> | undefined {
  const found: Record<string, Found<ReplayableKind>> = {};
  let complete = true;
  for (const kind of STAGE_EVENTS[stage] as readonly ReplayableKind[]) {
    const s = scope(ctx, KIND_STEP[kind] ?? step);
    const records = unused(ctx, kind);
    for (const r of records) ctx.used.add(r.n);
    const first = records[0];
    if (!first) {
      s.incomplete(`${kind} is missing: the '${stage}' stage records it`);
      complete = false;
      continue;
    }
    if (records.length > 1)
      s.different(
        `${kind} is recorded ${records.length} times (${records.map(label).join(", ")}); the '${stage}' stage records it once`,
      );
    if (first.error !== undefined) {
      ctx.reported.add(first.n);
      s.incomplete(`${label(first)} cannot be read: ${first.error}`);
      complete = false;
      continue;
    }
    found[kind] = { r: first, d: first.parsed as never, raw: first.event.details };
  }
  if (!complete) return undefined;
  ctx.path.push(stage);
  return found as StageFinds<S>;
}

/**
 * Before entering `stage`, which replay reached: if its first event is absent but another ending's is
 * recorded, the record took another branch (DIFFERENT) and replay stops there.
 */
function branch(
  ctx: Ctx,
  step: ReplayStepName,
  stage: ReplayStage,
  rivals: readonly ReplayStage[],
  what: string,
): boolean {
  if (unused(ctx, STAGE_EVENTS[stage][0]).length > 0) return true;
  const other = rivals
    .filter((r) => r !== stage)
    .map((r) => STAGE_EVENTS[r][0])
    .find((kind) => unused(ctx, kind).length > 0);
  if (other === undefined) return true;
  scope(ctx, step).different(`on replay ${what}, but the record has ${other} instead of ${STAGE_EVENTS[stage][0]}`);
  return false;
}

const AFTER_CREW: readonly ReplayStage[] = ["crew_failed", "self_check_failed", "decided"];

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

/**
 * The kernel's recorded parent claim is the one intake recorded. A claim received before intake recorded the parent
 * (an older audit) has none there; its kernel's parent is then checked against the claim's own id, which a RESUBMIT
 * derives from its parent's review.
 */
function checkKernelParent(k: ReturnType<typeof scope>, at: string, recorded: unknown, flow: Flow): void {
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
function triaged(ctx: Ctx, claim: Claim, flow: Flow): void {
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
      replayed = { ...record, layer: verdict.layer, checks: verdict.checks };
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
  k.done(`triaged: ${verdict.verdict} ${verdict.reason_code} at layer ${verdict.layer}, no model call`);
  ctx.outcome = verdict.verdict;
  ctx.reasonCode = verdict.reason_code;
}

/** The extraction from the recorded model answer; returns the claim, or nothing when the flow ends or stops here. */
function replayExtraction(ctx: Ctx, text: string, flow: Flow): Claim | undefined {
  const s = scope(ctx, "extraction");
  const ok = unused(ctx, "CLAIM_EXTRACTED").length > 0;
  const failed = unused(ctx, "CLAIM_EXTRACTION_FAILED").length > 0;
  if (ok && failed) {
    s.different("both CLAIM_EXTRACTED and CLAIM_EXTRACTION_FAILED are recorded");
    return undefined;
  }
  if (!ok && !failed) {
    s.incomplete("CLAIM_EXTRACTED or CLAIM_EXTRACTION_FAILED is missing: the claim text was never read");
    return undefined;
  }
  if (ok) {
    const f = enter(ctx, "extracted", "extraction");
    if (!f) return undefined;
    const { d, raw } = f.CLAIM_EXTRACTED;
    const again = claimFromExtraction(d.extracted, { text, now: flow.receivedAt });
    if (!again.ok) {
      s.different(`the recorded model answer no longer gives a claim (${again.code}: ${again.message})`);
      return undefined;
    }
    s.compare("the claim read from the recorded model answer", raw.claim, again.claim);
    s.expect(
      again.warnings.every((w) => d.warnings.includes(w)),
      `${label(f.CLAIM_EXTRACTED.r)} lacks warnings the extraction gives: ${again.warnings.join("; ")}`,
    );
    s.done("claim re-read from the recorded model answer");
    return again.claim;
  }
  const f = enter(ctx, "extraction_failed", "extraction");
  if (!f) return undefined;
  const { d } = f.CLAIM_EXTRACTION_FAILED;
  if (d.extracted) {
    const again = claimFromExtraction(d.extracted, { text, now: flow.receivedAt });
    if (again.ok)
      s.different("recorded as failed, but the recorded model answer gives a claim", d.reason_code, again.claim);
    else {
      s.compare("the extraction failure code", d.reason_code, again.code);
      s.expect(d.reason.includes(again.message), `the recorded reason does not state the failure: ${again.message}`);
    }
    s.done(`the recorded model answer fails again: ${d.reason_code}`);
  } else {
    s.expect(
      d.code !== undefined && d.reason_code === extractionFailureReasonCode(d.code),
      `${label(f.CLAIM_EXTRACTION_FAILED.r)} has neither the model's answer nor its error code, or names another reason than the code gives`,
    );
    s.done(`the model call failed (${d.code ?? "?"}): nothing to recompute`);
  }
  review(ctx, flow, d, f.CLAIM_NEEDS_REVIEW);
  return undefined;
}

/** The claim ended in NEEDS_REVIEW: CLAIM_NEEDS_REVIEW repeats its cause's code and reason. */
function review(
  ctx: Ctx,
  flow: Flow,
  cause: { reason_code: string; reason: string },
  found: Found<"CLAIM_NEEDS_REVIEW">,
  claim?: Claim,
): void {
  const s = scope(ctx, "review");
  s.compare(`${label(found.r)} reason_code`, found.d.reason_code, cause.reason_code);
  s.compare(`${label(found.r)} reason`, found.d.reason, cause.reason);
  s.compare(`${label(found.r)} review_id`, found.raw.review_id, reviewIdFor(flow.claimId));
  s.done(`NEEDS_REVIEW ${cause.reason_code}`);
  ctx.outcome = "NEEDS_REVIEW";
  ctx.reasonCode = cause.reason_code;
  humanReview(ctx, flow, "NEEDS_REVIEW", {
    reason_code: cause.reason_code,
    reason: cause.reason,
    orderId: claim?.order_id,
    amountEur: claim?.amount_eur,
  });
}

/**
 * The review a person is asked for (docs/reviews.md): REVIEW_REQUESTED names the claim's review with the cause, and
 * when a person decided, REVIEW_DECIDED (an APPROVE with its refund, reserved once for at most the proposal).
 */
function humanReview(
  ctx: Ctx,
  flow: Flow,
  origin: "ESCALATE" | "NEEDS_REVIEW",
  cause: {
    reason_code: string;
    reason: string;
    verdictId?: string;
    amountEur?: number | null | undefined;
    orderId?: string | null | undefined;
  },
): void {
  const s = scope(ctx, "review");
  const requested = enter(ctx, "review_requested", "review");
  if (!requested) return;
  const reviewId = reviewIdFor(flow.claimId);
  const { d, r } = requested.REVIEW_REQUESTED;
  s.compare(`${label(r)} review_id`, d.review_id, reviewId);
  s.compare(`${label(r)} origin`, d.origin, origin);
  s.compare(`${label(r)} reason_code`, d.reason_code, cause.reason_code);
  s.compare(`${label(r)} reason`, d.reason, cause.reason);
  s.compare(`${label(r)} order_id`, d.order_id, cause.orderId ?? undefined);
  s.compare(`${label(r)} amount_eur`, d.amount_eur, cause.amountEur ?? undefined);
  s.compare(`${label(r)} simulation_id`, d.simulation_id, flow.simulationId);
  const stored = ctx.opts.review;
  const first = firstApproval(ctx, reviewId);
  if (stored && stored.status === "PENDING" && unused(ctx, "REVIEW_DECIDED").length > 0)
    s.different(`REVIEW_DECIDED is recorded, but the stored review ${reviewId} is still PENDING`);
  if (unused(ctx, "REVIEW_DECIDED").length === 0 && (!stored || stored.status === "PENDING")) {
    s.done(
      first
        ? `review ${reviewId} requested (${origin}), first approval by ${first.reviewer}, awaiting a second reviewer`
        : `review ${reviewId} requested (${origin}), not decided yet`,
    );
    return;
  }
  const decided = enter(ctx, "review_decided", "review");
  if (!decided) return;
  const dd = decided.REVIEW_DECIDED.d;
  const at = label(decided.REVIEW_DECIDED.r);
  s.compare(`${at} review_id`, dd.review_id, reviewId);
  if (stored?.decision !== undefined) {
    s.compare(`${at} decision (the stored review's)`, dd.decision, stored.decision);
    s.compare(`${at} reviewer (the stored review's)`, dd.reviewer, stored.reviewer);
    s.compare(`${at} note (the stored review's)`, dd.note, stored.note);
  }
  s.expect(
    dd.decision !== "APPROVE" || origin === "ESCALATE",
    `${at} approves a review of origin ${origin}: only escalations can be approved`,
  );
  s.expect(
    dd.decision !== "RESUBMIT" || origin === "NEEDS_REVIEW",
    `${at} resubmits an escalation: only claims that need review can be resubmitted`,
  );
  s.compare(
    `${at} resubmitted_claim_id`,
    dd.resubmitted_claim_id,
    dd.decision === "RESUBMIT" ? resubmittedClaimIdFor(reviewId) : undefined,
  );
  s.compare(
    `${at} execution_id`,
    dd.execution_id,
    dd.decision === "APPROVE" ? approvalExecutionIdFor(reviewId) : undefined,
  );
  s.compare(`${at} simulation_id`, dd.simulation_id, flow.simulationId);
  s.expect(dd.reviewer.length > 0, `${at} names no reviewer`);
  s.expect(dd.decision !== "APPROVE" || dd.approvals !== undefined, `${at} approves without listing its approvals`);
  if (first) {
    s.expect(
      dd.decision !== "APPROVE" || dd.reviewer !== first.reviewer,
      `${at} completes a four-eyes approval by ${dd.reviewer}, who gave the first approval too`,
    );
    if (dd.decision === "APPROVE") {
      s.compare(`${at} approvals[0] (REVIEW_APPROVAL_RECORDED's)`, dd.approvals?.[0], {
        reviewer: first.reviewer,
        amount_eur: first.amount_eur,
        at: first.at,
      });
      const [a, b] = [parseCents(first.amount_eur), parseCents(dd.amount_eur)];
      s.expect(
        a.ok && b.ok && b.cents <= a.cents,
        `${at} approves ${String(dd.amount_eur)} EUR, more than the first approval's ${first.amount_eur} EUR`,
      );
    }
  } else if (dd.decision === "APPROVE" && dd.approvals !== undefined) {
    s.expect(
      dd.approvals.length === 1,
      `${at} lists ${dd.approvals.length} approvals, but no first approval is recorded`,
    );
  }
  if (dd.decision === "APPROVE" && dd.approvals !== undefined)
    s.compare(`${at} last approval`, dd.approvals.at(-1), {
      reviewer: dd.reviewer,
      amount_eur: dd.amount_eur,
      at: dd.decided_at,
    });
  if (dd.decision === "APPROVE") {
    const refund = enter(ctx, "refund_executed", "execution");
    if (!refund) return;
    const e = scope(ctx, "execution");
    const { raw, r: rr } = refund.CLAIM_REFUND_EXECUTED;
    const granted = parseCents(dd.amount_eur);
    const proposed = parseCents(cause.amountEur);
    e.compare(`${label(rr)} execution_id`, raw.execution_id, approvalExecutionIdFor(reviewId));
    e.compare(`${label(rr)} verdict_id`, raw.verdict_id, cause.verdictId);
    e.compare(`${label(rr)} order_id`, raw.order_id, cause.orderId);
    e.compare(`${label(rr)} amount_eur`, raw.amount_eur, dd.amount_eur);
    e.compare(`${label(rr)} amount_cents`, raw.amount_cents, granted.ok ? granted.cents : undefined);
    e.compare(`${label(rr)} claim_id`, raw.claim_id, flow.claimId);
    e.compare(`${label(rr)} dfid`, raw.dfid, flow.dfid);
    e.compare(`${label(rr)} approved_by`, raw.approved_by, dd.reviewer ?? "reviewer");
    e.expect(
      granted.ok && proposed.ok && granted.cents > 0 && granted.cents <= proposed.cents,
      `${at} approves ${String(dd.amount_eur)} EUR: more than 0 and at most the proposed ${String(cause.amountEur)} EUR`,
    );
    e.expect(typeof raw.approved_by === "string" && raw.approved_by.length > 0, `${label(rr)} names no approver`);
    e.done(`refund of ${String(dd.amount_eur)} EUR executed on a reviewer's approval`);
  }
  s.done(`review ${reviewId}: ${dd.decision}${dd.reviewer ? ` by ${dd.reviewer}` : ""}`);
  ctx.review = dd.decision;
}

/**
 * A four-eyes review's first approval (REVIEW_APPROVAL_RECORDED, at most one, of this review), taken from the
 * record; undefined when there is none.
 */
function firstApproval(ctx: Ctx, reviewId: string): ReplayDetails<"REVIEW_APPROVAL_RECORDED"> | undefined {
  const records = unused(ctx, "REVIEW_APPROVAL_RECORDED");
  if (records.length === 0) return undefined;
  const s = scope(ctx, "review");
  for (const r of records) ctx.used.add(r.n);
  if (records.length > 1)
    s.different(`REVIEW_APPROVAL_RECORDED is recorded ${records.length} times; a review has one first approval`);
  const [r] = records;
  if (r!.error !== undefined) {
    ctx.reported.add(r!.n);
    s.incomplete(`${label(r!)} cannot be read: ${r!.error}`);
    return undefined;
  }
  const d = r!.parsed as ReplayDetails<"REVIEW_APPROVAL_RECORDED">;
  s.compare(`${label(r!)} review_id`, d.review_id, reviewId);
  return d;
}

/** The crew from its recorded inbound events, each at its recorded instant; returns how it ended. */
function replayCrew(ctx: Ctx, claim: Claim, flow: Flow): CrewCompletedEvent | CrewFailedEvent | undefined {
  const f = enter(ctx, "crew", "crew");
  if (!f) return undefined;
  const s = scope(ctx, "crew");
  const { d, r, raw } = f.CREW_STARTED;
  const rootInput = claimsCrewInput(claim, flow.receivedAt);
  s.expect(
    d.crew_id === ctx.claimId && d.crew === CLAIMS_CREW_NAME,
    `${label(r)} starts crew ${d.crew_id} (${d.crew}), not ${ctx.claimId} (${CLAIMS_CREW_NAME})`,
  );
  s.compare(`${label(r)} root input (the claim as intake stored it)`, raw.root_input, rootInput);
  s.expect(
    d.now_ms === Date.parse(r.event.created_at),
    `${label(r)} now_ms ${d.now_ms} is not its own time ${r.event.created_at}`,
  );

  const graph = claimsCrewGraph(d.timeouts);
  const requested = new Map<string, AgentStepRequestedEvent>();
  const fixers: FixerInvokedEvent[] = [];
  let end: CrewCompletedEvent | CrewFailedEvent | undefined;
  const note = (events: readonly OutboundCrewEvent[]) => {
    for (const e of events) {
      if (e.type === "agent.step.requested") requested.set(e.correlationId, e);
      else if (e.type === "fixer.invoked") fixers.push(e);
      else if (e.type === "crew.completed" || e.type === "crew.failed") end = e;
    }
  };
  // The crew steps as the orchestrator steps it: snapshot in, events at the recorded instant, snapshot out.
  let snapshot: CrewSnapshot;
  try {
    const start = {
      type: "crew.start",
      crewId: ctx.claimId,
      input: rootInput,
      task: { description: `Decide refund claim ${ctx.claimId}` },
    };
    const started = stepCrewMany(initialCrewSnapshot({ crewId: ctx.claimId, graph }), [start], {
      graph,
      nowMs: d.now_ms,
    });
    snapshot = started.snapshot;
    note(started.results[0]!.events);
  } catch (e) {
    s.incomplete(`the crew cannot start from ${label(r)}: ${message(e)}`);
    return undefined;
  }

  const stepRecords = ctx.mine.filter(
    (x) =>
      x.event.event_type === "AGENT_STEP" ||
      (x.event.event_type === "AGENT_STEP_FAILED" && !("fixer" in x.event.details)),
  );
  for (const x of stepRecords) {
    ctx.used.add(x.n);
    if (x.error !== undefined) {
      ctx.reported.add(x.n);
      s.incomplete(`${label(x)} cannot be read, so the crew cannot be replayed past it: ${x.error}`);
      return undefined;
    }
    const step = x.parsed as { inbound: InboundCrewEvent; now_ms: number; caused: string[] };
    const inbound = step.inbound;
    const what = `${label(x)} (${inbound.type}${"correlationId" in inbound ? ` ${inbound.correlationId}` : ""})`;
    s.expect(
      (inbound.type === "agent.step.completed") === (x.event.event_type === "AGENT_STEP"),
      `${what} is recorded as ${x.event.event_type}`,
    );
    s.expect(
      step.now_ms === Date.parse(x.event.created_at),
      `${what} now_ms ${step.now_ms} is not its own time ${x.event.created_at}`,
    );
    let out: OutboundCrewEvent[];
    try {
      const stepped = stepCrewMany(snapshot, [inbound], { graph, nowMs: step.now_ms });
      snapshot = stepped.snapshot;
      out = stepped.results[0]!.events;
    } catch (e) {
      s.incomplete(`${what} cannot be delivered to the crew: ${message(e)}`);
      return undefined;
    }
    s.compare(
      `what ${what} caused`,
      step.caused,
      out.map((e) => e.type),
    );
    if (inbound.type === "agent.step.failed" && out.some((e) => e.type === "crew.failed"))
      ctx.crewFailureCause = inbound.error;
    if (inbound.type === "agent.step.completed" || inbound.type === "agent.step.failed") {
      const request = requested.get(inbound.correlationId);
      checkLlmCall(ctx, s, what, inbound, request);
      checkSelfCheckRepair(ctx, s, what, inbound.correlationId, request, claim, flow);
      if (inbound.type === "agent.step.completed" && request?.phaseIndex === 0) {
        // The worker copies the claim the analyst assessed into its answer; the decision maker reads it from there.
        const analyst = AnalystOutputSchema.safeParse(inbound.output);
        s.expect(
          analyst.success && same({ claim: analyst.data.claim, received_at: analyst.data.received_at }, rootInput),
          `${what}: the analyst's answer does not carry the claim it was given`,
        );
      }
    }
    note(out);
  }

  // LLM calls whose answer never counted (lost, late or redelivered) still belong to a requested step; so does the
  // self-check repair round such a call made (each checked like the counted step's).
  for (const call of unused(ctx, "LLM_CALL")) {
    const c = call.parsed as ReplayDetails<"LLM_CALL"> | undefined;
    const request = c ? requested.get(c.correlation_id) : undefined;
    if (c && request && c.role === request.role && c.agent_id === request.agentId) ctx.used.add(call.n);
  }
  for (const x of unused(ctx, "CLAIMS_SELF_CHECK_FAILED").filter(
    (r) => r.event.state === "RUNNING" && typeof r.event.details.correlation_id === "string",
  )) {
    const request = requested.get(String(x.event.details.correlation_id));
    if (request)
      checkRepairEvent(ctx, s, `the step ${request.correlationId} (its answer did not count)`, x, request, claim, flow);
  }

  const fixerRecords = ctx.mine.filter((x) => x.event.event_type === "AGENT_STEP_FAILED" && "fixer" in x.event.details);
  for (let i = 0; i < Math.max(fixerRecords.length, fixers.length); i++) {
    const x = fixerRecords[i];
    const e = fixers[i];
    if (x) ctx.used.add(x.n);
    if (!x)
      s.incomplete(`the crew hands ${e!.failedRole} to the fixer (${e!.reason}), but no AGENT_STEP_FAILED records it`);
    else if (x.error !== undefined) {
      ctx.reported.add(x.n);
      s.incomplete(`${label(x)} cannot be read: ${x.error}`);
    } else if (!e)
      s.different(`${label(x)} records a fixer stand-in the replayed crew does not make`, x.event.details.fixer);
    else s.compare(`${label(x)} fixer stand-in`, x.event.details.fixer, e);
  }

  if (!end) {
    s.incomplete(
      `the crew does not finish from the ${stepRecords.length} recorded steps: the claim is still running, or a step's event is missing`,
    );
    return undefined;
  }
  s.done(`${stepRecords.length} recorded steps replayed: ${end.type}`);
  return end;
}

/** An answered step was an LLM call the worker recorded: same correlation, role and agent, whether it succeeded, and its error. */
function checkLlmCall(
  ctx: Ctx,
  s: ReturnType<typeof scope>,
  what: string,
  inbound: AgentStepCompletedEvent | AgentStepFailedEvent,
  request: AgentStepRequestedEvent | undefined,
): void {
  const { correlationId } = inbound;
  const ok = inbound.type === "agent.step.completed";
  const calls = ctx.mine.filter(
    (x) =>
      x.event.event_type === "LLM_CALL" &&
      (x.parsed as ReplayDetails<"LLM_CALL"> | undefined)?.correlation_id === correlationId,
  );
  if (calls.length === 0) {
    s.incomplete(`${what} answers a step, but no LLM_CALL records the call`);
    return;
  }
  for (const c of calls) ctx.used.add(c.n);
  const matching = calls.filter((c) => {
    const d = c.parsed as ReplayDetails<"LLM_CALL">;
    return (
      (request === undefined || (d.role === request.role && d.agent_id === request.agentId)) &&
      d.ok === ok &&
      same(d.error, ok ? undefined : (inbound as AgentStepFailedEvent).error)
    );
  });
  s.expect(request !== undefined, `${what} answers a step the replayed crew never requested`);
  s.expect(
    matching.length > 0,
    `${what}: its LLM_CALL (${calls.map(label).join(", ")}) names another role or agent, says ok=${String(!ok)}, or records another error`,
  );
}

/**
 * A Decision Maker whose first proposal failed the self-check got one repair round in its own step
 * (docs/kernel.md): its LLM_CALL says `calls: 2`, and a CLAIMS_SELF_CHECK_FAILED recorded while the claim
 * was RUNNING holds the first proposal, which must fail the self-check again with the recorded failures.
 * A step delivered more than once (a redelivery, two workers racing) may have made a repair round in more
 * than one delivery, and a delivery that died between its two records left its repair event without its
 * LLM_CALL: every repair event recorded is checked, and a repair round an LLM_CALL records must have one.
 */
function checkSelfCheckRepair(
  ctx: Ctx,
  s: ReturnType<typeof scope>,
  what: string,
  correlationId: string,
  request: AgentStepRequestedEvent | undefined,
  claim: Claim,
  flow: Flow,
): void {
  const repairs = ctx.mine.filter(
    (x) =>
      x.event.event_type === "CLAIMS_SELF_CHECK_FAILED" &&
      x.event.state === "RUNNING" &&
      x.event.details.correlation_id === correlationId,
  );
  const calls = ctx.mine.filter(
    (x) =>
      x.event.event_type === "LLM_CALL" &&
      (x.parsed as ReplayDetails<"LLM_CALL"> | undefined)?.correlation_id === correlationId,
  );
  const repaired = calls.some((x) => (x.parsed as ReplayDetails<"LLM_CALL">).calls === 2);
  if (repaired && repairs.length === 0)
    s.incomplete(`CLAIMS_SELF_CHECK_FAILED is missing: ${what}'s LLM_CALL records a self-check repair round`);
  else {
    // A delivery records its repair round and its LLM_CALL at one instant, the repair first: an LLM_CALL saying
    // `calls: 2` has its repair event beside it.
    for (const c of calls) {
      if (
        (c.parsed as ReplayDetails<"LLM_CALL">).calls === 2 &&
        !repairs.some((x) => x.event.created_at === c.event.created_at)
      )
        s.incomplete(
          `${label(c)} records a self-check repair round, but no CLAIMS_SELF_CHECK_FAILED was recorded with it`,
        );
    }
  }
  for (const x of repairs) checkRepairEvent(ctx, s, what, x, request, claim, flow);
}

/**
 * One recorded self-check repair round: the Decision Maker's, its first proposal failing the self-check as recorded,
 * and the LLM_CALL recorded with it (same instant), if its delivery got that far, says `calls: 2`.
 */
function checkRepairEvent(
  ctx: Ctx,
  s: ReturnType<typeof scope>,
  what: string,
  x: Recorded,
  request: AgentStepRequestedEvent | undefined,
  claim: Claim,
  flow: Flow,
): void {
  ctx.used.add(x.n);
  if (x.error !== undefined) {
    ctx.reported.add(x.n);
    s.incomplete(`${label(x)} cannot be read: ${x.error}`);
    return;
  }
  const beside = ctx.mine.filter(
    (c) =>
      c.event.event_type === "LLM_CALL" &&
      c.event.created_at === x.event.created_at &&
      (c.parsed as ReplayDetails<"LLM_CALL"> | undefined)?.correlation_id === x.event.details.correlation_id,
  );
  s.expect(
    beside.length === 0 || beside.some((c) => (c.parsed as ReplayDetails<"LLM_CALL">).calls === 2),
    `${label(x)} records a self-check repair round, but the LLM_CALL recorded with it (${beside.map(label).join(", ")}) says the step made one call`,
  );
  const d = x.parsed as ReplayDetails<"CLAIMS_SELF_CHECK_FAILED">;
  s.expect(
    request !== undefined && x.event.details.role === request.role && request.role === CLAIMS_ROLES.decision,
    `${label(x)}: a self-check repair round belongs to the Decision Maker's step, not to ${String(x.event.details.role)}`,
  );
  s.expect(d.reason_code === "CLAIMS_SELF_CHECK_FAILED", `${label(x)} reason_code is ${d.reason_code}`);
  // Without a responsibility contract the self-check step reports it; nothing more to recompute here.
  const responsibility = ctx.opts.responsibility ?? recordedResponsibility(ctx, flow);
  if (!responsibility) return;
  const check = selfCheck(d.output, responsibility, claim);
  if (!s.expect(!check.ok, `${what}: ${label(x)} records a self-check failure, but its proposal passes`) || check.ok)
    return;
  s.compare(`${label(x)} failures (the step's first proposal)`, d.failures, check.failures);
  s.compare(`${label(x)} reason`, d.reason, selfCheckRepairReason(check.failures));
}

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

function crewFailed(
  ctx: Ctx,
  flow: Flow,
  claim: Claim,
  expected: { reason_code: string; states?: string; code?: string; role?: string | undefined; output?: unknown },
  what: string,
): void {
  if (!branch(ctx, "crew", "crew_failed", AFTER_CREW, what)) return;
  const f = enter(ctx, "crew_failed", "crew");
  if (!f) return;
  const s = scope(ctx, "crew");
  const { d, raw, r } = f.CREW_FAILED;
  s.compare(`${label(r)} reason_code`, d.reason_code, expected.reason_code);
  if (expected.states !== undefined)
    s.expect(d.reason.includes(expected.states), `${label(r)} reason does not state the crew's: ${expected.states}`);
  if (expected.code !== undefined) s.compare(`${label(r)} code`, raw.code, expected.code);
  if (expected.role !== undefined) s.compare(`${label(r)} role`, raw.role, expected.role);
  if ("output" in expected) s.compare(`${label(r)} output`, raw.output, expected.output);
  s.done(`${what}: ${expected.reason_code}`);
  review(ctx, flow, d, f.CLAIM_NEEDS_REVIEW, claim);
}

function recordedResponsibility(ctx: Ctx, flow: Flow): ResponsibilityContract | undefined {
  const submitted = unused(ctx, "PROPOSAL_SUBMITTED")[0]?.parsed as ReplayDetails<"PROPOSAL_SUBMITTED"> | undefined;
  if (submitted) return submitted.kernel_inputs.responsibility;
  if (flow.simulationId === undefined) return undefined;
  for (const e of ctx.all) {
    if (e.event_type !== "SIMULATION_START" || e.details.simulation_id !== flow.simulationId) continue;
    const start = SimulationStartDetailsSchema.safeParse(e.details);
    if (start.success) return start.data.agent.responsibility;
  }
  return undefined;
}

/** The proposal as it crossed the wall, rebuilt from AGENT_DECISION and the crew's output, checked against the record. */
function rebuiltProposal(
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
function decided(ctx: Ctx, output: RefundProposalOutput, claim: Claim, flow: Flow): void {
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
  try {
    const kernelInput = {
      ...inputs,
      proposal,
      order: inputs.order ?? undefined,
      ledgerEntry: inputs.ledgerEntry ?? undefined,
      customerWindow: inputs.customerWindow ?? undefined,
    } as unknown as DecideClaimInput;
    verdict = decideClaim(kernelInput);
    const record = buildVerdictRecord({
      verdict,
      policy: { contract: kernelInput.contract, responsibility: kernelInput.responsibility },
      proposal,
      claimId: flow.claimId,
      dfid: flow.dfid,
      decidedAt: kernelInput.decidedAt,
      ...(flow.simulationId === undefined ? {} : { simulationId: flow.simulationId }),
    });
    // A recorded shadow verdict is decided again under the shadow policy recorded beside it.
    const shadowPolicy = f.KERNEL_VERDICT.d.shadow?.policy;
    const shadow = shadowPolicy ? decideShadow(kernelInput, verdict, shadowPolicy) : undefined;
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
    const proposed = parseCents(proposal.params.amount_eur);
    k.expect(
      proposed.ok && d.reason.includes(`Refund of ${formatEur(proposed.cents)} EUR not reserved`),
      `${label(note)} reason does not name the refund of the proposal`,
    );
    k.expect(d.code !== "ALREADY_REFUNDED_FOR_CLAIM", `${label(note)}: a lost race names ${d.code}`);
  }
  if (verdict.verdict === "ACCEPT")
    execution(ctx, verdict, proposal, verdictRecord.d.verdict_id, submitted.d.kernel_inputs.order?.amount, flow);
  if (verdict.verdict === "ESCALATE") {
    humanReview(ctx, flow, "ESCALATE", {
      reason_code: verdict.reason_code,
      reason: verdict.reason,
      verdictId: verdictRecord.d.verdict_id,
      amountEur: verdictRecord.d.amount_eur,
      orderId: verdictRecord.d.order_id ?? claim.order_id,
    });
  }
}

/** An ACCEPT's refund: the ledger reserved exactly the planned amount, or refused it with a ledger code. */
function execution(
  ctx: Ctx,
  verdict: ClaimVerdict,
  proposal: PolicyProposal,
  verdictId: string,
  orderAmount: number | undefined,
  flow: Flow,
): void {
  const s = scope(ctx, "execution");
  const plan = planExecution(verdict, proposal, flow.claimId).find((e) => e.type === "refund.reserve");
  if (!plan || plan.type !== "refund.reserve") {
    s.incomplete("the ACCEPT plans no refund");
    return;
  }
  if (unused(ctx, "CLAIM_REFUND_EXECUTED").length === 0) {
    s.incomplete("CLAIM_REFUND_EXECUTED is missing: an ACCEPT is announced only with its refund reserved");
    return;
  }
  {
    const f = enter(ctx, "refund_executed", "execution");
    if (!f) return;
    const { d, raw, r } = f.CLAIM_REFUND_EXECUTED;
    const expected = {
      execution_id: executionIdFor(verdictId),
      claim_id: flow.claimId,
      dfid: flow.dfid,
      order_id: plan.order_id,
      amount_eur: plan.amount_eur,
      amount_cents: plan.amount_cents,
      verdict_id: verdictId,
    };
    const recorded = Object.fromEntries(Object.keys(expected).map((key) => [key, raw[key]]));
    s.compare(`${label(r)}`, recorded, expected);
    const ledger = d.ledger_after;
    if (!ledger) {
      s.incomplete(`${label(r)} has no ledger_after: the kernel records the entry after its reservation`);
      return;
    }
    let consistent = true;
    try {
      assertLedgerEntry(ledger);
    } catch (e) {
      consistent = s.expect(false, `${label(r)} ledger_after is inconsistent: ${message(e)}`);
    }
    const orderCents = orderAmount === undefined ? undefined : parseCents(orderAmount);
    if (consistent) {
      s.expect(
        ledger.order_id === plan.order_id && ledger.claims[flow.claimId] === plan.amount_cents,
        `${label(r)} ledger_after does not hold this claim's ${formatEur(plan.amount_cents)} EUR on ${plan.order_id}`,
      );
      s.expect(
        orderCents?.ok === true && ledger.refunded_cents <= orderCents.cents,
        `${label(r)} ledger_after refunds more than the order`,
      );
    }
    s.done(`refund of ${formatEur(plan.amount_cents)} EUR on ${plan.order_id} executed`);
    return;
  }
}

/** Every recorded event is readable, of the claim's flow, and (when replay reached the end) on its path. */
/**
 * The outage hold's notes (docs/llm.md): a claim may have waited for the model, any number of times, between any
 * two steps. They decide nothing, so replay checks that each is a hold (since ≤ recorded ≤ until), and that each
 * CLAIM_RESUMED ends a recorded hold and says how long it lasted. It cannot require a CLAIM_RESUMED for each hold: a
 * late copy of a step that was answered already may find the model down and record a hold no answer ends.
 */
function holdNotes(ctx: Ctx): void {
  const s = scope(ctx, "audit");
  const held = unused(ctx, "CLAIM_HELD").filter((r) => r.parsed !== undefined);
  const since = new Set<string>();
  for (const r of held) {
    ctx.used.add(r.n);
    const d = r.parsed as ReplayDetails<"CLAIM_HELD">;
    since.add(d.since);
    s.expect(
      Date.parse(d.since) <= Date.parse(r.event.created_at) && Date.parse(d.until) > Date.parse(d.since),
      `${label(r)} holds from ${d.since} until ${d.until}, recorded at ${r.event.created_at}: not a hold`,
    );
  }
  for (const r of unused(ctx, "CLAIM_RESUMED").filter((x) => x.parsed !== undefined)) {
    ctx.used.add(r.n);
    const d = r.parsed as ReplayDetails<"CLAIM_RESUMED">;
    s.expect(since.has(d.held_since), `${label(r)} ends a hold since ${d.held_since} that no CLAIM_HELD records`);
    s.expect(
      d.waited_ms === Date.parse(r.event.created_at) - Date.parse(d.held_since),
      `${label(r)} says it waited ${d.waited_ms} ms, from ${d.held_since} to ${r.event.created_at}`,
    );
  }
}

function auditCheck(ctx: Ctx, flow: Flow | undefined): void {
  const s = scope(ctx, "audit");
  const finished = ctx.outcome !== undefined && !ctx.steps.some((x) => x.status === "INCOMPLETE");
  for (const r of ctx.mine) {
    if (!isReplayableKind(r.event.event_type))
      s.incomplete(`${label(r)}: replay cannot read ${r.event.event_type} events`);
    else if (r.error !== undefined) {
      if (!ctx.reported.has(r.n)) s.incomplete(`${label(r)} cannot be read: ${r.error}`);
    } else if (flow && r.event.dfid !== flow.dfid)
      s.different(`${label(r)} belongs to flow ${r.event.dfid}, the claim's is ${flow.dfid}`);
    else if (finished && !ctx.used.has(r.n))
      s.different(`${label(r)} is not on this claim's path (${ctx.path.join(" → ")})`);
  }
  if (finished) s.done(`all ${ctx.mine.length} recorded events accounted for`);
}
