// The return's progress (docs/returns.md): the policy that says whether an ACCEPT waits for the item to come back and
// on which event it pays, the events a shop or warehouse posts, and the pure decider that says what the recorded
// events mean. Duplicates and any order of arrival give the same answer: the decider reads the set, not the sequence.
import * as z from "zod";
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, Order, ReturnPolicyFields } from "../integrity/contracts.ts";
import { claimLines, namedLines } from "./claim-lines.ts";
import { compare, money, parseMoney, type Money } from "./money.ts";
import { readOrder } from "./order-view.ts";
import type { RefundExecutedDetail, ReturnRequestedDetail } from "./events.ts";
import { creditFieldsOf } from "./outcomes.ts";

/** The event a return's progress is reported with (`POST /claims/{id}/return-events`). */
export const ReturnEventKindSchema = z.enum(["in_transit", "delivered", "inspected_ok", "inspected_failed"]);

/** A return event kind. */
export type ReturnEventKind = z.infer<typeof ReturnEventKindSchema>;

/** On which event a return-required refund is paid: the carrier's first scan, the delivery, or a passed inspection. */
export type PayOn = "in_transit" | "delivered" | "inspected";

/** The body of `POST /claims/{id}/return-events`: idempotent by `event_id`. */
export const ReturnEventBodySchema = z
  .object({
    event_id: z
      .string("event_id is required")
      .regex(/^[A-Za-z0-9_.:-]{1,128}$/, "event_id holds 1-128 letters, digits and _ . : -"),
    event: ReturnEventKindSchema,
    at: z.iso.datetime({ offset: true, message: "at must be an ISO timestamp such as 2026-06-01T12:00:00Z" }),
    carrier_ref: z.string().min(1).max(128).optional(),
  })
  .strict();

/** A return event as posted. */
export type ReturnEventBody = z.infer<typeof ReturnEventBodySchema>;

/** A return event as recorded: the body and when it was recorded. */
export type RecordedReturnEvent = ReturnEventBody & { readonly recorded_at: string };

/** The return policy of one claim, every field resolved (defaults applied, the category's own values first). */
export type ReturnPolicy = {
  readonly returnRequired: boolean;
  /** Per currency: a refund below it keeps the item (no return asked). */
  readonly keepItemBelow: Readonly<Record<string, number>>;
  readonly payOn: PayOn;
  readonly returnDeadlineDays: number;
  readonly refundDueDays: number;
};

/** Defaults of the fields a policy leaves out (`return_required` defaults to false: today's behaviour, pay at once). */
export const RETURN_POLICY_DEFAULTS = {
  pay_on: "delivered",
  return_deadline_days: 30,
  refund_due_days: 14,
} as const satisfies Partial<ReturnPolicyFields>;

const PAY_ORDER: readonly PayOn[] = ["in_transit", "delivered", "inspected"];

/** The return policy of a line of `category` (the category's own fields over the default's); none: no return asked. */
export function returnPolicyFor(contract: Pick<ClaimsContract, "returns">, category: string): ReturnPolicy | undefined {
  const returns = contract.returns;
  if (!returns) return undefined;
  const own = returns.categories && Object.hasOwn(returns.categories, category) ? returns.categories[category] : {};
  const merged = { ...returns, ...own };
  return {
    returnRequired: merged.return_required ?? false,
    keepItemBelow: merged.keep_item_below ?? {},
    payOn: merged.pay_on ?? RETURN_POLICY_DEFAULTS.pay_on,
    returnDeadlineDays: merged.return_deadline_days ?? RETURN_POLICY_DEFAULTS.return_deadline_days,
    refundDueDays: merged.refund_due_days ?? RETURN_POLICY_DEFAULTS.refund_due_days,
  };
}

/**
 * The return a refund of `refund` on lines of `categories` waits for, or `undefined` (pay at once): asked when any
 * line's policy requires it and the refund is not below that policy's `keep_item_below` in the refund's currency. Of
 * several lines the strictest applies: the latest `pay_on`, the shortest deadlines.
 */
export function returnNeeded(
  contract: Pick<ClaimsContract, "returns">,
  categories: readonly string[],
  refund: Money,
): ReturnPolicy | undefined {
  const needed = categories
    .map((c) => returnPolicyFor(contract, c))
    .filter((p): p is ReturnPolicy => p !== undefined && p.returnRequired && !keepsItem(p, refund));
  if (needed.length === 0) return undefined;
  return needed.reduce((a, b) => ({
    returnRequired: true,
    keepItemBelow: a.keepItemBelow,
    payOn: PAY_ORDER.indexOf(b.payOn) > PAY_ORDER.indexOf(a.payOn) ? b.payOn : a.payOn,
    returnDeadlineDays: Math.min(a.returnDeadlineDays, b.returnDeadlineDays),
    refundDueDays: Math.min(a.refundDueDays, b.refundDueDays),
  }));
}

/** Whether `refund` is below the policy's keep-the-item bound in its currency (no bound for the currency: never). */
function keepsItem(policy: ReturnPolicy, refund: Money): boolean {
  const bound = policy.keepItemBelow[refund.currency];
  if (bound === undefined) return false;
  const parsed = parseMoney(bound, refund.currency);
  return parsed.ok && compare(refund, parsed.money) < 0;
}

/** The shortest return deadline the policy gives any category (none: no return is ever asked). */
export function shortestReturnDeadlineDays(contract: Pick<ClaimsContract, "returns">): number | undefined {
  const r = contract.returns;
  if (!r) return undefined;
  const base = r.return_deadline_days ?? RETURN_POLICY_DEFAULTS.return_deadline_days;
  return Math.min(base, ...Object.values(r.categories ?? {}).map((c) => c.return_deadline_days ?? base));
}

/** The policy's longest return deadline in days, over its default and categories; undefined without a `returns` policy. */
export function longestReturnDeadlineDays(contract: Pick<ClaimsContract, "returns">): number | undefined {
  const r = contract.returns;
  if (!r) return undefined;
  const base = r.return_deadline_days ?? RETURN_POLICY_DEFAULTS.return_deadline_days;
  return Math.max(base, ...Object.values(r.categories ?? {}).map((c) => c.return_deadline_days ?? base));
}

/** The instant a return is due by: `decidedAt` plus the deadline in days (ISO). */
export function returnDeadlineAt(decidedAt: string, days: number): string {
  return new Date(Date.parse(decidedAt) + days * 86_400_000).toISOString();
}

/** What a claim awaiting its return knows: when it pays, by when the return is due, whether the deadline closed it. */
export type ReturnState = {
  readonly payOn: PayOn;
  readonly deadlineAt: string;
  /** The deadline passed with no event: the reservation was released and the claim ended RETURN_NOT_RECEIVED. */
  readonly closed?: "NOT_RECEIVED";
};

/** What the recorded events mean now. */
export type ReturnDecision =
  /** Nothing to do yet; `shipped`: an event came, so the deadline no longer applies. */
  | { readonly outcome: "WAIT"; readonly shipped: boolean }
  /** The policy's `pay_on` event came (the first that reached it named): the refund executes. */
  | { readonly outcome: "PAY"; readonly event_id: string }
  /** A person decides: the inspection failed, or an event came after the deadline closed the claim. */
  | { readonly outcome: "REVIEW"; readonly reason_code: ReturnReviewCode; readonly event_id: string }
  /** The deadline passed with no event: release the reservation, end the claim RETURN_NOT_RECEIVED. */
  | { readonly outcome: "NOT_RECEIVED" }
  /** Closed already and nothing came since. */
  | { readonly outcome: "CLOSED" };

/** The reason codes of the reviews a return opens. */
export type ReturnReviewCode = "RETURN_INSPECTION_FAILED" | "RETURN_AFTER_DEADLINE";

/** The events a `pay_on` is reached by. */
export const PAYS: Record<PayOn, readonly ReturnEventKind[]> = {
  in_transit: ["in_transit", "delivered", "inspected_ok"],
  delivered: ["delivered", "inspected_ok"],
  inspected: ["inspected_ok"],
};

/** The recorded events once each (the first recording of an event id wins), ordered by `at`, then by id. */
export function distinctReturnEvents(events: readonly RecordedReturnEvent[]): RecordedReturnEvent[] {
  const seen = new Map<string, RecordedReturnEvent>();
  for (const e of events) if (!seen.has(e.event_id)) seen.set(e.event_id, e);
  return [...seen.values()].sort((a, b) =>
    a.at === b.at ? (a.event_id < b.event_id ? -1 : 1) : Date.parse(a.at) - Date.parse(b.at),
  );
}

/**
 * What the recorded return events mean at `now` (pure; the set decides, not the order of arrival). A claim closed by
 * its deadline pays nothing: any event after that goes to a person. A failed inspection goes to a person, even when
 * an earlier event had reached `pay_on` in the same set (the shell pays on the first event that reaches it, so a set
 * holding both was not paid). Events that all happened (`at`) after the deadline go to a person too: the item was
 * shipped late. Else the first event reaching `pay_on` pays; else, with no event by the deadline, the return was not
 * received.
 */
export function decideReturn(state: ReturnState, events: readonly RecordedReturnEvent[], now: number): ReturnDecision {
  const distinct = distinctReturnEvents(events);
  if (state.closed === "NOT_RECEIVED") {
    const [late] = distinct;
    return late
      ? { outcome: "REVIEW", reason_code: "RETURN_AFTER_DEADLINE", event_id: late.event_id }
      : { outcome: "CLOSED" };
  }
  const failed = distinct.find((e) => e.event === "inspected_failed");
  if (failed) return { outcome: "REVIEW", reason_code: "RETURN_INSPECTION_FAILED", event_id: failed.event_id };
  // Shipped late: every event happened after the deadline. A person decides, whether or not the sweep closed the claim
  // first (so the outcome never depends on which of the two came first), and the refund never pays.
  const deadline = Date.parse(state.deadlineAt);
  const [first] = distinct;
  if (first && now >= deadline && distinct.every((e) => Date.parse(e.at) > deadline))
    return { outcome: "REVIEW", reason_code: "RETURN_AFTER_DEADLINE", event_id: first.event_id };
  const paying = distinct.find((e) => PAYS[state.payOn].includes(e.event));
  if (paying) return { outcome: "PAY", event_id: paying.event_id };
  if (distinct.length > 0) return { outcome: "WAIT", shipped: true };
  return now >= deadline ? { outcome: "NOT_RECEIVED" } : { outcome: "WAIT", shipped: false };
}

/** Whether `posted` repeats the recorded event of the same id (same kind, time and carrier reference). */
export function sameReturnEvent(recorded: ReturnEventBody, posted: ReturnEventBody): boolean {
  return (
    recorded.event === posted.event &&
    Date.parse(recorded.at) === Date.parse(posted.at) &&
    (recorded.carrier_ref ?? null) === (posted.carrier_ref ?? null)
  );
}

/** What an ACCEPT's return asks: the policy that applies and the lines (with units) to send back. */
export type PlannedReturn = {
  readonly policy: ReturnPolicy;
  readonly lines: readonly { line_id: string; quantity: number }[];
};

/**
 * The return an ACCEPT refunding `amountMinor` (the order's minor units) waits for, or `undefined`: pay at once (no
 * return policy, none required for the claim's lines, the refund below `keep_item_below`, or an order that does not
 * read). The lines are the ones the claim names with their units, else the claim's lines with all their units.
 */
export function plannedReturn(
  contract: Pick<ClaimsContract, "returns">,
  order: Order,
  claim: Pick<Claim, "category" | "lines" | "items">,
  amountMinor: number,
): PlannedReturn | undefined {
  if (!contract.returns) return undefined;
  const reading = readOrder(order);
  if (!reading.ok) return undefined;
  const { view } = reading;
  const named = namedLines(view, claim);
  const lines = named?.ok
    ? named.lines.map((n) => ({ line_id: n.line.line_id, quantity: n.units }))
    : claimLines(view, claim).map((l) => ({ line_id: l.line_id, quantity: l.quantity }));
  const categories = named?.ok
    ? named.lines.map((n) => n.line.category)
    : claimLines(view, claim).map((l) => l.category);
  const policy = returnNeeded(contract, categories, money(amountMinor, view.currency));
  return policy ? { policy, lines } : undefined;
}

/** The `ReturnRequested` of an ACCEPT's reserved refund (`refund`: its would-be `RefundExecuted`). */
export function returnRequestedDetail(
  refund: RefundExecutedDetail,
  planned: PlannedReturn,
  decidedAt: string,
  requestedAt: string,
): ReturnRequestedDetail {
  return {
    execution_id: refund.execution_id,
    claim_id: refund.claim_id,
    dfid: refund.dfid,
    order_id: refund.order_id,
    amount_eur: refund.amount_eur,
    verdict_id: refund.verdict_id,
    lines: planned.lines.map((l) => ({ line_id: l.line_id, quantity: l.quantity })),
    pay_on: planned.policy.payOn,
    return_by: returnDeadlineAt(decidedAt, planned.policy.returnDeadlineDays),
    refund_due_days: planned.policy.refundDueDays,
    requested_at: requestedAt,
    ...(refund.simulation_id ? { simulation_id: refund.simulation_id } : {}),
    ...creditFieldsOf(refund),
  };
}
