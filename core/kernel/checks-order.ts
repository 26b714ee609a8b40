// The kernel's layers on the order (docs/kernel.md): the order exists (3), its category (4), its return window (5), the
// amount (6), the refundable balance (7) and its customer (8b) — every one of them can only REJECT.
import { KernelInputError } from "../integrity/errors.ts";
import { formatDuration, parseIsoMs } from "../integrity/time.ts";
import { LINE_RULES, type LineRuleContext } from "./line-rules.ts";
import {
  check,
  fail,
  PASSED,
  passWith,
  show,
  SKIPPED,
  subjectOf,
  type CheckResult,
  type KernelState,
} from "./kernel-state.ts";
import { allocate, claimAsProposed, claimLines, namedLines } from "./claim-lines.ts";
import type { NamedLines } from "./claim-lines.ts";
import type { OrderLineView } from "./order-view.ts";
import { readOrder } from "./order-view.ts";
import { currencyPolicy, refundableOf, returnWindowDays } from "./policy.ts";
import type { ClaimReasonCode } from "./reason-codes.ts";
import { assertLedgerEntry, reservedForClaim, type LedgerEntry } from "./ledger.ts";
import { compare, describeMoney, max, money, parseMoney, subtract, sum, zero } from "./money.ts";

// ---- layer 3 — order: an order is named and the context store knows it (the order handed in must be that order,
// and the ledger entry its own and sound, or the caller wired the kernel wrongly).

export const orderIdPresent = check("order_id_present", ["ORDER_ID_MISSING"], ({ orderId }) =>
  typeof orderId === "string" && orderId.trim() !== "" ? PASSED : fail("ORDER_ID_MISSING", "Proposal has no order id"),
);

export const orderExists = check("order_exists", ["ORDER_NOT_FOUND"], ({ input, orderId }) => {
  const { order, ledgerEntry, claim, contract } = input;
  if (!order)
    return fail(
      "ORDER_NOT_FOUND",
      input.orderAbsentFrom === "shop_api"
        ? `Order ${show(orderId)} not found: the shop's order API has no such order (it answered 404)`
        : `Order ${show(orderId)} not found in the context store`,
    );
  if (order.order_id !== orderId)
    throw new KernelInputError(`kernel was handed order ${order.order_id} for a proposal naming ${show(orderId)}`);
  const purchaseMs = parseIsoMs(order.purchase_date);
  if (purchaseMs === undefined)
    throw new KernelInputError(
      `order ${order.order_id}: purchase_date ${show(order.purchase_date)} is not an ISO-8601 date`,
    );
  const reading = readOrder(order);
  if (!reading.ok) throw new KernelInputError(`order ${order.order_id}: ${reading.problem}`);
  const { view } = reading;
  if (ledgerEntry) {
    if (ledgerEntry.order_id !== order.order_id)
      throw new KernelInputError(
        `kernel was handed the ledger entry of order ${ledgerEntry.order_id} for order ${order.order_id}`,
      );
    try {
      assertLedgerEntry(ledgerEntry);
    } catch (cause) {
      throw new KernelInputError(`kernel was handed a corrupt ledger entry for order ${order.order_id}`, { cause });
    }
  }
  const orderAmount = refundableOf(view, contract);
  const policy = currencyPolicy(contract, view.currency);
  // A proposal that names lines (aligned with the claim's at layer 8) is judged on them (core/kernel/claim-lines.ts).
  const asked = claimAsProposed(claim, input.proposal);
  const named = namedLines(view, asked);
  return passWith({
    subject: { order, view, purchaseMs, orderAmount, lines: claimLines(view, asked), policy, named },
  });
});

// ---- layer 3 — the claim's lines: a claim that names lines names lines of the order, at most the units bought. Not
// run (nor traced) for a claim in today's form.

export const linesInOrder = check("lines_in_order", ["LINE_NOT_IN_ORDER"], (s) => {
  const { named } = subjectOf(s);
  if (named === undefined) return SKIPPED;
  return named.ok ? PASSED : fail("LINE_NOT_IN_ORDER", `Claim names ${named.problem}`);
});

// ---- layer 4 — category: the ORDER's category (never the claim's) is refundable, and this agent may refund it. The
// claim's lines are checked (core/kernel/order-view.ts); a claim whose line is not known yet (LINE_AMBIGUOUS) is
// rejected only when none of its candidate lines could pass.

export const categoryAllowed = check("category_allowed", ["CATEGORY_NOT_ALLOWED"], (s) => {
  const allowed = s.input.contract.allowed_refund_categories;
  const ctx = lineRuleContext(s);
  return firstFailing(subjectOf(s), (line) =>
    LINE_RULES.CATEGORY_NOT_ALLOWED(ctx, line)
      ? PASSED
      : fail(
          "CATEGORY_NOT_ALLOWED",
          `Category '${line.category}' not in allowed_refund_categories [${allowed.join(", ")}]`,
        ),
  );
});

export const categoryAuthorised = check("category_authorised", ["CATEGORY_NOT_AUTHORISED"], (s) => {
  const { authorized_categories: authorised, agent_id } = s.input.responsibility;
  const ctx = lineRuleContext(s);
  return firstFailing(subjectOf(s), (line) =>
    LINE_RULES.CATEGORY_NOT_AUTHORISED(ctx, line)
      ? PASSED
      : fail(
          "CATEGORY_NOT_AUTHORISED",
          `Category '${line.category}' not in the authorised categories [${authorised.join(", ")}] of agent ${agent_id}`,
        ),
  );
});

// ---- layer 5 — window: the order's purchase is at most the line's return window (return_window_days, or its
// category's entry) × 24 h before the claim's receipt.

export const returnWindow = check("return_window", ["OUTSIDE_RETURN_WINDOW"], (s) => {
  const { order } = subjectOf(s);
  const ctx = lineRuleContext(s);
  const elapsedMs = ctx.elapsedMs;
  return firstFailing(subjectOf(s), ({ category }) => {
    const days = returnWindowDays(s.input.contract, category);
    return LINE_RULES.OUTSIDE_RETURN_WINDOW(ctx, { category })
      ? PASSED
      : fail(
          "OUTSIDE_RETURN_WINDOW",
          `Order ${order.order_id} outside return window (purchased ${order.purchase_date}, ${formatDuration(elapsedMs)} before the claim was received; return_window_days${typeof s.input.contract.return_window_days === "number" ? "" : `.${category in s.input.contract.return_window_days ? category : "default"}`}: ${days})`,
        );
  });
});

/** What the per-line rules (core/kernel/line-rules.ts) read of the kernel's state. */
function lineRuleContext(s: KernelState): LineRuleContext {
  return {
    contract: s.input.contract,
    responsibility: s.input.responsibility,
    elapsedMs: s.receivedMs - subjectOf(s).purchaseMs,
  };
}

/**
 * PASSED when one of the claim's lines passes `run` (a claim whose line is known has one), else the first line's
 * failure: a claim whose line is ambiguous is rejected only when no candidate line could be refunded. A claim that
 * names its lines passes only when every one of them does (the first failing line decides the claim).
 */
function firstFailing(
  subject: { lines: readonly OrderLineView[]; named?: NamedLines | undefined },
  run: (line: OrderLineView) => CheckResult<ClaimReasonCode>,
): CheckResult<ClaimReasonCode> {
  let first: CheckResult<ClaimReasonCode> | undefined;
  for (const line of subject.lines) {
    const result = run(line);
    if (subject.named?.ok && result.outcome === "fail") return result;
    if (!subject.named?.ok && result.outcome !== "fail") return PASSED;
    first ??= result;
  }
  return subject.named?.ok ? PASSED : (first ?? PASSED);
}

// ---- layer 6 — amount: a positive JSON number exact to the cent. An approval may grant less than proposed (never
// more: the review service checks); the reject checks judge that amount.

export const amountValid = check("amount_valid", ["INVALID_AMOUNT"], (s) => {
  const amount = parseMoney(s.input.approval?.amountEur ?? s.amountEur, subjectOf(s).orderAmount.currency);
  if (!amount.ok) return fail("INVALID_AMOUNT", `Invalid refund amount: ${amount.message}`);
  if (amount.money.minor <= 0)
    return fail("INVALID_AMOUNT", `Invalid refund amount: ${describeMoney(amount.money)} is not positive`);
  return passWith({ amount: amount.money });
});

// ---- layer 7 — balance: the amount fits in what is left of the order after other claims' refunds.

export const refundableBalance = check("refundable_balance", ["EXCEEDS_REFUNDABLE_BALANCE"], (s) => {
  const { order, orderAmount } = subjectOf(s);
  const amount = s.amount!;
  const refunded = money(s.input.ledgerEntry?.refunded_cents ?? 0, orderAmount.currency);
  const own = money(
    s.input.claimId === undefined ? 0 : (reservedForClaim(s.input.ledgerEntry, s.input.claimId) ?? 0),
    orderAmount.currency,
  );
  const refundedByOthers = subtract(refunded, own);
  const balance = subtract(orderAmount, refundedByOthers);
  if (compare(amount, balance) > 0)
    return fail(
      "EXCEEDS_REFUNDABLE_BALANCE",
      `Amount ${describeMoney(amount)} exceeds the refundable balance of order ${order.order_id} (${describeMoney(max(balance, zero(balance.currency)))}: order ${describeMoney(orderAmount)}, already refunded ${describeMoney(refundedByOthers)})`,
    );
  const { named } = subjectOf(s);
  if (named?.ok) return namedLinesBalance(s, named);
  // Never above the claim's line(s): what they were paid (an order of one line: the order, checked above).
  const lines = subjectOf(s).lines;
  const lineAmount = sum(
    orderAmount.currency,
    lines.map((l) => l.amount),
  );
  if (compare(amount, lineAmount) > 0)
    return fail(
      "EXCEEDS_REFUNDABLE_BALANCE",
      `Amount ${describeMoney(amount)} exceeds what was paid for line ${lines.map((l) => l.line_id).join(", ")} of order ${order.order_id} (${describeMoney(lineAmount)})`,
    );
  // Nor above what is left of them after other claims' refunds on them (the ledger's counts per line).
  const heldByOthers = money(
    lines.reduce((n, l) => n + lineHeldByOthers(s.input.ledgerEntry, s.input.claimId, l.line_id), 0),
    orderAmount.currency,
  );
  const lineBalance = subtract(lineAmount, heldByOthers);
  return compare(amount, lineBalance) <= 0
    ? PASSED
    : fail(
        "EXCEEDS_REFUNDABLE_BALANCE",
        `Amount ${describeMoney(amount)} exceeds the refundable balance of line ${lines.map((l) => l.line_id).join(", ")} of order ${order.order_id} (${describeMoney(max(lineBalance, zero(lineBalance.currency)))}: paid ${describeMoney(lineAmount)}, already refunded ${describeMoney(heldByOthers)})`,
      );
});

/**
 * A claim naming lines: at most what its units cost, and each line's part of the amount (`allocate`, as the ledger
 * reserves it) at most what is left of the line after other claims' refunds on it.
 */
function namedLinesBalance(s: KernelState, named: Extract<NamedLines, { ok: true }>): CheckResult<ClaimReasonCode> {
  const { order, orderAmount } = subjectOf(s);
  const amount = s.amount!;
  const currency = orderAmount.currency;
  const cost = money(
    named.lines.reduce((n, l) => n + l.cost, 0),
    currency,
  );
  // A line asked more than its claimed units cost (line paid amount per unit × units): that line fails.
  const over = named.lines.find((l) => l.asked > l.cost);
  if (over)
    return fail(
      "EXCEEDS_REFUNDABLE_BALANCE",
      `Amount ${describeMoney(money(over.asked, currency))} asked of line ${over.line.line_id} of order ${order.order_id} exceeds what its ${over.units} claimed units cost (${describeMoney(money(over.cost, currency))})`,
    );
  const which = named.lines.map((l) => `${l.units} × ${l.line.line_id}`).join(", ");
  if (compare(amount, cost) > 0)
    return fail(
      "EXCEEDS_REFUNDABLE_BALANCE",
      `Amount ${describeMoney(amount)} exceeds what the claimed units cost (${which} of order ${order.order_id}: ${describeMoney(cost)})`,
    );
  for (const [lineId, take] of allocate(amount.minor, named)) {
    const line = named.lines.find((l) => l.line.line_id === lineId)!.line;
    const held = lineHeldByOthers(s.input.ledgerEntry, s.input.claimId, lineId);
    if (take > line.amount.minor - held)
      return fail(
        "EXCEEDS_REFUNDABLE_BALANCE",
        `Amount ${describeMoney(money(take, currency))} on line ${lineId} of order ${order.order_id} exceeds its refundable balance (${describeMoney(max(money(line.amount.minor - held, currency), zero(currency)))}: paid ${describeMoney(line.amount)}, already refunded ${describeMoney(money(held, currency))})`,
      );
  }
  return PASSED;
}

/** What other claims than `claimId` count on the line in the ledger entry (0 on an order without line counts). */
function lineHeldByOthers(entry: LedgerEntry | undefined, claimId: string | undefined, lineId: string): number {
  const all = entry?.line_cents && Object.hasOwn(entry.line_cents, lineId) ? entry.line_cents[lineId]! : 0;
  const held =
    claimId !== undefined && entry?.claim_lines && Object.hasOwn(entry.claim_lines, claimId)
      ? entry.claim_lines[claimId]!.lines
      : undefined;
  const own = held && Object.hasOwn(held, lineId) ? held[lineId]! : 0;
  return all - own;
}

// ---- layer 8c — claim currency: a claim that names a currency names the order's (there is no FX anywhere money
// moves). Not traced when the claim names none, nor when an EUR order's claim names EUR (recorded traces replay as
// they were).

export const currencyMatch = check("currency_match", ["CURRENCY_MISMATCH"], (s) => {
  const { order, view } = subjectOf(s);
  const named = s.input.claim.currency;
  if (named === undefined) return SKIPPED;
  const same = named.trim().toUpperCase() === view.currency;
  if (same) return view.currency === "EUR" ? SKIPPED : PASSED;
  return fail(
    "CURRENCY_MISMATCH",
    `Claim is in ${show(named)}, order ${order.order_id} in ${view.currency}: a claim is refunded only in the order's currency`,
  );
});

// ---- layer 8b — customer: an order bound to a customer is refunded only to that customer.

export const customerMatch = check("customer_match", ["CUSTOMER_MISMATCH"], (s) => {
  const { order } = subjectOf(s);
  const { customer_id } = s.input.claim;
  return order.customer_id === undefined || customer_id === undefined || customer_id === order.customer_id
    ? PASSED
    : fail("CUSTOMER_MISMATCH", `Claim customer ${show(customer_id)} is not the customer of order ${order.order_id}`);
});
