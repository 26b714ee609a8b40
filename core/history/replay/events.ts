// What replay expects to find in a claim's audit: the events each stage of a decision flow records
// (a small table: adding an event kind is one entry in STAGE_EVENTS and one in REPLAY_DETAILS), and the
// kinds it reads, each parsed with its one schema from audit-events.ts.
import type { AuditEventType } from "../../integrity/audit.ts";
import { AUDIT_EVENTS } from "../audit-events.ts";
import type { AuditDetails } from "../audit-events.ts";

/**
 * The audit events each stage of a claim's decision flow records exactly once. A claim's path is a
 * sequence of stages (see REPLAY_PATHS); replay requires every event of every stage on its path and
 * refuses any other. Per crew step there are also AGENT_STEP / AGENT_STEP_FAILED (one per inbound
 * event the crew acted on, one per fixer stand-in) and LLM_CALL (at least one per answered step):
 * the crew replay counts those itself.
 */
export const STAGE_EVENTS = {
  /** Intake stored the claim. */
  received: ["CLAIM_RECEIVED"],
  /** Free text: the extractor produced a structured claim. */
  extracted: ["CLAIM_EXTRACTED"],
  /** Free text: the extractor could not, so the claim went to a person. */
  extraction_failed: ["CLAIM_EXTRACTION_FAILED", "CLAIM_NEEDS_REVIEW"],
  /** Triage: the kernel's rules rejected the claim itself, without the crew (docs/kernel.md). */
  triaged: ["CLAIM_TRIAGED", "KERNEL_VERDICT"],
  /** The crew started on the structured claim. */
  crew: ["CREW_STARTED"],
  /** The crew failed, or its output is not a refund proposal: NEEDS_REVIEW. */
  crew_failed: ["CREW_FAILED", "CLAIM_NEEDS_REVIEW"],
  /** The agent's self-check refused its own proposal: NEEDS_REVIEW. */
  self_check_failed: ["CLAIMS_SELF_CHECK_FAILED", "CLAIM_NEEDS_REVIEW"],
  /** The proposal crossed the wall and the kernel decided (ACCEPT, REJECT or ESCALATE). */
  decided: ["AGENT_DECISION", "PROPOSAL_SUBMITTED", "KERNEL_VERDICT"],
  /** An ACCEPT whose refund the ledger reserved. */
  refund_executed: ["CLAIM_REFUND_EXECUTED"],
  /** A person is asked to decide: an ESCALATE verdict or a claim that ended in NEEDS_REVIEW opened its review. */
  review_requested: ["REVIEW_REQUESTED"],
  /** A person decided the review (an APPROVE also records its refund, CLAIM_REFUND_EXECUTED with approved_by). */
  review_decided: ["REVIEW_DECIDED"],
  /** The kernel could not use the order's data: the proposal crossed the wall, the claim went to a person. */
  order_data_invalid: ["AGENT_DECISION", "CLAIM_NEEDS_REVIEW"],
} as const satisfies Record<string, readonly AuditEventType[]>;

/** A stage of a claim's decision flow. */
export type ReplayStage = keyof typeof STAGE_EVENTS;

/** How a review ends: still pending, decided (DENY, RESUBMIT), or approved with its refund. */
const REVIEW_ENDINGS: Record<string, readonly ReplayStage[]> = {
  "review pending": ["review_requested"],
  "review denied or resubmitted": ["review_requested", "review_decided"],
  "review approved": ["review_requested", "review_decided", "refund_executed"],
};

/** Every ending that hands the claim to a person, with each way its review can end. */
const withReview = (
  name: string,
  stages: readonly ReplayStage[],
  endings = REVIEW_ENDINGS,
): [string, readonly ReplayStage[]][] => Object.entries(endings).map(([r, s]) => [`${name}, ${r}`, [...stages, ...s]]);

/** Reviews of NEEDS_REVIEW claims cannot be approved (only denied or resubmitted). */
const { "review approved": _approved, ...NEEDS_REVIEW_ENDINGS } = REVIEW_ENDINGS;

/**
 * How a flow ends once its crew has started, by the stages after `crew`. A lost reservation race
 * records CLAIM_REFUND_NOT_EXECUTED notes before the final decision (0 or more, read with `decided`).
 */
const CREW_ENDINGS: Record<string, readonly ReplayStage[]> = Object.fromEntries([
  ["ACCEPT, refund executed", ["decided", "refund_executed"]],
  ["REJECT", ["decided"]],
  ...withReview("ESCALATE", ["decided"]),
  ...withReview("crew failed: NEEDS_REVIEW", ["crew_failed"], NEEDS_REVIEW_ENDINGS),
  ...withReview("self-check failed: NEEDS_REVIEW", ["self_check_failed"], NEEDS_REVIEW_ENDINGS),
  ...withReview("order data invalid: NEEDS_REVIEW", ["order_data_invalid"], NEEDS_REVIEW_ENDINGS),
]);

/** Every path a final claim can take, by the stages it passes (free text adds extraction before the crew). */
export const REPLAY_PATHS: Readonly<Record<string, readonly ReplayStage[]>> = {
  ...Object.fromEntries(
    Object.entries(CREW_ENDINGS).flatMap(([name, end]) => [
      [`structured, ${name}`, ["received", "crew", ...end]],
      [`free text, ${name}`, ["received", "extracted", "crew", ...end]],
    ]),
  ),
  "structured, triaged: REJECT": ["received", "triaged"],
  "free text, triaged: REJECT": ["received", "extracted", "triaged"],
  ...Object.fromEntries(
    withReview("free text, extraction failed: NEEDS_REVIEW", ["received", "extraction_failed"], NEEDS_REVIEW_ENDINGS),
  ),
};

/** The audit event kinds replay reads, each with its one schema (AUDIT_EVENTS). A kind missing here cannot be
 * replayed, so a claim that has one is INCOMPLETE until it is added. */
export const REPLAY_DETAILS = {
  CLAIM_RECEIVED: AUDIT_EVENTS.CLAIM_RECEIVED,
  CLAIM_EXTRACTED: AUDIT_EVENTS.CLAIM_EXTRACTED,
  CLAIM_EXTRACTION_FAILED: AUDIT_EVENTS.CLAIM_EXTRACTION_FAILED,
  CLAIM_TRIAGED: AUDIT_EVENTS.CLAIM_TRIAGED,
  CREW_STARTED: AUDIT_EVENTS.CREW_STARTED,
  AGENT_STEP: AUDIT_EVENTS.AGENT_STEP,
  AGENT_STEP_FAILED: AUDIT_EVENTS.AGENT_STEP_FAILED,
  LLM_CALL: AUDIT_EVENTS.LLM_CALL,
  AGENT_DECISION: AUDIT_EVENTS.AGENT_DECISION,
  CREW_FAILED: AUDIT_EVENTS.CREW_FAILED,
  CLAIMS_SELF_CHECK_FAILED: AUDIT_EVENTS.CLAIMS_SELF_CHECK_FAILED,
  PROPOSAL_SUBMITTED: AUDIT_EVENTS.PROPOSAL_SUBMITTED,
  KERNEL_VERDICT: AUDIT_EVENTS.KERNEL_VERDICT,
  CLAIM_REFUND_EXECUTED: AUDIT_EVENTS.CLAIM_REFUND_EXECUTED,
  CLAIM_REFUND_NOT_EXECUTED: AUDIT_EVENTS.CLAIM_REFUND_NOT_EXECUTED,
  CLAIM_NEEDS_REVIEW: AUDIT_EVENTS.CLAIM_NEEDS_REVIEW,
  REVIEW_REQUESTED: AUDIT_EVENTS.REVIEW_REQUESTED,
  REVIEW_DECIDED: AUDIT_EVENTS.REVIEW_DECIDED,
  REVIEW_APPROVAL_RECORDED: AUDIT_EVENTS.REVIEW_APPROVAL_RECORDED,
  CLAIM_HELD: AUDIT_EVENTS.CLAIM_HELD,
  CLAIM_RESUMED: AUDIT_EVENTS.CLAIM_RESUMED,
  /** Read beside the ACCEPT's reservation: the return its policy asks (core/history/replay/returns.ts). */
  RETURN_REQUESTED: AUDIT_EVENTS.RETURN_REQUESTED,
} as const satisfies Partial<typeof AUDIT_EVENTS>;

/** An audit event kind replay can read. */
export type ReplayableKind = keyof typeof REPLAY_DETAILS;

/** The parsed details of one replayable kind. */
export type ReplayDetails<K extends ReplayableKind> = AuditDetails<K>;

/** Whether replay knows how to read events of `kind`. */
export function isReplayableKind(kind: string): kind is ReplayableKind {
  return Object.hasOwn(REPLAY_DETAILS, kind);
}

/**
 * Details replay does not verify, because nothing recomputes them: what a model call cost (and whether the patterns
 * read a free-text claim without one), the compact crew's analysis and the batch label. (Values it takes as recorded inputs — the crew's timeouts, the kernel's order, ledger,
 * contracts and registry, a refused refund's ledger code, the analyst's prose — are verified only as
 * far as the decision depends on them.)
 */
export const UNVERIFIED_DETAILS = {
  CLAIM_RECEIVED: ["label"],
  CLAIM_EXTRACTED: ["model", "attempts", "usage", "task", "source"],
  CLAIM_EXTRACTION_FAILED: ["model", "attempts", "usage", "task"],
  LLM_CALL: ["model", "attempts", "usage", "duration_ms", "analysis"],
} as const satisfies Partial<Record<ReplayableKind, readonly string[]>>;
