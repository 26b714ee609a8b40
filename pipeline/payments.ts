// The payment side of a refund (docs/payments.md): the payment-provider port and the shell that pays an authorised
// refund (RefundExecuted) and records what the provider said — from its answer or from a webhook — announcing
// RefundSettled / RefundFailed once (where settlements are kept is ports.ts's SettlementRepository). load -> decide
// (core/kernel/settlement.ts) -> perform.
import { auditEvent } from "../core/history/audit-events.ts";
import { busEntry, reviewOpenedDetail } from "../core/kernel/events.ts";
import { DEFAULT_REVIEW_DUE_MS } from "../core/kernel/review.ts";
import { RefundExecutedDetailSchema } from "../core/kernel/events.ts";
import type { RefundExecutedDetail, RefundSettlementDetail } from "../core/kernel/events.ts";
import { applyProviderUpdate, refundReviewId, settlementCredit } from "../core/kernel/settlement.ts";
import type {
  PaymentProviderName,
  ProviderUpdate,
  SettlementRecord,
  SettlementStatus,
} from "../core/kernel/settlement.ts";
import { VersionConflictError } from "../core/errors.ts";
import { PaymentRehearsalError, PaymentUnavailableError } from "./errors.ts";
import { parseMoney, toMajor } from "../core/kernel/money.ts";
import { amountFields, type Amount } from "../core/kernel/public-amount.ts";
import { isCurrencyCode } from "../core/integrity/currency.ts";
export { PaymentRehearsalError, PaymentUnavailableError } from "./errors.ts";
import { settlementDfid } from "../core/kernel/claim-record.ts";
import type { AuditLog, Clock, ContextStore, EventPublisher, SettlementRepository } from "./ports.ts";
import type { PipelineDeps } from "./deps.ts";

/** One refund to pay: the idempotency key is the execution id, so a repeated call never pays twice. */
export type ProviderRefundRequest = {
  readonly executionId: string;
  readonly claimId: string;
  readonly orderId: string;
  /** The shop's payment to refund (Stripe: `pi_…` payment intent or `ch_…` charge). */
  readonly paymentRef: string | undefined;
  /** Minor units (cents). */
  readonly amountMinor: number;
  readonly currency: string;
};

/** What the provider answered: paid, still on its way (a webhook tells the rest), or refused with a reason. */
export type ProviderRefundResult = {
  readonly status: SettlementStatus;
  readonly providerRef?: string;
  readonly failureReason?: string;
};

/** A payment provider that refunds: throws PaymentUnavailableError when the call may be retried (network, 5xx, 429). */
export interface PaymentProvider {
  /** Its name in the registry (app/payment-provider.ts), recorded on the settlement. */
  readonly name: PaymentProviderName;
  /** Whether it refunds the order's payment (`payment_ref`): an order without one is then a FAILED refund, and the provider is not called. */
  readonly needsPaymentRef: boolean;
  refund(request: ProviderRefundRequest): Promise<ProviderRefundResult>;
  /**
   * Issues store credit to the customer of the order's payment (docs/returns.md#outcomes): `amountMinor` is the base
   * plus the bonus; the execution id is the idempotency key, so a repeated call never credits twice. A provider
   * without it refuses store credit: the credit is FAILED with the reason, and its review decides (RETRY / CLOSE).
   */
  issueCredit?(request: ProviderRefundRequest): Promise<ProviderRefundResult>;
}

/** One webhook delivery as the route received it: the raw body (signatures cover its bytes) and the headers (lower-case names). */
export type WebhookDelivery = {
  readonly rawBody: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
};

/** What a webhook delivery says once verified: nothing when unverified (with what is wrong), else its event and, for a refund of this app, the provider's word on it. */
export type WebhookReading =
  | { ok: false; message: string }
  | { ok: true; eventId: string; type: string; update?: ProviderUpdate & { claim_id: string } };

/**
 * What a provider's adapter is built from: its declared secrets by role (read on use) and its declared settings
 * by role (undefined when unset), as app/payment-providers/ declares them.
 */
export type PaymentAdapterInputs<Secret extends string, Setting extends string> = {
  readonly secret: (role: Secret) => string;
  readonly settings: Readonly<Record<Setting, string | undefined>>;
};

/**
 * A payment provider's adapter, as the composition root builds it (the shape of Powertools' persistence layers:
 * one interface, each implementation built from its own options and injected clients): its port from its
 * inputs, and, when it has a webhook, the verifier of its deliveries (`signingSecret` its declared webhook secret,
 * `nowMs` the injected clock's time).
 */
export type PaymentAdapter<Secret extends string = string, Setting extends string = string> = {
  readonly name: PaymentProviderName;
  readonly createPort: (inputs: PaymentAdapterInputs<Secret, Setting>) => PaymentProvider;
  readonly readWebhook?: (delivery: WebhookDelivery, signingSecret: string, nowMs: number) => WebhookReading;
};

/** What paying and recording need. */
export type PaymentDeps = {
  readonly settlements: SettlementRepository;
  readonly provider: PaymentProvider;
  readonly orders: Pick<ContextStore, "getOrder">;
  readonly publisher: EventPublisher;
  readonly audit: Pick<AuditLog, "appendAll">;
  readonly clock: Clock;
  /** How long a failed refund's review may wait (the policy's review_due_days / _hours; default 2 days). */
  readonly reviewDueMs?: () => number;
};

/** The audit flow of a claim's settlement: its own DFID, so the claim's decision flow (and its replay) is unchanged. */
export { settlementDfid };

/** What one RefundExecuted came to. */
export type PayOutcome = "simulation: never paid" | "already recorded" | "superseded" | SettlementStatus;

/**
 * Pays one authorised refund. A simulation's refund is never paid. A redelivery of an execution already
 * settled or failed changes nothing (it re-announces an unannounced outcome); a PENDING one asks the provider
 * again with the same idempotency key, so a crash between the provider call and its record never pays twice.
 */
export async function payRefund(deps: PaymentDeps, detail: RefundExecutedDetail): Promise<PayOutcome> {
  if (detail.simulation_id !== undefined) return "simulation: never paid";
  return settle(deps, detail);
}

/**
 * Rehearses the provider's answer for a batch run's refund (docs/payments.md, "Rehearsing a failed refund in a
 * batch"): the same settlement record, announcement and failed refund's review as a real answer, but only for a
 * simulation's refund and only with the simulated provider (which moves no money). The settlement carries the run's
 * `simulation_id`, so what it announces is the run's, and a RETRY of it is a simulation's refund again.
 */
export async function rehearsePayment(deps: PaymentDeps, detail: RefundExecutedDetail): Promise<PayOutcome> {
  if (detail.simulation_id === undefined)
    throw new PaymentRehearsalError(
      `refund ${detail.execution_id} of claim ${detail.claim_id} is not a simulation's: only a batch run's refund is rehearsed`,
    );
  if (deps.provider.name !== "simulated")
    throw new PaymentRehearsalError(
      `a batch run's refund is rehearsed with the simulated provider only, not ${JSON.stringify(deps.provider.name)}`,
    );
  return settle(deps, detail);
}

/** What rehearsing the provider's answer for a claim's refund came to: the settlement after it, or why nothing ran. */
export type ClaimRehearsal =
  | { ok: true; outcome: PayOutcome; settlement: SettlementRecord | undefined }
  | { ok: false; code: "NOT_FOUND" | "NOT_EXECUTED" | "NOT_A_SIMULATION" | "NO_SETTLEMENTS"; message: string };

/** What rehearsing a claim's refund needs: the pipeline's ports and the simulated provider answering for it. */
export type ClaimRehearsalDeps = Pick<PipelineDeps, "claims" | "audit" | "orders" | "publisher" | "clock" | "agent"> & {
  readonly settlements: SettlementRepository | undefined;
  /** The simulated provider (adapters/payments/simulated.ts), never a configured one: rehearsePayment refuses any other. */
  readonly provider: PaymentProvider;
};

/**
 * Rehearses the provider's answer for the refund a batch run's claim executed (the `payment:` step of a scenario
 * file, docs/config.md): the claim's RefundExecuted, as its audit recorded it, paid through `rehearsePayment` — under
 * the execution its settlement waits on when a reviewer's RETRY moved it to a new one.
 */
export async function rehearseClaimPayment(claimId: string, deps: ClaimRehearsalDeps): Promise<ClaimRehearsal> {
  const record = await deps.claims.getClaim(claimId);
  if (!record) return { ok: false, code: "NOT_FOUND", message: `claim ${claimId} not found` };
  if (record.simulation_id === undefined)
    return {
      ok: false,
      code: "NOT_A_SIMULATION",
      message: `claim ${claimId} is not a batch run's: only a simulation's refund is rehearsed, a real one is paid`,
    };
  if (!deps.settlements)
    return { ok: false, code: "NO_SETTLEMENTS", message: "nothing records settlements here: no refund is paid" };
  const executed = (await deps.audit.byDfid(record.dfid))
    .filter((e) => e.event_type === "CLAIM_REFUND_EXECUTED" && e.details.claim_id === claimId)
    .at(-1);
  const detail = executed && RefundExecutedDetailSchema.strip().safeParse(executed.details);
  if (!detail?.success)
    return {
      ok: false,
      code: "NOT_EXECUTED",
      message: `claim ${claimId} has no executed refund (it ended ${record.verdict ?? record.status}${record.reason_code ? ` ${record.reason_code}` : ""}): there is nothing to pay`,
    };
  const paymentDeps: PaymentDeps = {
    settlements: deps.settlements,
    provider: deps.provider,
    orders: deps.orders,
    publisher: deps.publisher,
    audit: deps.audit,
    clock: deps.clock,
    reviewDueMs: () => deps.agent.review?.dueMs ?? DEFAULT_REVIEW_DUE_MS,
  };
  // After a reviewer's RETRY the settlement waits on the retry's execution: the provider answers that one.
  const current = await deps.settlements.get(claimId);
  const execution = current?.status === "PENDING" ? { execution_id: current.execution_id } : {};
  const outcome = await rehearsePayment(paymentDeps, { ...detail.data, ...execution });
  return { ok: true, outcome, settlement: await deps.settlements.get(claimId) };
}

/** Records the refund's settlement, asks the provider (unless it is recorded already) and records its answer. */
async function settle(deps: PaymentDeps, detail: RefundExecutedDetail): Promise<PayOutcome> {
  const at = new Date(deps.clock.now()).toISOString();
  // No read first: create is conditional on there being none and answers the stored one when there is (a
  // redelivery, or a RETRY's newer execution), so the first delivery reads nothing (issue 37).
  const record = await deps.settlements.create({
    claim_id: detail.claim_id,
    dfid: detail.dfid,
    order_id: detail.order_id,
    ...settledAmount(detail),
    verdict_id: detail.verdict_id,
    provider: deps.provider.name,
    execution_id: detail.execution_id,
    status: "PENDING",
    requested_at: at,
    updated_at: at,
    attempts: [],
    ...(detail.simulation_id === undefined ? {} : { simulation_id: detail.simulation_id }),
    ...creditOf(detail),
    version: 1,
  });
  if (record.execution_id !== detail.execution_id) return "superseded";
  if (record.status !== "PENDING") {
    await announce(deps, record);
    return "already recorded";
  }
  const order = await deps.orders.getOrder(detail.order_id);
  // The verdict's amount counts the order's currency (amount_eur is its name from before currencies).
  // An event that carries `amount` names its currency; one stored before it counts the order's.
  const currency = detail.amount?.currency ?? record.currency ?? order?.currency ?? "EUR";
  const minor = isCurrencyCode(currency)
    ? parseMoney(record.amount_eur, currency)
    : parseMoney(record.amount_eur, "EUR");
  if (!minor.ok) throw new PaymentUnavailableError(`refund ${detail.execution_id}: ${minor.message}`);
  const answer =
    deps.provider.needsPaymentRef && !order?.payment_ref
      ? {
          status: "FAILED" as const,
          failureReason: order
            ? `order ${detail.order_id} has no payment_ref to refund`
            : `order ${detail.order_id} is not known`,
        }
      : await pay(deps.provider, record, {
          executionId: detail.execution_id,
          claimId: detail.claim_id,
          orderId: detail.order_id,
          paymentRef: order?.payment_ref,
          amountMinor: minor.money.minor,
          currency,
        });
  const after = await recordProviderUpdate(
    deps,
    detail.claim_id,
    {
      execution_id: detail.execution_id,
      status: answer.status,
      ...(answer.providerRef === undefined ? {} : { provider_ref: answer.providerRef }),
      ...(answer.failureReason === undefined ? {} : { failure_reason: answer.failureReason }),
    },
    record,
  );
  return after?.status ?? "PENDING";
}

/**
 * Asks the provider to pay `request`: a refund, or for store credit (docs/returns.md#outcomes) a credit of the base
 * the ledger reserved plus the policy's bonus — refused, as a FAILED answer, by a provider that issues none.
 */
async function pay(
  provider: PaymentProvider,
  record: SettlementRecord,
  request: ProviderRefundRequest,
): Promise<ProviderRefundResult> {
  if (record.outcome !== "STORE_CREDIT") return provider.refund(request);
  if (!provider.issueCredit)
    return { status: "FAILED", failureReason: `payment provider ${provider.name} does not issue store credit` };
  return provider.issueCredit({ ...request, amountMinor: request.amountMinor + (record.bonus_minor ?? 0) });
}

/**
 * Records the provider's word on an execution (its answer, or a webhook): idempotent and out-of-order safe
 * (applyProviderUpdate), retried on a lost race, then announces a new SETTLED / FAILED once. Returns the
 * record after the call, or undefined when the claim has no settlement. `held`, the settlement as the caller last
 * read or wrote it, spares the first read (issue 37): it is only the base of a write conditioned on its version, so
 * a stale one loses that write and the next attempt reads; an update that would change nothing in it is checked
 * against a fresh read.
 */
export async function recordProviderUpdate(
  deps: PaymentDeps,
  claimId: string,
  update: ProviderUpdate,
  held?: SettlementRecord,
): Promise<SettlementRecord | undefined> {
  for (let attempt = 0; ; attempt++) {
    const at = new Date(deps.clock.now()).toISOString();
    const tried = attempt === 0 && held ? applyProviderUpdate(held, update, at) : undefined;
    const record = tried?.changed ? held : await deps.settlements.get(claimId);
    if (!record) return undefined;
    const applied = tried?.changed ? tried : applyProviderUpdate(record, update, at);
    if (!applied.changed) {
      await announce(deps, record);
      return record;
    }
    try {
      await deps.settlements.update(applied.next);
    } catch (error) {
      if (error instanceof VersionConflictError && attempt < 5) continue;
      throw error;
    }
    await announce(deps, applied.next);
    return applied.next;
  }
}

/** The bus detail of a settlement's current execution. */
export function settlementDetail(record: SettlementRecord): RefundSettlementDetail {
  return {
    execution_id: record.execution_id,
    claim_id: record.claim_id,
    dfid: record.dfid,
    order_id: record.order_id,
    amount_eur: record.amount_eur,
    provider: record.provider,
    ...(record.provider_ref === undefined ? {} : { provider_ref: record.provider_ref }),
    ...(record.failure_reason === undefined ? {} : { failure_reason: record.failure_reason }),
    ...(record.simulation_id === undefined ? {} : { simulation_id: record.simulation_id }),
    ...settlementCredit(record),
  };
}

/**
 * Publishes RefundSettled / RefundFailed (and audits it) for a status not yet announced, then marks it announced.
 * At least once: a crash before the mark announces again on the next delivery (consumers dedupe by execution id
 * and detail-type).
 */
export async function announce(
  deps: Pick<PaymentDeps, "settlements" | "audit" | "publisher" | "clock" | "reviewDueMs">,
  record: SettlementRecord,
): Promise<void> {
  if (record.status === "PENDING" || record.announced === record.status) return;
  const detail = settlementDetail(record);
  const at = new Date(deps.clock.now()).toISOString();
  const flow = { dfid: settlementDfid(record.claim_id), state: record.status, at };
  await deps.audit.appendAll([
    record.status === "SETTLED"
      ? auditEvent({ ...flow, type: "REFUND_SETTLED", details: detail })
      : auditEvent({
          ...flow,
          type: "REFUND_FAILED",
          severity: "WARN",
          details: { ...detail, review_id: record.review?.review_id ?? refundReviewId(record.execution_id) },
        }),
  ]);
  // A failure opens the refund's own review: ReviewOpened tells people it waits (docs/reviews.md#the-desk).
  const review = record.status === "FAILED" ? record.review : undefined;
  await deps.publisher.publish([
    record.status === "SETTLED"
      ? busEntry("RefundSettled", settlementEvent(record, detail))
      : busEntry("RefundFailed", settlementEvent(record, detail)),
    ...(review && review.execution_id === record.execution_id
      ? [
          busEntry(
            "ReviewOpened",
            reviewOpenedDetail(
              {
                review_id: review.review_id,
                claim_id: record.claim_id,
                dfid: record.dfid,
                origin: review.origin,
                reason_code: review.reason_code,
                reason: review.reason,
                order_id: record.order_id,
                ...publicAmountOf(record),
                requested_at: review.requested_at,
                ...(record.simulation_id === undefined ? {} : { simulation_id: record.simulation_id }),
              },
              deps.reviewDueMs?.() ?? DEFAULT_REVIEW_DUE_MS,
            ),
          ),
        ]
      : []),
  ]);
  // The mark is written on `record` itself, conditioned on its version: unchanged since, it is the stored one, so no
  // read is needed (issue 37). Changed since, the mark goes on the stored one if it still holds this status.
  if (await markAnnounced(deps, record, record)) return;
  const fresh = await deps.settlements.get(record.claim_id);
  if (!fresh || fresh.status !== record.status || fresh.execution_id !== record.execution_id) return;
  // Someone else changed it: the next delivery announces again if needed (consumers dedupe).
  await markAnnounced(deps, fresh, record);
}

/** Writes `base` marked as `announced` its status, conditioned on its version: false when it was changed since. */
async function markAnnounced(
  deps: Pick<PaymentDeps, "settlements">,
  base: SettlementRecord,
  announced: SettlementRecord,
): Promise<boolean> {
  try {
    await deps.settlements.update({ ...base, announced: announced.status, version: base.version + 1 });
    return true;
  } catch (error) {
    if (error instanceof VersionConflictError) return false;
    throw error;
  }
}

/**
 * What a settlement records of a RefundExecuted's amount: `amount_eur` (the amount in major units of its currency,
 * its name from before currencies) and the currency when it is not EUR.
 */
function settledAmount(detail: RefundExecutedDetail): { amount_eur: number; currency?: string } {
  if (detail.amount === undefined) return { amount_eur: detail.amount_eur ?? 0 };
  const parsed = parseMoney(detail.amount.value, detail.amount.currency, { strings: true });
  if (!parsed.ok) throw new PaymentUnavailableError(`refund ${detail.execution_id}: ${parsed.message}`);
  return {
    amount_eur: toMajor(parsed.money),
    ...(detail.amount.currency === "EUR" ? {} : { currency: detail.amount.currency }),
  };
}

/** What a settlement records of a store credit's RefundExecuted: the outcome and its bonus in minor units. */
function creditOf(detail: RefundExecutedDetail): {
  outcome?: "STORE_CREDIT";
  bonus_minor?: number;
  bonus_pct?: number;
} {
  if (!detail.credit) return {};
  const { bonus, bonus_pct } = detail.credit;
  const parsed = parseMoney(bonus.value, bonus.currency, { strings: true });
  if (!parsed.ok) throw new PaymentUnavailableError(`store credit ${detail.execution_id}: ${parsed.message}`);
  return { outcome: "STORE_CREDIT", bonus_minor: parsed.money.minor, bonus_pct };
}

/** A settlement's amount as events carry it: `amount` in its currency, `amount_eur` only for EUR. */
function publicAmountOf(record: SettlementRecord): { amount?: Amount; amount_eur?: number } {
  const currency = record.currency ?? "EUR";
  const parsed = parseMoney(record.amount_eur, currency);
  return parsed.ok ? amountFields(parsed.money) : { amount_eur: record.amount_eur };
}

/** The RefundSettled / RefundFailed detail on the bus: the audit's detail with the amount in its currency. */
function settlementEvent(record: SettlementRecord, detail: RefundSettlementDetail): RefundSettlementDetail {
  const { amount_eur: _recorded, ...rest } = detail;
  return { ...rest, ...publicAmountOf(record) };
}
