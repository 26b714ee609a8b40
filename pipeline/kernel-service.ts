// Kernel service: decide a proposal once per idempotency key, from the STORED claim (never a queue
// message's copy), and publish only the final verdict (SPEC §4.3):
//   1. the claim must exist, belong to the message's decision flow and await a decision (RUNNING);
//   2. the decision is stored once per key (conditional put), not yet published;
//   3. an ACCEPT reserves its refund with one conditional update (automatic: bounded per order by the
//      escalation limit, refused while another claim on the order awaits review); if the reservation loses
//      a race, the kernel decides again against the ledger it now sees, and that decision replaces the
//      unpublished one — so every ClaimVerdict ACCEPT has exactly one RefundExecuted and the reverse;
//   4. the audit is appended, an ESCALATE opens its review, the events are published, the verdict is marked
//      published, the claim is updated. Every step is repaired by a redelivery; no step needs a transaction.
// Corrupt order data ends the claim in NEEDS_REVIEW ORDER_DATA_INVALID instead of a kernel that throws forever.
import { canonicalize } from "../core/crew/index.ts";
import { KernelRetryError } from "./errors.ts";
import { busEntry } from "../core/claims/events.ts";
import type { BusEntry, ClaimVerdictDetail } from "../core/claims/events.ts";
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import { buildVerdictRecord, executionIdFor, planExecution } from "../core/claims/execution.ts";
import { decideClaim } from "../core/claims/kernel.ts";
import type { ClaimVerdict } from "../core/claims/kernel.ts";
import {
  formatEur,
  idempotencyKeyOf,
  KernelInputError,
  OrderDataError,
  parseCents,
  severityForVerdict,
} from "../core/integrity/index.ts";
import type { AuditEvent, LedgerEntry, Order } from "../core/integrity/index.ts";
import { claimAudit } from "./audit-events.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Effect } from "./effects.ts";
import { needsReview } from "./intake.ts";
import type { ProposalMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";
import type { ExecutionState, StoredVerdict } from "./ports.ts";
import { reviewFor, reviewRequested } from "./review.ts";

/** What the kernel did with a proposal message. */
type KernelOutcome =
  | { outcome: "DECIDED"; verdict: StoredVerdict }
  | { outcome: "NEEDS_REVIEW"; reasonCode: string }
  /** Not acted on: an unknown claim, another decision flow, or a claim not awaiting a decision. Nothing was written. */
  | { outcome: "REFUSED"; reason: string };

/** How often a lost reservation race is decided again before the message is retried instead. */
const MAX_DECISIONS = 5;

type KernelDeps = Pick<
  PipelineDeps,
  | "verdicts"
  | "orders"
  | "ledger"
  | "claims"
  | "audit"
  | "publisher"
  | "queues"
  | "clock"
  | "agent"
  | "registry"
  | "reviews"
  | "sha256"
>;

/** Reads the proposal's order id without trusting its shape. */
function proposedOrderId(proposal: unknown): string | undefined {
  const params = (proposal as { params?: { order_id?: unknown } } | null)?.params;
  return typeof params?.order_id === "string" && params.order_id.length > 0 ? params.order_id : undefined;
}

/** Handles one proposal message. */
export async function handleProposal(message: ProposalMessage, deps: KernelDeps): Promise<KernelOutcome> {
  const record = await deps.claims.getClaim(message.claim_id);
  if (!record || record.dfid !== message.dfid)
    return { outcome: "REFUSED", reason: `no claim ${message.claim_id} in decision flow ${message.dfid}` };
  const key = idempotencyKeyOf(message.proposal, record.dfid, deps.sha256);
  let stored = await deps.verdicts.getVerdict(key);
  if (stored && stored.claim_id !== record.claim_id)
    return { outcome: "REFUSED", reason: `proposal ${key.slice(0, 16)}… belongs to claim ${stored.claim_id}` };

  if (!stored) {
    if (record.status !== "RUNNING" || !record.claim)
      return { outcome: "REFUSED", reason: `claim ${record.claim_id} is ${record.status}, not awaiting a decision` };
    const now = deps.clock.now();
    const decidedAt = new Date(now).toISOString();
    let decision: Decision;
    try {
      const order = await orderOf(message.proposal, deps);
      const ledgerEntry = order ? await deps.ledger.get(order.order_id, record.simulation_id) : undefined;
      decision = decide(record, message.proposal, { order, ledgerEntry, decidedAt, now }, deps);
    } catch (error) {
      if (!(error instanceof OrderDataError || error instanceof KernelInputError)) throw error;
      return orderDataInvalid(record, error, deps);
    }
    stored = await deps.verdicts.putVerdictOnce({
      idempotency_key: key,
      claim_id: record.claim_id,
      record: decision.record,
      layer: decision.verdict.layer,
      checks: decision.verdict.checks,
      execution: decision.verdict.verdict === "ACCEPT" ? "PENDING" : "NOT_APPLICABLE",
      ...(decision.review ? { review: decision.review } : {}),
      events: decision.events,
      audit: decision.audit,
      published: false,
    });
  }

  if (stored.execution === "PENDING") {
    try {
      stored = await execute(stored, record, message.proposal, deps);
    } catch (error) {
      if (!(error instanceof OrderDataError || error instanceof KernelInputError)) throw error;
      return orderDataInvalid(record, error, deps);
    }
  }

  if (!stored.published) {
    // The decision's audit is stored with the verdict, so whichever delivery publishes it appends it (a crash loses none, a race adds none).
    await performEffects(
      [
        ...(stored.audit ?? []).map((event): Effect => ({ kind: "audit", event })),
        ...(stored.review ? [{ kind: "review_open" as const, review: stored.review }] : []),
        ...(stored.events.length > 0 ? [{ kind: "publish" as const, entries: stored.events }] : []),
      ],
      deps,
    );
    await deps.verdicts.markPublished(stored.idempotency_key);
    stored = { ...stored, published: true };
  }
  if (stored.execution !== "REFUSED") {
    await performEffects(
      [
        {
          kind: "claim_update",
          claimId: record.claim_id,
          patch: decidedPatch(stored.record, stored.execution, deps.clock.now()),
          onlyFrom: ["RECEIVED", "RUNNING"],
        },
      ],
      deps,
    );
    // A reviewer may have approved the escalation before the claim was recorded DECIDED (its `executed` update found
    // the claim still RUNNING): the approval recorded by now is the claim's refund.
    if (stored.review && (await deps.reviews.getReview(record.claim_id))?.status === "APPROVED") {
      await performEffects(
        [{ kind: "claim_update", claimId: record.claim_id, patch: { executed: true }, onlyFrom: ["DECIDED"] }],
        deps,
      );
    }
  }
  return { outcome: "DECIDED", verdict: stored };
}

async function orderOf(proposal: unknown, deps: Pick<KernelDeps, "orders">): Promise<Order | undefined> {
  const orderId = proposedOrderId(proposal);
  return orderId ? deps.orders.getOrder(orderId) : undefined;
}

/** A decision of the kernel with everything stored beside it: the record, the events, the audit, the review it opens. */
type Decision = {
  verdict: ClaimVerdict;
  record: ClaimVerdictDetail;
  events: BusEntry[];
  audit: AuditEvent[];
  review?: ReviewRecord;
};
type ReviewRecord = NonNullable<StoredVerdict["review"]>;

/** Decides on the stored claim against the given order and ledger entry, at `decidedAt`. */
function decide(
  record: ClaimRecord,
  proposal: unknown,
  at: {
    order: Order | undefined;
    ledgerEntry: LedgerEntry | undefined;
    decidedAt: string;
    now: number;
    lostRaces?: number;
  },
  deps: Pick<KernelDeps, "agent" | "registry" | "sha256">,
): Decision {
  const inputs = {
    proposal,
    claim: record.claim!,
    contract: deps.agent.contract,
    responsibility: deps.agent.responsibility,
    registry: { agents: deps.registry.agents },
    order: at.order,
    ledgerEntry: at.ledgerEntry,
    receivedAt: record.received_at,
    decidedAt: at.decidedAt,
    claimId: record.claim_id,
    dfid: record.dfid,
  };
  // The hash is how to compute, not what is decided: it stays out of the recorded kernel inputs.
  const verdict = decideClaim(deps.sha256 ? { ...inputs, sha256: deps.sha256 } : inputs);
  const verdictRecord = buildVerdictRecord({
    verdict,
    proposal,
    claimId: record.claim_id,
    dfid: record.dfid,
    decidedAt: at.decidedAt,
    ...(record.simulation_id ? { simulationId: record.simulation_id } : {}),
    ...(deps.sha256 ? { sha256: deps.sha256 } : {}),
  });
  const audit = [
    // lost_races: how many reservation races this decision follows (each noted as CLAIM_REFUND_NOT_EXECUTED), so replay can count them.
    claimAudit(record, "PROPOSAL_SUBMITTED", "RUNNING", at.now, {
      kernel_inputs: JSON.parse(
        canonicalize({ ...inputs, order: at.order ?? null, ledgerEntry: at.ledgerEntry ?? null }),
      ),
      ...(at.lostRaces ? { lost_races: at.lostRaces } : {}),
    }),
    claimAudit(
      record,
      "KERNEL_VERDICT",
      "DECIDED",
      at.now,
      { ...verdictRecord, layer: verdict.layer, checks: verdict.checks },
      severityForVerdict(verdict.verdict),
    ),
  ];
  const events: BusEntry[] = [busEntry("ClaimVerdict", verdictRecord)];
  if (verdict.verdict !== "ESCALATE") return { verdict, record: verdictRecord, events, audit };
  const review = reviewFor(record, {
    origin: "ESCALATE",
    reasonCode: verdict.reason_code,
    reason: verdict.reason,
    now: at.now,
    orderId: verdictRecord.order_id ?? record.claim?.order_id,
    amountEur: verdictRecord.amount_eur ?? undefined,
    verdictId: verdictRecord.verdict_id,
    verdictDecidedAt: at.decidedAt,
    proposal,
  });
  const requested = reviewRequested(record, review);
  return {
    verdict,
    record: verdictRecord,
    events: [...events, requested.event],
    audit: [...audit, requested.audit],
    review,
  };
}

/**
 * Reserves an ACCEPT's refund. On success the verdict settles EXECUTED with its RefundExecuted; when the
 * reservation loses a race, the kernel decides again (same decision instant) against the entry the ledger
 * returned, until the decision is not an ACCEPT (it replaces the unpublished one) or a reservation holds.
 */
async function execute(
  stored: StoredVerdict,
  record: ClaimRecord,
  proposal: unknown,
  deps: KernelDeps,
): Promise<StoredVerdict> {
  const now = deps.clock.now();
  const scope = record.simulation_id;
  const limit = parseCents(deps.agent.contract.max_refund_without_escalation);
  if (!limit.ok) throw new KernelInputError(`contract.max_refund_without_escalation: ${limit.message}`);
  let current = stored;
  const raced: AuditEvent[] = [];
  for (let round = 0; round < MAX_DECISIONS; round++) {
    const verdictView = {
      verdict: current.record.verdict,
      reason_code: current.record.reason_code,
      reason: current.record.reason,
      layer: current.layer,
      checks: current.checks,
    } as ClaimVerdict;
    const [effect] = planExecution(verdictView, proposal, record.claim_id).filter((e) => e.type === "refund.reserve");
    if (!effect || effect.type !== "refund.reserve")
      throw new KernelRetryError(`verdict ${current.record.verdict_id} is PENDING but plans no refund`);
    const order = await deps.orders.getOrder(effect.order_id);
    const orderCents = order ? parseCents(order.amount) : undefined;
    if (!order || !orderCents?.ok)
      throw new OrderDataError(`order ${effect.order_id} vanished or is corrupt between decision and execution`);
    const result = await deps.ledger.reserve({
      orderId: effect.order_id,
      claimId: record.claim_id,
      cents: effect.amount_cents,
      orderCents: orderCents.cents,
      mode: { kind: "automatic", limitCents: limit.cents },
      scope,
    });
    const mine =
      !result.ok &&
      result.code === "ALREADY_REFUNDED_FOR_CLAIM" &&
      result.entry.claims[record.claim_id] === effect.amount_cents;
    if (result.ok || mine) {
      const detail = {
        execution_id: executionIdFor(current.record.verdict_id),
        claim_id: record.claim_id,
        dfid: record.dfid,
        order_id: effect.order_id,
        amount_eur: effect.amount_eur,
        verdict_id: current.record.verdict_id,
        ...(scope ? { simulation_id: scope } : {}),
      };
      const audit = [
        ...(current.audit ?? []),
        ...raced,
        claimAudit(record, "CLAIM_REFUND_EXECUTED", "DECIDED", now, {
          ...detail,
          amount_cents: effect.amount_cents,
          ledger_after: result.entry,
        }),
      ];
      return deps.verdicts.recordExecution(current.idempotency_key, {
        execution: "EXECUTED",
        events: [...current.events, busEntry("RefundExecuted", detail)],
        audit,
        record: current.record,
        layer: current.layer,
        checks: current.checks,
      });
    }
    if (result.code === "ALREADY_REFUNDED_FOR_CLAIM") {
      // Another proposal of this claim holds its refund: this one is superseded and announces nothing.
      const note = claimAudit(
        record,
        "CLAIM_REFUND_NOT_EXECUTED",
        "DECIDED",
        now,
        { verdict_id: current.record.verdict_id, code: result.code, reason: result.message },
        "WARN",
      );
      return deps.verdicts.recordExecution(current.idempotency_key, {
        execution: "REFUSED",
        events: [],
        audit: [note],
      });
    }
    // Lost a race for the balance, the automatic limit or against a review opened on the order: decide again.
    raced.push(
      claimAudit(
        record,
        "CLAIM_REFUND_NOT_EXECUTED",
        "RUNNING",
        now,
        {
          verdict_id: current.record.verdict_id,
          code: result.code,
          reason: `Refund of ${formatEur(effect.amount_cents)} EUR not reserved: ${result.message}; decided again against the ledger as it stands`,
        },
        "WARN",
      ),
    );
    const decision = decide(
      record,
      proposal,
      { order, ledgerEntry: result.entry, decidedAt: current.record.decided_at, now, lostRaces: raced.length },
      deps,
    );
    current = {
      ...current,
      record: decision.record,
      layer: decision.verdict.layer,
      checks: decision.verdict.checks,
      events: decision.events,
      audit: decision.audit,
      ...(decision.review ? { review: decision.review } : {}),
    };
    if (decision.verdict.verdict !== "ACCEPT") {
      const settled: ExecutionState = "NOT_APPLICABLE";
      return deps.verdicts.recordExecution(current.idempotency_key, {
        execution: settled,
        record: decision.record,
        layer: decision.verdict.layer,
        checks: decision.verdict.checks,
        events: decision.events,
        audit: [...raced, ...decision.audit],
        ...(decision.review ? { review: decision.review } : {}),
      });
    }
  }
  throw new KernelRetryError(
    `claim ${record.claim_id}: the refund kept losing reservation races (${MAX_DECISIONS} decisions); the message is retried`,
  );
}

/** Corrupt order data is a data problem for a person: the claim ends in NEEDS_REVIEW and a review opens. */
async function orderDataInvalid(record: ClaimRecord, error: Error, deps: KernelDeps): Promise<KernelOutcome> {
  const now = deps.clock.now();
  await performEffects(
    needsReview(record, now, "ORDER_DATA_INVALID", `The order data could not be used: ${error.message}`),
    deps,
  );
  return { outcome: "NEEDS_REVIEW", reasonCode: "ORDER_DATA_INVALID" };
}

function decidedPatch(record: ClaimVerdictDetail, execution: ExecutionState, now: number) {
  return {
    status: "DECIDED" as const,
    verdict: record.verdict,
    verdict_id: record.verdict_id,
    reason_code: record.reason_code,
    reason: record.reason,
    executed: execution === "EXECUTED",
    updated_at: new Date(now).toISOString(),
  };
}
