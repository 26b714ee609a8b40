// Replay of a refund's bookkeeping: an ACCEPT's reservation on the order's ledger (exactly the planned amount),
// and the refund a reviewer's APPROVE executed (at most the proposal).
import { assertLedgerEntry, formatEur } from "../../kernel/index.ts";
import type { PolicyProposal } from "../../integrity/index.ts";
import { executionIdFor, planExecution } from "../../kernel/execution.ts";
import { describeMoney, parseMoney } from "../../kernel/money.ts";
import type { Money } from "../../kernel/money.ts";
import type { ClaimVerdict } from "../../kernel/kernel.ts";
import { approvalExecutionIdFor } from "../../kernel/review.ts";
import { creditFields, outcomeOfClaim } from "../../kernel/outcomes.ts";
import type { ReplayDetails } from "./events.ts";
import { enter, label, message, scope, unused } from "./context.ts";
import type { Ctx, Flow } from "./context.ts";
import { returnRequested } from "./returns.ts";
import type { ReturnInputs } from "./returns.ts";

/** An ACCEPT's refund: the ledger reserved exactly the planned amount, or refused it with a ledger code. */
export function execution(
  ctx: Ctx,
  verdict: ClaimVerdict,
  proposal: PolicyProposal,
  verdictId: string,
  orderTotal: Money | undefined,
  flow: Flow,
  /** The order's currency: the plan's minor units are its. */
  currency = "EUR",
  /** What the reservation was decided on, for the return it asks or not (docs/returns.md). */
  returns?: ReturnInputs,
): void {
  const s = scope(ctx, "execution");
  const plan = planExecution(verdict, proposal, flow.claimId, currency).find((e) => e.type === "refund.reserve");
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
    // The ledger and the event count the order's currency in its minor units (EUR: cents; JPY: whole yen).
    const currency = orderTotal?.currency ?? "EUR";
    const reserved = parseMoney(plan.amount_eur, currency);
    const minor = currency === "EUR" ? plan.amount_cents : reserved.ok ? reserved.money.minor : Number.NaN;
    const what =
      currency === "EUR"
        ? `${formatEur(plan.amount_cents)} EUR`
        : reserved.ok
          ? describeMoney(reserved.money)
          : "amount";
    const expected = {
      execution_id: executionIdFor(verdictId),
      claim_id: flow.claimId,
      dfid: flow.dfid,
      order_id: plan.order_id,
      amount_eur: plan.amount_eur,
      amount_cents: minor,
      verdict_id: verdictId,
    };
    // What the ACCEPT gives, asked again of the recorded policy, order and claim (docs/returns.md#outcomes): store
    // credit names its bonus; a refund names none (the key is compared only when either side holds it).
    const outcome =
      returns?.order && Number.isSafeInteger(minor)
        ? outcomeOfClaim(returns.contract, returns.order, returns.claim, minor, currency)
        : undefined;
    const credit = outcome ? creditFields(outcome) : {};
    if (credit.credit !== undefined || raw.credit !== undefined) Object.assign(expected, { credit: credit.credit });
    const exchange = outcome?.outcome === "EXCHANGE";
    if (exchange || raw.exchange !== undefined) Object.assign(expected, { exchange: exchange || undefined });
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
    if (consistent) {
      s.expect(
        ledger.order_id === plan.order_id && ledger.claims[flow.claimId] === minor,
        `${label(r)} ledger_after does not hold this claim's ${what} on ${plan.order_id}`,
      );
      s.expect(
        orderTotal !== undefined && ledger.refunded_cents <= orderTotal.minor,
        `${label(r)} ledger_after refunds more than the order`,
      );
    }
    // An exchange asks no return (docs/returns.md#outcomes): its reservation is announced by ExchangeRequested.
    const awaiting = exchange
      ? undefined
      : returns
        ? returnRequested(
            ctx,
            s,
            returns,
            {
              execution_id: expected.execution_id,
              claim_id: expected.claim_id,
              dfid: expected.dfid,
              order_id: expected.order_id,
              amount_eur: expected.amount_eur,
              verdict_id: expected.verdict_id,
              ...(flow.simulationId === undefined ? {} : { simulation_id: flow.simulationId }),
              ...credit,
              amount_minor: minor,
            },
            r.event.created_at,
          )
        : undefined;
    const given = credit.credit ? ` as store credit (+${credit.credit.bonus.value} bonus)` : "";
    s.done(
      exchange
        ? `exchange of ${what} on ${plan.order_id} reserved (no money moves)`
        : `refund of ${what} on ${plan.order_id} executed${given}${awaiting ? `, ${awaiting}` : ""}`,
    );
    return;
  }
}

/**
 * The refund a reviewer's APPROVE executed (CLAIM_REFUND_EXECUTED): the approval's execution, the escalated verdict
 * and order, the approved amount (more than 0, at most the proposal) and its approver. False when the event is
 * missing or unreadable (the review's replay stops there).
 */
export function approvedRefund(
  ctx: Ctx,
  flow: Flow,
  reviewId: string,
  at: string,
  dd: ReplayDetails<"REVIEW_DECIDED">,
  cause: {
    verdictId?: string;
    amountEur?: number | null | undefined;
    orderId?: string | null | undefined;
    currency?: string | undefined;
  },
): boolean {
  const refund = enter(ctx, "refund_executed", "execution");
  if (!refund) return false;
  const e = scope(ctx, "execution");
  const { raw, r: rr } = refund.CLAIM_REFUND_EXECUTED;
  // Minor units of the order's currency (EUR: cents); amount_eur is the amount's name from before currencies.
  const currency = cause.currency ?? "EUR";
  const minorOf = (v: unknown) => {
    const parsed = parseMoney(v, currency);
    return parsed.ok ? { ok: true as const, cents: parsed.money.minor } : { ok: false as const };
  };
  const granted = minorOf(dd.amount_eur);
  const proposed = minorOf(cause.amountEur);
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
    `${at} approves ${String(dd.amount_eur)} ${currency}: more than 0 and at most the proposed ${String(cause.amountEur)} ${currency}`,
  );
  e.expect(typeof raw.approved_by === "string" && raw.approved_by.length > 0, `${label(rr)} names no approver`);
  e.done(`refund of ${String(dd.amount_eur)} ${currency} executed on a reviewer's approval`);
  return true;
}
