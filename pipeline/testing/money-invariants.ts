// The money invariants of docs/guarantees.md, checked over what the bus carried (at-least-once: repeats of one event are
// allowed, two different events with one id are not): every ClaimVerdict ACCEPT has exactly one RefundExecuted
// with its verdict_id and every RefundExecuted an ACCEPT or a reviewer's approval; nothing refunds more than its
// order; no claim refunds twice; automatic refunds on one order stay within the escalation limit in total. Given
// the ledgers as stored, also: every reservation was announced by one RefundExecuted of the same amount, and
// every RefundExecuted has its reservation (money the ledger holds that no event announced is a refund nobody pays).
// A return-required ACCEPT (docs/returns.md) has at most one RefundExecuted, the one its ReturnRequested reserved, and
// given the recorded return events none before the policy's pay_on nor on a failed inspection.
// Used by the property tests, the fault suites, the end-to-end tests and `npm run chaos`.
import { parseCents } from "../../core/kernel/index.ts";
import { parseMoney } from "../../core/kernel/money.ts";
import { creditViolations } from "./credit-invariants.ts";
import { returnViolations } from "./return-invariants.ts";
import { canonicalize } from "../../core/crew/index.ts";
import { DAY_MS } from "../../core/integrity/index.ts";
import type { CustomerLimits } from "../../core/integrity/index.ts";

/** A bus event as the publisher sent it or the local bus journaled it. */
export type PublishedEvent = { detailType: string; detail: Record<string, unknown> };

/** One order's ledger as stored: cents reserved per claim; `scope` is a simulation's ledger (absent: real refunds). */
export interface LedgerFact {
  orderId: string;
  scope?: string | undefined;
  claims: Readonly<Record<string, number>>;
  /** On an order with lines: what the ledger counts as refunded on each line (`line_cents`), in minor units. */
  lines?: Readonly<Record<string, number>> | undefined;
}

/** What the checks need beyond the events: each order's amount and the escalation limit (EUR); the ledgers when the caller can read them. */
export interface MoneyFacts {
  orderAmountEur: (orderId: string) => number | undefined;
  limitEur: number;
  /**
   * Orders in several currencies: each order's currency (absent: EUR), and the automatic limit of a currency in its
   * major units (absent: the policy has no bounds for it, so nothing is refunded automatically). Amounts of an order
   * are then compared in its currency's minor units, and no two currencies are ever added.
   */
  currencyOf?: (orderId: string) => string | undefined;
  limitIn?: (currency: string) => number | undefined;
  /** Orders with lines: what each line was paid, in the order's minor units (nothing refunds a line more). */
  linesOf?: (orderId: string) => Readonly<Record<string, number>> | undefined;
  ledgers?: readonly LedgerFact[];
  /** With customer limits: each order's customer (the order's `customer_id`) and the limits automatic refunds stay within. */
  customers?: { customerOf: (orderId: string) => string | undefined; limits: CustomerLimits };
  /** With returns: the return events recorded for a claim (its return flow's RETURN_EVENT_RECORDED), to check pay_on. */
  returnEvents?: (claimId: string) => readonly { event: string }[] | undefined;
}

/** The totals the checks saw, for a report. */
export interface MoneySummary {
  accepts: number;
  refunds: number;
  approvedRefunds: number;
  /** EUR refunded (every refund when no order names another currency). */
  refundedCents: number;
  /** Refunded per currency, in its minor units: never added across currencies. */
  refundedMinor: Record<string, number>;
  violations: string[];
}

const cents = (eur: unknown) => {
  const c = parseCents(eur);
  return c.ok ? c.cents : Number.NaN;
};

/** How an amount in minor units is named: EUR's "cents", another currency's "minor units of JPY". */
export const unit = (currency: string): string => (currency === "EUR" ? "cents" : `minor units of ${currency}`);

/** `amount` of order `orderId` in its currency's minor units (EUR: cents), NaN when it is not that currency's money. */
function minorOf(facts: Pick<MoneyFacts, "currencyOf">, orderId: string, amount: unknown): number {
  const currency = facts.currencyOf?.(orderId) ?? "EUR";
  if (currency === "EUR") return cents(amount);
  const parsed = parseMoney(amount, currency);
  return parsed.ok ? parsed.money.minor : Number.NaN;
}

/** Checks the invariants over `events`; returns the totals and every violation found (empty when all hold). */
/**
 * An event's amount as these checks count it: `amount_eur`, the amount in major units of its order's currency (its
 * name from before currencies). Events in another currency carry only `amount: { value, currency }` (docs/events.md):
 * its value is read as that number.
 */
export function withAmountEur<E extends PublishedEvent>(e: E): E {
  const amount = e.detail.amount as { value?: unknown } | null | undefined;
  if (e.detail.amount_eur !== undefined || typeof amount?.value !== "string") return e;
  return { ...e, detail: { ...e.detail, amount_eur: Number(amount.value) } };
}

export function checkMoneyInvariants(published: readonly PublishedEvent[], facts: MoneyFacts): MoneySummary {
  const events = published.map(withAmountEur);
  const violations: string[] = [];
  const distinct = new Map<string, PublishedEvent>();
  for (const e of events) {
    const id =
      e.detailType === "ClaimVerdict"
        ? e.detail.verdict_id
        : ["RefundExecuted", "ReturnRequested", "ExchangeRequested"].includes(e.detailType)
          ? e.detail.execution_id
          : e.detailType === "ReviewDecided" || e.detailType === "ReviewRequested"
            ? e.detail.review_id
            : undefined;
    if (typeof id !== "string") continue;
    const key = `${e.detailType}|${id}`;
    const seen = distinct.get(key);
    if (seen && canonicalize(seen.detail) !== canonicalize(e.detail))
      violations.push(`${e.detailType} ${id} was published twice with different details`);
    if (!seen) distinct.set(key, e);
  }
  const all = [...distinct.values()];
  const verdicts = all.filter((e) => e.detailType === "ClaimVerdict");
  const executions = all.filter((e) => e.detailType === "RefundExecuted");
  // A reviewer's RETRY of a failed refund pays the claim's one refund again under a new execution (`retry_of`):
  // checked apart (refundRetryViolations); a CLOSEd refund is not money paid and its reservation is released — unless
  // the CLOSE says it was paid out of band (`paid_out_of_band: true`): then it counts as refunded and stays reserved.
  const closedClaims = new Set(
    all
      .filter(
        (e) => e.detailType === "ReviewDecided" && e.detail.decision === "CLOSE" && e.detail.paid_out_of_band !== true,
      )
      .map((e) => String(e.detail.claim_id)),
  );
  const authorised = executions.filter((e) => e.detail.retry_of === undefined);
  const refunds = authorised.filter((e) => !closedClaims.has(String(e.detail.claim_id)));
  const approvals = new Map(
    all
      .filter((e) => e.detailType === "ReviewDecided" && e.detail.decision === "APPROVE")
      .map((e) => [String(e.detail.claim_id), e]),
  );

  const verdictsByClaim = new Map<string, PublishedEvent[]>();
  for (const v of verdicts)
    verdictsByClaim.set(String(v.detail.claim_id), [...(verdictsByClaim.get(String(v.detail.claim_id)) ?? []), v]);
  for (const [claimId, list] of verdictsByClaim)
    if (list.length > 1)
      violations.push(
        `claim ${claimId} has ${list.length} different verdicts (${list.map((v) => v.detail.verdict_id).join(", ")})`,
      );

  const accepts = verdicts.filter((v) => v.detail.verdict === "ACCEPT");
  // A return-required ACCEPT (docs/returns.md) announces ReturnRequested; its RefundExecuted waits for pay_on.
  const returns = new Map(
    all.filter((e) => /^(Return|Exchange)Requested$/.test(e.detailType)).map((e) => [String(e.detail.verdict_id), e]),
  );
  for (const a of accepts) {
    const mine = authorised.filter(
      (r) => r.detail.verdict_id === a.detail.verdict_id && r.detail.approved_by === undefined,
    );
    if (returns.has(String(a.detail.verdict_id)) ? mine.length > 1 : mine.length !== 1)
      violations.push(
        `ACCEPT ${String(a.detail.verdict_id)} of claim ${String(a.detail.claim_id)} has ${mine.length} RefundExecuted`,
      );
  }
  const refundsByClaim = new Map<string, PublishedEvent[]>();
  for (const r of authorised) {
    const claimId = String(r.detail.claim_id);
    refundsByClaim.set(claimId, [...(refundsByClaim.get(claimId) ?? []), r]);
    if (r.detail.approved_by === undefined) {
      const accept = accepts.find(
        (a) => a.detail.verdict_id === r.detail.verdict_id && a.detail.claim_id === r.detail.claim_id,
      );
      if (!accept)
        violations.push(
          `RefundExecuted ${String(r.detail.execution_id)} of claim ${claimId} has no ClaimVerdict ACCEPT ${String(r.detail.verdict_id)}`,
        );
    } else {
      const approval = approvals.get(claimId);
      if (!approval || approval.detail.execution_id !== r.detail.execution_id)
        violations.push(
          `RefundExecuted ${String(r.detail.execution_id)} of claim ${claimId} names approver ${String(r.detail.approved_by)} but no approved review carries it`,
        );
      else if (cents(approval.detail.amount_eur) !== cents(r.detail.amount_eur))
        violations.push(
          `claim ${claimId}: the approval granted ${String(approval.detail.amount_eur)} EUR but ${String(r.detail.amount_eur)} EUR was refunded`,
        );
    }
  }
  for (const [claimId, list] of refundsByClaim)
    if (list.length > 1) violations.push(`claim ${claimId} was refunded ${list.length} times`);

  const byOrder = new Map<string, { total: number; automatic: number; orderId: string }>();
  for (const r of refunds) {
    const orderId = String(r.detail.order_id);
    const key = `${String(r.detail.simulation_id ?? "")}|${orderId}`;
    const t = byOrder.get(key) ?? { total: 0, automatic: 0, orderId };
    const c = minorOf(facts, orderId, r.detail.amount_eur);
    t.total += c;
    if (r.detail.approved_by === undefined) t.automatic += c;
    byOrder.set(key, t);
  }
  const refundedMinor: Record<string, number> = {};
  for (const [key, t] of byOrder) {
    // Each order's amounts in its own currency: totals per currency, never one across currencies.
    const currency = facts.currencyOf?.(t.orderId) ?? "EUR";
    refundedMinor[currency] = (refundedMinor[currency] ?? 0) + t.total;
    const amount = facts.orderAmountEur(t.orderId);
    const limitMajor = currency === "EUR" ? facts.limitEur : facts.limitIn?.(currency);
    const limit = limitMajor === undefined ? 0 : minorOf(facts, t.orderId, limitMajor);
    if (amount === undefined) violations.push(`refunds on ${key} for an order that does not exist`);
    else {
      const paid = minorOf(facts, t.orderId, amount);
      const over = paidBackOver({ cash: t.total }, paid);
      if (over !== undefined) violations.push(`order ${key} refunded ${over} ${unit(currency)}, more than its ${paid}`);
    }
    if (!(t.automatic <= limit))
      violations.push(
        `order ${key} refunded ${t.automatic} ${unit(currency)} automatically, more than the ${limit}-${unit(currency).replace(/s$/, "")} limit`,
      );
  }
  const refundedCents = refundedMinor.EUR ?? 0;
  if (facts.ledgers) violations.push(...lineViolations(facts.ledgers, facts.linesOf));
  if (facts.ledgers) violations.push(...ledgerViolations(refunds, facts.ledgers, facts, [...returns.values()]));
  violations.push(...returnViolations(authorised, returns, facts.returnEvents));
  violations.push(...creditViolations(all, events));
  violations.push(...settlementViolations(events, executions));
  violations.push(...refundRetryViolations(events, executions, all));
  violations.push(...personViolations(all, refunds, accepts));
  if (facts.customers)
    violations.push(
      ...customerViolations(
        // The customer limits counted here are EUR's (the flat ones): other currencies' refunds have their own.
        refunds.filter((r) => (facts.currencyOf?.(String(r.detail.order_id)) ?? "EUR") === "EUR"),
        accepts,
        facts.customers,
      ),
    );
  return {
    accepts: accepts.length,
    refunds: refunds.length,
    approvedRefunds: refunds.filter((r) => r.detail.approved_by !== undefined).length,
    refundedCents,
    refundedMinor,
    violations,
  };
}

/**
 * The payment provider's side (docs/payments.md): every RefundSettled / RefundFailed names a RefundExecuted of
 * the same claim and amount, and never a simulation's; an execution is paid (settled) at most once and a claim
 * is paid by at most one execution; a failed refund is not money paid (an execution that failed and then
 * "settled" is a violation). Repeats of one announcement are allowed (at least once).
 */
function settlementViolations(events: readonly PublishedEvent[], refunds: readonly PublishedEvent[]): string[] {
  const violations: string[] = [];
  const byExecution = new Map(refunds.map((r) => [String(r.detail.execution_id), r]));
  const outcome = new Map<string, "RefundSettled" | "RefundFailed">();
  const paidClaims = new Map<string, Set<string>>();
  for (const e of events) {
    if (e.detailType !== "RefundSettled" && e.detailType !== "RefundFailed") continue;
    const executionId = String(e.detail.execution_id);
    const executed = byExecution.get(executionId);
    if (!executed) {
      violations.push(`${e.detailType} ${executionId} has no RefundExecuted`);
      continue;
    }
    if (executed.detail.simulation_id !== undefined)
      violations.push(`${e.detailType} ${executionId} pays a simulation's refund`);
    if (
      executed.detail.claim_id !== e.detail.claim_id ||
      cents(executed.detail.amount_eur) !== cents(e.detail.amount_eur)
    )
      violations.push(`${e.detailType} ${executionId} does not match its RefundExecuted (claim or amount)`);
    const before = outcome.get(executionId);
    if (before === "RefundFailed" && e.detailType === "RefundSettled")
      violations.push(`refund ${executionId} was reported failed, then paid`);
    outcome.set(executionId, before === "RefundFailed" ? before : e.detailType);
    if (e.detailType === "RefundSettled") {
      const claimId = String(e.detail.claim_id);
      const paid = paidClaims.get(claimId) ?? new Set<string>();
      paid.add(executionId);
      paidClaims.set(claimId, paid);
    }
  }
  for (const [claimId, paid] of paidClaims)
    if (paid.size > 1)
      violations.push(`claim ${claimId} was paid by ${paid.size} executions (${[...paid].join(", ")})`);
  return violations;
}

/**
 * A RETRY of a failed refund (docs/payments.md): its RefundExecuted names (`retry_of`) an execution of the same claim
 * and amount that the provider reported failed, a reviewer's ReviewDecided RETRY carries it, and a claim is
 * retried from one failed execution at most once. A CLOSEd execution was reported failed and is never paid.
 */
function refundRetryViolations(
  events: readonly PublishedEvent[],
  executions: readonly PublishedEvent[],
  all: readonly PublishedEvent[],
): string[] {
  const violations: string[] = [];
  const failed = new Set(
    events.filter((e) => e.detailType === "RefundFailed").map((e) => String(e.detail.execution_id)),
  );
  const settled = new Set(
    events.filter((e) => e.detailType === "RefundSettled").map((e) => String(e.detail.execution_id)),
  );
  const decided = all.filter((e) => e.detailType === "ReviewDecided");
  const byExecution = new Map(executions.map((r) => [String(r.detail.execution_id), r]));
  const retriedFrom = new Map<string, string>();
  for (const r of executions) {
    if (r.detail.retry_of === undefined) continue;
    const id = String(r.detail.execution_id);
    const from = String(r.detail.retry_of);
    const before = byExecution.get(from);
    if (
      !before ||
      before.detail.claim_id !== r.detail.claim_id ||
      cents(before.detail.amount_eur) !== cents(r.detail.amount_eur)
    )
      violations.push(`RefundExecuted ${id} retries ${from}, which is no refund of the same claim and amount`);
    else if (!failed.has(from)) violations.push(`RefundExecuted ${id} retries ${from}, which never failed`);
    if (!decided.some((d) => d.detail.decision === "RETRY" && d.detail.execution_id === id))
      violations.push(`RefundExecuted ${id} retries ${from} but no reviewer's RETRY carries it`);
    const other = retriedFrom.get(from);
    if (other !== undefined && other !== id) violations.push(`refund ${from} was retried twice (${other}, ${id})`);
    retriedFrom.set(from, id);
  }
  for (const d of decided)
    if (d.detail.decision === "CLOSE") {
      const id = String(d.detail.execution_id);
      if (!failed.has(id))
        violations.push(`claim ${String(d.detail.claim_id)}: refund ${id} was closed but never failed`);
      if (settled.has(id)) violations.push(`claim ${String(d.detail.claim_id)}: refund ${id} was closed, yet paid`);
    }
  return violations;
}

/**
 * Nothing automatic past a person's no: after a reviewer DENIED a claim on an order, or APPROVED one for less than
 * it proposed (the amount its ReviewRequested carried), no ACCEPT decided later on that order (same ledger scope)
 * has a refund.
 */
function personViolations(
  all: readonly PublishedEvent[],
  refunds: readonly PublishedEvent[],
  accepts: readonly PublishedEvent[],
): string[] {
  const violations: string[] = [];
  const requested = new Map(
    all.filter((e) => e.detailType === "ReviewRequested").map((e) => [String(e.detail.review_id), e.detail]),
  );
  for (const d of all.filter((e) => e.detailType === "ReviewDecided").map((e) => e.detail)) {
    const asked = requested.get(String(d.review_id));
    if (asked?.order_id === undefined) continue;
    const binds =
      d.decision === "DENY" ||
      (d.decision === "APPROVE" && asked.amount_eur !== undefined && cents(d.amount_eur) < cents(asked.amount_eur));
    if (!binds) continue;
    for (const r of refunds) {
      if (r.detail.approved_by !== undefined || r.detail.order_id !== asked.order_id) continue;
      if ((r.detail.simulation_id ?? "") !== (d.simulation_id ?? "")) continue;
      const accept = accepts.find((a) => a.detail.verdict_id === r.detail.verdict_id);
      if (accept && String(accept.detail.decided_at) > String(d.decided_at))
        violations.push(
          `claim ${String(r.detail.claim_id)} was refunded automatically on order ${String(asked.order_id)} after a person ${d.decision === "DENY" ? "denied" : "reduced"} claim ${String(d.claim_id)} on it`,
        );
    }
  }
  return violations;
}

/** Automatic refunds of one customer (the order's) stay within the customer limits in every window, per ledger scope. */
function customerViolations(
  refunds: readonly PublishedEvent[],
  accepts: readonly PublishedEvent[],
  customers: NonNullable<MoneyFacts["customers"]>,
): string[] {
  const violations: string[] = [];
  const windowMs = customers.limits.window_days * DAY_MS;
  const maxCents = cents(customers.limits.max_automatic_eur);
  const automatic = refunds.flatMap((r) => {
    const customer = customers.customerOf(String(r.detail.order_id));
    const accept = accepts.find((a) => a.detail.verdict_id === r.detail.verdict_id);
    if (r.detail.approved_by !== undefined || customer === undefined || !accept) return [];
    const key = `${String(r.detail.simulation_id ?? "")}|${customer}`;
    return [{ key, at: Date.parse(String(accept.detail.decided_at)), cents: cents(r.detail.amount_eur) }];
  });
  for (const a of automatic) {
    const inWindow = automatic.filter((b) => b.key === a.key && b.at <= a.at && b.at >= a.at - windowMs);
    const total = inWindow.reduce((sum, b) => sum + b.cents, 0);
    if (inWindow.length > customers.limits.max_automatic_refunds || total > maxCents) {
      violations.push(
        `customer ${a.key} had ${inWindow.length} automatic refunds (${total} cents) in a window, above customer_limits`,
      );
      break;
    }
  }
  return violations;
}

/** Reservations and RefundExecuted events must match one to one: same claim, order, ledger scope and cents. */
function ledgerViolations(
  refunds: readonly PublishedEvent[],
  ledgers: readonly LedgerFact[],
  facts: Pick<MoneyFacts, "currencyOf">,
  returns: readonly PublishedEvent[] = [],
): string[] {
  const violations: string[] = [];
  const place = (orderId: string, scope: string | undefined) => `${scope ? `${scope}|` : ""}${orderId}`;
  const reserved = new Map<string, { where: string; cents: number }>();
  for (const l of ledgers) {
    for (const [claimId, c] of Object.entries(l.claims)) {
      const where = place(l.orderId, l.scope);
      const seen = reserved.get(claimId);
      if (seen) violations.push(`claim ${claimId} holds reservations on ${seen.where} and ${where}`);
      else reserved.set(claimId, { where, cents: c });
    }
  }
  const announced = new Map<string, PublishedEvent>();
  for (const r of refunds) announced.set(String(r.detail.claim_id), r);
  // A return's reservation is announced by its ReturnRequested until pay_on executes it.
  const awaiting = new Map(returns.map((r) => [String(r.detail.claim_id), r]));
  for (const [claimId, r] of reserved) {
    const event = announced.get(claimId) ?? awaiting.get(claimId);
    if (!event)
      violations.push(`claim ${claimId} holds ${r.cents} cents on ${r.where} but no RefundExecuted announces it`);
    else if (minorOf(facts, String(event.detail.order_id), event.detail.amount_eur) !== r.cents)
      violations.push(
        `claim ${claimId}: RefundExecuted says ${String(event.detail.amount_eur)} EUR, the ledger of ${r.where} holds ${r.cents} cents`,
      );
  }
  for (const [claimId, event] of announced) {
    const where = place(
      String(event.detail.order_id),
      event.detail.simulation_id === undefined ? undefined : String(event.detail.simulation_id),
    );
    const r = reserved.get(claimId);
    if (!r)
      violations.push(
        `RefundExecuted ${String(event.detail.execution_id)} of claim ${claimId} has no reservation on any ledger`,
      );
    else if (r.where !== where)
      violations.push(
        `RefundExecuted ${String(event.detail.execution_id)} of claim ${claimId} names ${where}, the reservation is on ${r.where}`,
      );
  }
  return violations;
}

/** Never above a line: what a ledger counts on each line of an order with lines is at most what the line was paid. */
function lineViolations(ledgers: readonly LedgerFact[], linesOf: MoneyFacts["linesOf"]): string[] {
  const violations: string[] = [];
  for (const l of ledgers) {
    const paid = linesOf?.(l.orderId);
    for (const [lineId, held] of Object.entries(l.lines ?? {})) {
      const limit = paid && Object.hasOwn(paid, lineId) ? paid[lineId]! : undefined;
      if (limit === undefined)
        violations.push(`the ledger of ${l.orderId} counts ${held} on line ${lineId}, which the order does not have`);
      else if (held > limit)
        violations.push(
          `the ledger of ${l.orderId} counts ${held} on line ${lineId}, more than the ${limit} paid for it`,
        );
    }
  }
  return violations;
}

/**
 * Money back on one order against what was paid for it, in the order's minor units: cash refunded plus store credit
 * issued (none yet: issue 33's store credit adds it here) never above what was paid. The one place both the bus's
 * refunds and the provider's payouts are held to it: the total given back when it is more (NaN counts as more), else
 * undefined.
 */
export function paidBackOver(back: { cash: number; credit?: number }, paid: number): number | undefined {
  const total = back.cash + (back.credit ?? 0);
  return total <= paid ? undefined : total;
}

/** Turns events.jsonl lines (`detail-type`, `detail`) into published events. */
export function fromJournal(
  lines: readonly { "detail-type": string; detail: Record<string, unknown> }[],
): PublishedEvent[] {
  return lines.map((l) => ({ detailType: l["detail-type"], detail: l.detail }));
}
