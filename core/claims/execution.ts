// Execution of a kernel verdict: the stored verdict record, the outbound events, and the at-most-once refund.
import * as z from "zod";
import { DETAIL_TYPES } from "./bus-events.ts";
import { hashHex } from "../crew/hash.ts";
import { createAuditEvent, severityForVerdict, type AuditEvent } from "../integrity/audit.ts";
import type { Order } from "../integrity/contracts.ts";
import { KernelInputError } from "../integrity/errors.ts";
import { reservedForClaim, type ReserveErrorCode } from "../integrity/ledger.ts";
import { centsToEur, formatEur, parseCents } from "../integrity/money.ts";
import type { AuditLog, RefundLedger } from "../../pipeline/ports.ts";
import { idempotencyKeyOf } from "../integrity/proposal.ts";
import { VerdictKindSchema } from "../integrity/verdict.ts";
import type { ClaimVerdict } from "./kernel.ts";
import { PolicyKindSchema } from "./proposal-output.ts";
import { ClaimReasonCodeSchema } from "./reason-codes.ts";

/** `ClaimVerdict` event detail (SPEC §7.3) and the verdict record stored once per idempotency key. */
export const ClaimVerdictDetailSchema = z
  .object({
    verdict_id: z.string().min(1),
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    verdict: VerdictKindSchema,
    reason_code: ClaimReasonCodeSchema,
    reason: z.string(),
    order_id: z.string().nullable(),
    amount_eur: z.number().nullable(),
    policy_kind: PolicyKindSchema.nullable(),
    idempotency_key: z.string().regex(/^[0-9a-f]{64}$/),
    decided_at: z.iso.datetime({ offset: true }),
    simulation_id: z.string().min(1).optional(),
  })
  .strict();

/** The verdict record / `ClaimVerdict` detail; `order_id`, `amount_eur`, `policy_kind` are null when the proposal did not carry a usable value. */
export type ClaimVerdictDetail = z.infer<typeof ClaimVerdictDetailSchema>;

/** `RefundExecuted` event detail (SPEC §7.3). */
export const RefundExecutedDetailSchema = z
  .object({
    execution_id: z.string().min(1),
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    order_id: z.string().min(1),
    amount_eur: z.number().positive(),
    verdict_id: z.string().min(1),
  })
  .strict();

/** A `RefundExecuted` detail. */
export type RefundExecutedDetail = z.infer<typeof RefundExecutedDetailSchema>;

/** `ClaimNeedsReview` event detail (SPEC §7.3); `reason_code` may be a kernel, ledger or crew code. */
export const ClaimNeedsReviewDetailSchema = z
  .object({
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    reason_code: z.string().min(1),
    reason: z.string(),
  })
  .strict();

/** A `ClaimNeedsReview` detail. */
export type ClaimNeedsReviewDetail = z.infer<typeof ClaimNeedsReviewDetailSchema>;

/** An event for the `claims` bus, with its detail-type from `infra/event-patterns.ts`. */
export type KernelEvent =
  | { detailType: typeof DETAIL_TYPES.verdict; detail: ClaimVerdictDetail }
  | { detailType: typeof DETAIL_TYPES.refund; detail: RefundExecutedDetail }
  | { detailType: typeof DETAIL_TYPES.review; detail: ClaimNeedsReviewDetail };

/** The verdict id for an idempotency key: `vrd_` + 32 hex; the same proposal always gets the same id. */
export function verdictIdFor(idempotencyKey: string): string {
  return `vrd_${hashHex(`verdict|${idempotencyKey}`).slice(0, 32)}`;
}

/** The execution id for a verdict id: `exe_` + 32 hex; a redelivered execution repeats it so consumers dedupe. */
export function executionIdFor(verdictId: string): string {
  return `exe_${hashHex(`execution|${verdictId}`).slice(0, 32)}`;
}

/** What a verdict record is built from. */
export type VerdictRecordInput = {
  verdict: ClaimVerdict;
  proposal: unknown;
  claimId: string;
  /** The claim's DFID (the record's, whatever the proposal claims). */
  dfid: string;
  decidedAt: string;
  simulationId?: string;
};

/**
 * Builds the verdict record deterministically: the idempotency key is derived from the proposal's
 * content (see `idempotencyKeyOf`), the verdict id from the key; throws `KernelInputError` for bad ids/times.
 */
export function buildVerdictRecord(input: VerdictRecordInput): ClaimVerdictDetail {
  const idempotency_key = idempotencyKeyOf(input.proposal, input.dfid);
  const raw = asRecord(input.proposal);
  const params = asRecord(raw?.params);
  const orderId = params?.order_id;
  const amount = params?.amount_eur;
  const kind = PolicyKindSchema.safeParse(raw?.policy_kind);
  const record = {
    verdict_id: verdictIdFor(idempotency_key),
    claim_id: input.claimId,
    dfid: input.dfid,
    verdict: input.verdict.verdict,
    reason_code: input.verdict.reason_code,
    reason: input.verdict.reason,
    order_id: typeof orderId === "string" && orderId !== "" ? orderId : null,
    amount_eur: typeof amount === "number" && Number.isFinite(amount) ? amount : null,
    policy_kind: kind.success ? kind.data : null,
    idempotency_key,
    decided_at: input.decidedAt,
    ...(input.simulationId === undefined ? {} : { simulation_id: input.simulationId }),
  };
  const parsed = ClaimVerdictDetailSchema.safeParse(record);
  if (!parsed.success) throw new KernelInputError(`verdict record is invalid: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  return parsed.data;
}

/** A side effect a verdict calls for, as plain data; only the shell (or `executeDecision`) performs it. */
export type ExecutionEffect =
  | { type: "refund.reserve"; claim_id: string; order_id: string; amount_cents: number; amount_eur: number }
  | { type: "review.create"; claim_id: string; reason_code: string; reason: string };

/**
 * Plans what a verdict calls for: ACCEPT → reserve the refund on the ledger; ESCALATE → a pending human
 * review; REJECT → nothing (its reason is the customer-facing answer). Throws `KernelInputError` for an
 * ACCEPT whose proposal has no valid order id and amount (the kernel never produces one).
 */
export function planExecution(verdict: ClaimVerdict, proposal: unknown, claimId: string): ExecutionEffect[] {
  if (verdict.verdict === "REJECT") return [];
  if (verdict.verdict === "ESCALATE") return [{ type: "review.create", claim_id: claimId, reason_code: verdict.reason_code, reason: verdict.reason }];
  const params = asRecord(asRecord(proposal)?.params);
  const orderId = params?.order_id;
  const cents = parseCents(params?.amount_eur);
  if (typeof orderId !== "string" || orderId === "" || !cents.ok || cents.cents <= 0) {
    throw new KernelInputError("planExecution: an ACCEPT verdict for a proposal without a valid order id and amount");
  }
  return [{ type: "refund.reserve", claim_id: claimId, order_id: orderId, amount_cents: cents.cents, amount_eur: centsToEur(cents.cents) }];
}

/** The claim a decision belongs to. */
export type ClaimRef = { claim_id: string; dfid: string; root_dfid?: string; simulation_id?: string };

/** What `executeDecision` needs: the verdict and its inputs, the ports, and the injected times. */
export type ExecuteDecisionInput = {
  verdict: ClaimVerdict;
  proposal: unknown;
  claim: ClaimRef;
  /** The order the kernel decided on (required for an ACCEPT: its amount bounds the reservation). */
  order: Order | undefined;
  ledger: RefundLedger;
  audit: AuditLog;
  decidedAt: string;
  executedAt: string;
};

/**
 * How execution went: `EXECUTED` (reserved now), `ALREADY_EXECUTED` (this claim already holds exactly this
 * reservation: a redelivery), `REFUSED` (the ledger refused: another claim got there first, or this claim
 * holds a different amount), `NOT_APPLICABLE` (ESCALATE / REJECT).
 */
export type ExecutionStatus = "EXECUTED" | "ALREADY_EXECUTED" | "REFUSED" | "NOT_APPLICABLE";

/** The result of executing a decision: the record to store/publish, what happened, the events and audit entries. */
export type ExecutionOutcome = {
  record: ClaimVerdictDetail;
  /** True when the refund for this claim is on the ledger (executed now or before). */
  executed: boolean;
  execution: ExecutionStatus;
  /** Why an ACCEPT was not executed. */
  refusal?: { code: ReserveErrorCode; reason: string };
  /** The pending human review an ESCALATE or a refused execution creates (for the claim record). */
  review?: ClaimNeedsReviewDetail;
  /** Events to publish, `ClaimVerdict` first. */
  events: KernelEvent[];
  /** The audit events appended, in order. */
  audit: AuditEvent[];
};

/**
 * Executes a decision in-process: audits the verdict, reserves the refund on the ledger port only for an
 * ACCEPT, and returns the events to publish. The verdict is never changed after the fact: when the ledger
 * refuses an ACCEPT (a race with another claim on the same order), the record stays ACCEPT with
 * `executed: false`, and a `ClaimNeedsReview` event carries the ledger's code. Running it again for the
 * same inputs reserves nothing twice and repeats the same ids. An ESCALATE's review is returned in
 * `review` (its `ClaimVerdict` event already reaches the escalations rule), not published a second time.
 */
export async function executeDecision(input: ExecuteDecisionInput): Promise<ExecutionOutcome> {
  const { verdict, proposal, claim, ledger, audit } = input;
  const record = buildVerdictRecord({
    verdict,
    proposal,
    claimId: claim.claim_id,
    dfid: claim.dfid,
    decidedAt: input.decidedAt,
    ...(claim.simulation_id === undefined ? {} : { simulationId: claim.simulation_id }),
  });
  const events: KernelEvent[] = [{ detailType: DETAIL_TYPES.verdict, detail: record }];
  const appended: AuditEvent[] = [];
  const log = async (event: Omit<Parameters<typeof createAuditEvent>[0], "dfid" | "rootDfid" | "simulationId">) => {
    const e = createAuditEvent({ ...event, dfid: claim.dfid, rootDfid: claim.root_dfid, simulationId: claim.simulation_id });
    await audit.append(e);
    appended.push(e);
  };

  await log({
    type: "KERNEL_VERDICT",
    severity: severityForVerdict(verdict.verdict),
    state: "DECIDED",
    details: { ...record, layer: verdict.layer, checks: verdict.checks },
    at: input.decidedAt,
  });

  let execution: ExecutionStatus = "NOT_APPLICABLE";
  let refusal: ExecutionOutcome["refusal"];
  let review: ClaimNeedsReviewDetail | undefined;
  for (const effect of planExecution(verdict, proposal, claim.claim_id)) {
    if (effect.type === "review.create") {
      review = { claim_id: claim.claim_id, dfid: claim.dfid, reason_code: effect.reason_code, reason: effect.reason };
      continue;
    }
    const { order } = input;
    if (!order || order.order_id !== effect.order_id) throw new KernelInputError(`executeDecision: an ACCEPT for order ${effect.order_id} needs that order, got ${order?.order_id ?? "none"}`);
    const orderCents = parseCents(order.amount);
    if (!orderCents.ok) throw new KernelInputError(`executeDecision: order ${order.order_id}: ${orderCents.message}`);
    const result = await ledger.reserve(effect.order_id, effect.claim_id, effect.amount_cents, orderCents.cents);
    const redelivery = !result.ok && result.code === "ALREADY_REFUNDED_FOR_CLAIM" && reservedForClaim(result.entry, effect.claim_id) === effect.amount_cents;
    if (result.ok || redelivery) {
      execution = result.ok ? "EXECUTED" : "ALREADY_EXECUTED";
      const detail: RefundExecutedDetail = {
        execution_id: executionIdFor(record.verdict_id),
        claim_id: claim.claim_id,
        dfid: claim.dfid,
        order_id: effect.order_id,
        amount_eur: effect.amount_eur,
        verdict_id: record.verdict_id,
      };
      events.push({ detailType: DETAIL_TYPES.refund, detail });
      await log({ type: "CLAIM_REFUND_EXECUTED", state: "DECIDED", details: { ...detail, amount_cents: effect.amount_cents, redelivered: !result.ok }, at: input.executedAt });
    } else {
      execution = "REFUSED";
      const reason = `Refund of ${formatEur(effect.amount_cents)} EUR not executed: ${result.message}`;
      refusal = { code: result.code, reason };
      review = { claim_id: claim.claim_id, dfid: claim.dfid, reason_code: result.code, reason };
      events.push({ detailType: DETAIL_TYPES.review, detail: review });
      await log({ type: "CLAIM_REFUND_NOT_EXECUTED", severity: "WARN", state: "DECIDED", details: { claim_id: claim.claim_id, verdict_id: record.verdict_id, order_id: effect.order_id, amount_cents: effect.amount_cents, code: result.code, reason }, at: input.executedAt });
      await log({ type: "CLAIM_NEEDS_REVIEW", severity: "WARN", state: "DECIDED", details: { ...review, verdict_id: record.verdict_id }, at: input.executedAt });
    }
  }

  return {
    record,
    executed: execution === "EXECUTED" || execution === "ALREADY_EXECUTED",
    execution,
    ...(refusal ? { refusal } : {}),
    ...(review ? { review } : {}),
    events,
    audit: appended,
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
