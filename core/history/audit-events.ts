// Every audit event a claim or a batch run records, defined once: its type and the zod schema of its details.
// Producers are typed by these schemas (pipeline/decide/audit.ts `claimAudit`, `auditEvent` below), and replay,
// the report and the CLI read details by parsing with the same ones. Objects strip fields they do not name, so a
// recorded event with a field since dropped still parses; every field a producer writes is named here.
import * as z from "zod";
import {
  AgentStepCompletedEventSchema,
  FixerInvokedEventSchema,
  InboundCrewEventSchema,
  StepErrorSchema,
} from "../crew/index.ts";
import { createAuditEvent } from "../integrity/audit.ts";
import type { AuditEvent, AuditEventType, AuditSeverity } from "../integrity/audit.ts";
import { ClaimsContractSchema, OrderSchema, ResponsibilityContractSchema } from "../integrity/contracts.ts";
import { LedgerEntrySchema } from "../kernel/ledger.ts";
import { CustomerWindowSchema } from "../kernel/customer-window.ts";
import type { ReserveErrorCode } from "../kernel/ledger.ts";
import { PolicyProposalSchema } from "../integrity/proposal.ts";
import { VerdictSchema } from "../integrity/verdict.ts";
import type { LlmUsage } from "../llm/port.ts";
import { ClaimInputSchema, ClaimSchema } from "../claim/claim.ts";
import { ClaimsCrewInputSchema } from "../agents/crew.ts";
import {
  ClaimVerdictDetailSchema,
  RefundExecutedDetailSchema,
  RefundSettledDetailSchema,
  ReviewDecidedDetailSchema,
  ReviewRequestedDetailSchema,
  ReturnRequestedDetailSchema,
} from "../kernel/events.ts";
import { ReturnEventBodySchema } from "../kernel/returns.ts";
import { ExpectedOutcomeSchema } from "./expected-outcome.ts";
import { ClaimExtractionOutputSchema, RefundProposalOutputSchema } from "../claim/proposal-output.ts";

/** details of SIMULATION_START: the run's configuration, authoritative orders and expectations. */
export const SimulationStartDetailsSchema = z.object({
  simulation_id: z.string(),
  run_id: z.string(),
  started_at: z.string(),
  config_file: z.string(),
  scenarios_file: z.string(),
  stack: z.string(),
  llm: z.object({ provider: z.string(), model: z.string() }),
  agent: z.object({
    agent_id: z.string(),
    version: z.string(),
    responsibility: ResponsibilityContractSchema,
    contract: ClaimsContractSchema,
  }),
  orders: z.array(OrderSchema),
  scenarios: z.array(
    z.object({
      id: z.string(),
      label: z.string(),
      expected: z.object({
        verdict: ExpectedOutcomeSchema,
        reason_code: z.string().optional(),
        /** Whether the claim's refund was expected to execute at once (an ACCEPT waiting for its return: false). */
        executed: z.boolean().optional(),
        /** What the ACCEPT was expected to give (docs/returns.md#outcomes). */
        outcome: z.enum(["REFUND", "STORE_CREDIT", "EXCHANGE"]).optional(),
      }),
      /** The race the row belongs to: its rows are matched as a group, by count (core/history/race.ts). */
      race: z.string().optional(),
    }),
  ),
});

/** SIMULATION_START details. */
export type SimulationStartDetails = z.infer<typeof SimulationStartDetailsSchema>;

/** One scenario's result as recorded in SIMULATION_END. */
const ScenarioResultSchema = z.object({
  id: z.string(),
  label: z.string(),
  claim_id: z.string(),
  verdict: z.string(),
  expected: z.string(),
  expected_reason_code: z.string().nullable(),
  reason_code: z.string().nullable(),
  reason: z.string().nullable(),
  order_id: z.string().nullable(),
  amount_eur: z.number().nullable(),
  executed: z.boolean(),
  matches: z.boolean(),
  duration_ms: z.number(),
  /** The race the row belongs to, when it is one: `matches` is then the group's answer. */
  race: z.string().optional(),
});

/** One scenario's result. */
export type ScenarioResult = z.infer<typeof ScenarioResultSchema>;

/** One review step of a batch (a person's decision on an earlier claim's review) as recorded in SIMULATION_END. */
const ReviewStepResultSchema = z.object({
  id: z.string(),
  label: z.string(),
  claim_id: z.string(),
  outcome: z.string(),
  expected: z.string(),
  matches: z.boolean(),
});

/** details of SIMULATION_END: every scenario's result and the totals (`total`, `matched`: the claims), then the review steps. */
export const SimulationEndDetailsSchema = z.object({
  simulation_id: z.string(),
  ended_at: z.string(),
  duration_ms: z.number(),
  total: z.number().int(),
  matched: z.number().int(),
  results: z.array(ScenarioResultSchema),
  review_steps: z.array(ReviewStepResultSchema).optional(),
});

/** SIMULATION_END details. */
export type SimulationEndDetails = z.infer<typeof SimulationEndDetailsSchema>;

/** What every event of a claim carries: the claim, and its batch run when it belongs to one. */
const ClaimFields = { claim_id: z.string().min(1), simulation_id: z.string().min(1).optional() };

/** Why a claim went to a person: a stable code and the reason in words. */
const ReviewCause = { reason_code: z.string().min(1), reason: z.string() };

/** What one model call cost, as the LLM port reports it. */
const LlmUsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  estimated: z.boolean(),
}) satisfies z.ZodType<LlmUsage>;

/** The extraction's model call: which model, how many HTTP attempts, what it cost, and the task. */
const ExtractionCall = {
  model: z.string().optional(),
  attempts: z.number().optional(),
  usage: LlmUsageSchema.optional(),
  task: z.string().optional(),
  /** `patterns`: read by patterns alone, no model call (docs/llm.md, "Extraction by patterns"); absent: the model's. */
  source: z.literal("patterns").optional(),
  /** `batch`: the call went through the OpenAI Batch API (docs/llm.md, "Batch mode"), priced at its discount. */
  via: z.literal("batch").optional(),
};

/** A crew step delivered to the claim's crew: the inbound event, the instant it was delivered and what it caused. */
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
  orderAbsentFrom: z.literal("shop_api").optional(),
  ledgerEntry: LedgerEntrySchema.nullable(),
  customerWindow: CustomerWindowSchema.nullable().optional(),
  parentClaimId: z.string().optional(),
  receivedAt: z.string(),
  decidedAt: z.string(),
  claimId: z.string(),
  dfid: z.string(),
});

/** What triage decided from, as CLAIM_TRIAGED records it: the kernel's inputs without a proposal or registry. */
const RecordedTriageInputsSchema = RecordedKernelInputsSchema.omit({ proposal: true, registry: true });

/** Every code a reservation can be refused with (a Record, so a new ledger code must be added here). */
const RESERVE_ERROR_CODES: Record<ReserveErrorCode, true> = {
  ALREADY_REFUNDED_FOR_CLAIM: true,
  EXCEEDS_ORDER_AMOUNT: true,
  EXCEEDS_AUTOMATIC_LIMIT: true,
  REVIEW_PENDING_ON_ORDER: true,
  PRIOR_DECISION_ON_ORDER: true,
  CUSTOMER_LIMIT_EXCEEDED: true,
  APPROVALS_CHANGED: true,
  EXCEEDS_LINE_AMOUNT: true,
  SHIPPING_NOT_REFUNDABLE: true,
};

/** Every audit event type with the schema of its details: the one definition producers and readers share. */
export const AUDIT_EVENTS = {
  /** A batch run started: its configuration, orders and expectations (the report reads them). */
  SIMULATION_START: SimulationStartDetailsSchema,
  /** A batch run ended: every scenario's result and the totals. */
  SIMULATION_END: SimulationEndDetailsSchema,
  /** Intake stored the claim, as received. */
  CLAIM_RECEIVED: z.object({
    ...ClaimFields,
    input_kind: z.enum(["claim", "claim_text"]),
    input: ClaimInputSchema,
    label: z.string().optional(),
    received_at: z.string(),
    /** The claim a reviewer's RESUBMIT corrected (absent for a claim a customer sent). */
    parent_claim_id: z.string().min(1).optional(),
  }),
  /** The extractor read a structured claim from the text. */
  CLAIM_EXTRACTED: z.object({
    ...ClaimFields,
    ...ExtractionCall,
    extracted: ClaimExtractionOutputSchema,
    claim: ClaimSchema,
    warnings: z.array(z.string()),
  }),
  /** The extractor could not: the model's answer gives no claim (`extracted`), or the call failed (`code`). */
  CLAIM_EXTRACTION_FAILED: z.object({
    ...ClaimFields,
    ...ReviewCause,
    ...ExtractionCall,
    extracted: ClaimExtractionOutputSchema.optional(),
    code: z.string().optional(),
  }),
  /** The crew started on the structured claim, with its step timeouts. */
  CREW_STARTED: z.object({
    ...ClaimFields,
    crew_id: z.string(),
    root_input: ClaimsCrewInputSchema,
    crew: z.string(),
    now_ms: z.number(),
    timeouts: z.object({ analystMs: z.number(), decisionMs: z.number(), fixerMs: z.number() }),
  }),
  /** An agent's answer delivered to the crew. */
  AGENT_STEP: z.object({ ...ClaimFields, inbound: AgentStepCompletedEventSchema, ...StepRecord }),
  /** A failed step or a tick delivered to the crew, or the crew handing a failed role to its fixer. */
  AGENT_STEP_FAILED: z.union([
    z.object({ ...ClaimFields, inbound: InboundCrewEventSchema, ...StepRecord }),
    z.object({ ...ClaimFields, fixer: FixerInvokedEventSchema }),
  ]),
  /** One agent step's model call(s), as the worker made them. */
  LLM_CALL: z.object({
    ...ClaimFields,
    role: z.string(),
    agent_id: z.string(),
    correlation_id: z.string(),
    ok: z.boolean(),
    error: StepErrorSchema.optional(),
    /** Given only when the step made 2 calls (the Decision Maker's self-check repair round). */
    calls: z.number().int().positive().optional(),
    /** The compact crew's Claims Officer's analysis (docs/llm.md, "Crew shape"); its proposal goes to the crew. */
    analysis: z.string().optional(),
    model: z.string().optional(),
    attempts: z.number().optional(),
    usage: LlmUsageSchema.optional(),
    duration_ms: z.number().optional(),
    /** `batch`: the step's calls went through the OpenAI Batch API (docs/llm.md, "Batch mode"), priced at its discount. */
    via: z.literal("batch").optional(),
  }),
  /** The crew's proposal passed the self-check and crossed the wall. */
  AGENT_DECISION: z.object({
    ...ClaimFields,
    output: RefundProposalOutputSchema,
    proposal: PolicyProposalSchema,
    self_check: z.literal("passed"),
  }),
  /** A late proposal of a claim already final: discarded, never sent to the kernel. */
  CREW_COMPLETED: z.object({ ...ClaimFields, discarded: z.string(), output: z.unknown() }),
  /** The crew failed, or its output is not a refund proposal. */
  CREW_FAILED: z.object({
    ...ClaimFields,
    ...ReviewCause,
    code: z.string().optional(),
    role: z.string().optional(),
    output: z.unknown().optional(),
  }),
  /**
   * A proposal failed the self-check: the crew's final one (the claim goes to a person), or the Decision Maker's
   * first one, which got a repair round in its own step (with the step's `role` and `correlation_id`).
   */
  CLAIMS_SELF_CHECK_FAILED: z.object({
    ...ClaimFields,
    ...ReviewCause,
    output: RefundProposalOutputSchema,
    failures: z.array(z.object({ check: z.string(), message: z.string() })),
    role: z.string().optional(),
    correlation_id: z.string().optional(),
  }),
  /** Triage decided the claim without the crew (docs/kernel.md): its inputs, recorded before KERNEL_VERDICT. */
  CLAIM_TRIAGED: z.object({ ...ClaimFields, triage_inputs: RecordedTriageInputsSchema }),
  /** The kernel's inputs, recorded before it decides; `lost_races` counts the reservation races this decision follows. */
  PROPOSAL_SUBMITTED: z.object({
    ...ClaimFields,
    kernel_inputs: RecordedKernelInputsSchema,
    lost_races: z.number().int().positive().optional(),
  }),
  /** The kernel's verdict record, with the deciding layer and the checks run. */
  KERNEL_VERDICT: z.object({
    ...ClaimFields,
    ...ClaimVerdictDetailSchema.shape,
    layer: VerdictSchema.shape.layer,
    checks: VerdictSchema.shape.checks,
    /** What the shadow policy decided on the same inputs (only when the config has one; docs/backtest.md). */
    shadow: z
      .object({
        verdict: ClaimVerdictDetailSchema.shape.verdict,
        reason_code: ClaimVerdictDetailSchema.shape.reason_code,
        layer: VerdictSchema.shape.layer,
        agrees: z.boolean(),
        policy: z.object({
          agent_id: z.string().min(1),
          version: z.string().min(1),
          contract: ClaimsContractSchema,
          responsibility: ResponsibilityContractSchema,
        }),
      })
      .optional(),
  }),
  /** A refund reserved: the kernel's ACCEPT records the ledger entry after its reservation; a reviewer's approval does not. */
  CLAIM_REFUND_EXECUTED: z.object({
    ...ClaimFields,
    ...RefundExecutedDetailSchema.shape,
    /** The ACCEPT's outcome is an exchange (docs/returns.md#outcomes): reserved, announced by ExchangeRequested, never paid. */
    exchange: z.literal(true).optional(),
    amount_cents: z.number().int().positive(),
    ledger_after: LedgerEntrySchema.optional(),
  }),
  /** The ledger refused a reservation, with its code. */
  CLAIM_REFUND_NOT_EXECUTED: z.object({
    ...ClaimFields,
    verdict_id: z.string(),
    code: z.enum(Object.keys(RESERVE_ERROR_CODES) as [ReserveErrorCode, ...ReserveErrorCode[]]),
    reason: z.string(),
  }),
  /**
   * The model could not be reached (`LLM_UNREACHABLE`), or its answer is in a batch not yet completed
   * (`LLM_BATCH_PENDING`, LLM_BATCH_MODE=batch): the claim waits for it (docs/llm.md: the outage hold) until `until`
   * at the latest.
   */
  CLAIM_HELD: z.object({
    ...ClaimFields,
    reason_code: z.enum(["LLM_UNREACHABLE", "LLM_BATCH_PENDING"]),
    reason: z.string(),
    since: z.string(),
    until: z.string(),
    step: z.enum(["extraction", "agent_step"]),
  }),
  /** The model answered again: the held claim goes on where it waited. */
  CLAIM_RESUMED: z.object({ ...ClaimFields, held_since: z.string(), waited_ms: z.number().min(0) }),
  /** The claim ended in NEEDS_REVIEW; the sweep adds what it saw (a timeout's wait, a stall's nudges). */
  CLAIM_NEEDS_REVIEW: z.object({
    ...ClaimFields,
    ...ReviewCause,
    review_id: z.string().min(1),
    waited_ms: z.number().optional(),
    last_status: z.string().optional(),
    detail: z.string().optional(),
    nudges: z.number().optional(),
    status_before: z.string().optional(),
  }),
  /** A person is asked to decide (the ReviewRequested detail). */
  REVIEW_REQUESTED: z.object({ ...ClaimFields, ...ReviewRequestedDetailSchema.shape }),
  /** A person decided (the ReviewDecided detail). */
  REVIEW_DECIDED: z.object({ ...ClaimFields, ...ReviewDecidedDetailSchema.shape }),
  /** The payment provider paid the refund (docs/payments.md). */
  REFUND_SETTLED: z.object({ ...ClaimFields, ...RefundSettledDetailSchema.shape }),
  /** The payment provider refused the refund: its review (origin REFUND_FAILED) is open. */
  REFUND_FAILED: z.object({ ...ClaimFields, ...RefundSettledDetailSchema.shape, review_id: z.string().min(1) }),
  /** Four eyes: a first approval recorded; the review stays PENDING awaiting a different reviewer's (publishes nothing). */
  REVIEW_APPROVAL_RECORDED: z.object({
    ...ClaimFields,
    review_id: z.string().min(1),
    reviewer: z.string().min(1),
    amount_eur: z.number().positive(),
    at: z.iso.datetime({ offset: true }),
    awaiting: z.literal("SECOND_APPROVAL"),
  }),
  /**
   * Claims' personal data erased (docs/customer-data.md): their keys destroyed, at a customer's request or by the
   * retention policy. An event of the run (or of the served stack), not of a claim: the claims' own audit is unchanged.
   */
  PERSONAL_DATA_ERASED: z.object({
    simulation_id: z.string().min(1).optional(),
    customer_id: z.string().min(1).optional(),
    claim_ids: z.array(z.string().min(1)).min(1),
    erased_at: z.iso.datetime({ offset: true }),
    cause: z.enum(["request", "retention"]),
    retention_days: z.number().int().positive().optional(),
  }),
  /** A return-required ACCEPT asked for the item (docs/returns.md; audited under the return's flow `dfid_ret_<claim>`). */
  RETURN_REQUESTED: z.object({ ...ClaimFields, ...ReturnRequestedDetailSchema.shape }),
  /** A return event a shop or warehouse posted, as recorded (the first recording of its `event_id` counts). */
  RETURN_EVENT_RECORDED: z.object({ ...ClaimFields, ...ReturnEventBodySchema.shape, recorded_at: z.string() }),
  /** What the recorded return events decided: paid (the RefundExecuted's execution), a review, or not received. */
  RETURN_COMPLETED: z.object({
    ...ClaimFields,
    outcome: z.enum(["PAID", "REVIEW", "NOT_RECEIVED"]),
    execution_id: z.string().min(1),
    decided_by: z.string().optional(),
    reason_code: z.string().optional(),
    review_id: z.string().optional(),
  }),
} as const satisfies { [T in AuditEventType]: z.ZodType };

/** The details of an audit event of type `T`, as parsed. */
export type AuditDetails<T extends AuditEventType> = z.output<(typeof AUDIT_EVENTS)[T]>;

/** The details a producer of an audit event of type `T` passes. */
export type AuditDetailsInput<T extends AuditEventType> = z.input<(typeof AUDIT_EVENTS)[T]>;

/** The audit events of a batch run (or of none), as opposed to a claim's. */
type RunEventType = "SIMULATION_START" | "SIMULATION_END" | "PERSONAL_DATA_ERASED";

/** The audit event types of a claim's decision flow: every one carries the claim's id. */
export type ClaimAuditEventType = Exclude<AuditEventType, RunEventType>;

/** `Omit` over each member of a union. */
type OmitEach<U, K extends PropertyKey> = U extends unknown ? Omit<U, K> : never;

/** What a producer of a claim's audit event of type `T` passes: its details but the claim id (the record's). */
export type ClaimAuditDetails<T extends ClaimAuditEventType> = T extends unknown
  ? OmitEach<AuditDetailsInput<T>, "claim_id">
  : never;

/** A parsed audit event's type and details, narrowed together by `type`. */
export type ParsedAuditDetails = { [T in AuditEventType]: { type: T; details: AuditDetails<T> } }[AuditEventType];

/** The first issues of details that do not parse, by path (`(details)` for the whole). */
export function auditDetailsIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join(".") : "(details)"}: ${i.message}`)
    .join("; ");
}

/** Parses `event`'s details with its type's schema: the details narrowed by type, or what is wrong with them. */
export function parseAuditDetails(
  event: Pick<AuditEvent, "event_type" | "details">,
): { ok: true; parsed: ParsedAuditDetails } | { ok: false; problem: string } {
  const result = (AUDIT_EVENTS[event.event_type] as z.ZodType).safeParse(event.details);
  if (!result.success)
    return {
      ok: false,
      problem: `${event.event_type} details do not follow the schema (${auditDetailsIssues(result.error)})`,
    };
  return { ok: true, parsed: { type: event.event_type, details: result.data } as ParsedAuditDetails };
}

/** The claim a recorded event belongs to (`details.claim_id`), if it names one. */
export function auditClaimId(event: Pick<AuditEvent, "details">): string | undefined {
  const id = z.string().safeParse(event.details.claim_id);
  return id.success ? id.data : undefined;
}

/** The batch run a recorded event belongs to (`details.simulation_id`), if any. */
export function auditSimulationId(event: Pick<AuditEvent, "details">): string | undefined {
  const id = z.string().safeParse(event.details.simulation_id);
  return id.success ? id.data : undefined;
}

/** Builds an audit event whose details are typed by its type's schema (`claimAudit` builds a claim's). */
export function auditEvent<T extends AuditEventType>(input: {
  dfid: string;
  rootDfid?: string;
  type: T;
  severity?: AuditSeverity;
  state: string;
  details: AuditDetailsInput<T>;
  at: string;
  simulationId?: string;
}): AuditEvent {
  return createAuditEvent(input);
}
