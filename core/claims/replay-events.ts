// What replay expects to find in a claim's audit: the events each stage of a decision flow records
// (a small table: adding an event kind is one entry in STAGE_EVENTS and one schema in REPLAY_DETAILS)
// and the shape of each kind's details, as far as replay reads them.
import * as z from "zod";
import {
  AgentStepCompletedEventSchema,
  FixerInvokedEventSchema,
  InboundCrewEventSchema,
  StepErrorSchema,
} from "../crew/index.ts";
import { ClaimsContractSchema, OrderSchema, ResponsibilityContractSchema } from "../integrity/contracts.ts";
import type { AuditEventType } from "../integrity/audit.ts";
import { LedgerEntrySchema } from "../integrity/ledger.ts";
import type { ReserveErrorCode } from "../integrity/ledger.ts";
import { ClaimInputSchema, ClaimSchema } from "./claim.ts";
import { ClaimsCrewInputSchema } from "./crew.ts";
import {
  ClaimVerdictDetailSchema,
  RefundExecutedDetailSchema,
  ReviewDecidedDetailSchema,
  ReviewRequestedDetailSchema,
} from "./events.ts";
import { ClaimExtractionOutputSchema, RefundProposalOutputSchema } from "./proposal-output.ts";

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
  ...Object.fromEntries(
    withReview("free text, extraction failed: NEEDS_REVIEW", ["received", "extraction_failed"], NEEDS_REVIEW_ENDINGS),
  ),
};

/** Every code a reservation can be refused with (a Record, so a new ledger code must be added here). */
const RESERVE_ERROR_CODES: Record<ReserveErrorCode, true> = {
  ALREADY_REFUNDED_FOR_CLAIM: true,
  EXCEEDS_ORDER_AMOUNT: true,
  EXCEEDS_AUTOMATIC_LIMIT: true,
  REVIEW_PENDING_ON_ORDER: true,
};

const ReviewCause = { reason_code: z.string().min(1), reason: z.string() };
const StepRecord = { now_ms: z.number(), caused: z.array(z.string()) };

/** The kernel's inputs as PROPOSAL_SUBMITTED records them (the proposal is replayed, so any value). */
const RecordedKernelInputsSchema = z.looseObject({
  proposal: z.unknown(),
  claim: ClaimSchema,
  contract: ClaimsContractSchema,
  responsibility: ResponsibilityContractSchema,
  registry: z.object({
    agents: z.record(
      z.string(),
      z.object({
        agent_id: z.string(),
        version: z.string(),
        contract: ResponsibilityContractSchema,
        status: z.enum(["ACTIVE", "REVOKED"]),
      }),
    ),
  }),
  order: OrderSchema.nullable(),
  ledgerEntry: LedgerEntrySchema.nullable(),
  receivedAt: z.string(),
  decidedAt: z.string(),
  claimId: z.string(),
  dfid: z.string(),
});

/**
 * The details each audit event kind of a claim must carry for replay to read it. A kind missing here
 * cannot be replayed, so a claim that has one is INCOMPLETE until it is added.
 */
export const REPLAY_DETAILS = {
  CLAIM_RECEIVED: z.looseObject({
    input_kind: z.enum(["claim", "claim_text"]),
    input: ClaimInputSchema,
    received_at: z.string(),
  }),
  CLAIM_EXTRACTED: z.looseObject({
    extracted: ClaimExtractionOutputSchema,
    claim: ClaimSchema,
    warnings: z.array(z.string()),
  }),
  CLAIM_EXTRACTION_FAILED: z.looseObject({
    ...ReviewCause,
    extracted: ClaimExtractionOutputSchema.optional(),
    code: z.string().optional(),
  }),
  CREW_STARTED: z.looseObject({
    crew_id: z.string(),
    root_input: ClaimsCrewInputSchema,
    crew: z.string(),
    now_ms: z.number(),
    timeouts: z.object({ analystMs: z.number(), decisionMs: z.number(), fixerMs: z.number() }),
  }),
  AGENT_STEP: z.looseObject({ inbound: AgentStepCompletedEventSchema, ...StepRecord }),
  AGENT_STEP_FAILED: z.union([
    z.looseObject({ inbound: InboundCrewEventSchema, ...StepRecord }),
    z.looseObject({ fixer: FixerInvokedEventSchema }),
  ]),
  LLM_CALL: z.looseObject({
    role: z.string(),
    agent_id: z.string(),
    correlation_id: z.string(),
    ok: z.boolean(),
    error: StepErrorSchema.optional(),
    calls: z.number().int().positive().optional(),
  }),
  AGENT_DECISION: z.looseObject({
    output: RefundProposalOutputSchema,
    proposal: z.looseObject({
      dfid: z.string(),
      agent_id: z.string(),
      created_at: z.string(),
      valid_for_ms: z.number(),
    }),
    self_check: z.literal("passed"),
  }),
  CREW_FAILED: z.looseObject({
    ...ReviewCause,
    code: z.string().optional(),
    role: z.string().optional(),
    output: z.unknown().optional(),
  }),
  CLAIMS_SELF_CHECK_FAILED: z.looseObject({
    ...ReviewCause,
    output: RefundProposalOutputSchema,
    failures: z.array(z.object({ check: z.string(), message: z.string() })),
  }),
  PROPOSAL_SUBMITTED: z.looseObject({
    kernel_inputs: RecordedKernelInputsSchema,
    lost_races: z.number().int().positive().optional(),
  }),
  KERNEL_VERDICT: z.looseObject({ ...ClaimVerdictDetailSchema.shape, layer: z.number(), checks: z.array(z.unknown()) }),
  // ledger_after: the kernel's ACCEPT records the entry after its reservation; a reviewer's approval does not.
  CLAIM_REFUND_EXECUTED: z.looseObject({
    ...RefundExecutedDetailSchema.shape,
    amount_cents: z.number().int().positive(),
    ledger_after: LedgerEntrySchema.optional(),
  }),
  CLAIM_REFUND_NOT_EXECUTED: z.looseObject({
    verdict_id: z.string(),
    code: z.enum(Object.keys(RESERVE_ERROR_CODES) as [ReserveErrorCode, ...ReserveErrorCode[]]),
    reason: z.string(),
  }),
  CLAIM_NEEDS_REVIEW: z.looseObject(ReviewCause),
  REVIEW_REQUESTED: z.looseObject({ ...ReviewRequestedDetailSchema.shape }),
  REVIEW_DECIDED: z.looseObject({ ...ReviewDecidedDetailSchema.shape }),
} as const satisfies Partial<Record<AuditEventType, z.ZodType>>;

/** An audit event kind replay can read. */
export type ReplayableKind = keyof typeof REPLAY_DETAILS;

/** The parsed details of one replayable kind. */
export type ReplayDetails<K extends ReplayableKind> = z.infer<(typeof REPLAY_DETAILS)[K]>;

/** Whether replay knows how to read events of `kind`. */
export function isReplayableKind(kind: string): kind is ReplayableKind {
  return Object.hasOwn(REPLAY_DETAILS, kind);
}

/**
 * Details replay does not verify, because nothing recomputes them: what a model call cost and the
 * batch label. (Values it takes as recorded inputs — the crew's timeouts, the kernel's order, ledger,
 * contracts and registry, a refused refund's ledger code, the analyst's prose — are verified only as
 * far as the decision depends on them.)
 */
export const UNVERIFIED_DETAILS = {
  CLAIM_RECEIVED: ["label"],
  CLAIM_EXTRACTED: ["model", "attempts", "usage", "task"],
  CLAIM_EXTRACTION_FAILED: ["model", "attempts", "usage", "task"],
  LLM_CALL: ["model", "attempts", "usage", "duration_ms"],
} as const satisfies Partial<Record<ReplayableKind, readonly string[]>>;
