// The kernel's layers on the order (docs/kernel.md): the order exists (3), its category (4), its return window (5), the
// amount (6), the refundable balance (7) and its customer (8b) — every one of them can only REJECT.
import { KernelInputError } from "../integrity/errors.ts";
import { DAY_MS, formatDuration, parseIsoMs } from "../integrity/time.ts";
import { check, fail, PASSED, passWith, show, subjectOf } from "./kernel-state.ts";
import { assertLedgerEntry, reservedForClaim } from "./ledger.ts";
import { compare, describeMoney, eur, max, parseMoney, subtract, zero } from "./money.ts";

// ---- layer 3 — order: an order is named and the context store knows it (the order handed in must be that order,
// and the ledger entry its own and sound, or the caller wired the kernel wrongly).

export const orderIdPresent = check("order_id_present", ["ORDER_ID_MISSING"], ({ orderId }) =>
  typeof orderId === "string" && orderId.trim() !== "" ? PASSED : fail("ORDER_ID_MISSING", "Proposal has no order id"),
);

export const orderExists = check("order_exists", ["ORDER_NOT_FOUND"], ({ input, orderId }) => {
  const { order, ledgerEntry } = input;
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
  const orderAmount = parseMoney(order.amount, order.currency);
  if (!orderAmount.ok || orderAmount.money.minor <= 0)
    throw new KernelInputError(
      `order ${order.order_id}: amount ${orderAmount.ok ? "must be positive" : orderAmount.message}`,
    );
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
  return passWith({ subject: { order, purchaseMs, orderAmount: orderAmount.money } });
});

// ---- layer 4 — category: the ORDER's category (never the claim's) is refundable, and this agent may refund it.

export const categoryAllowed = check("category_allowed", ["CATEGORY_NOT_ALLOWED"], (s) => {
  const { category } = subjectOf(s).order;
  const allowed = s.input.contract.allowed_refund_categories;
  return allowed.includes(category)
    ? PASSED
    : fail("CATEGORY_NOT_ALLOWED", `Category '${category}' not in allowed_refund_categories [${allowed.join(", ")}]`);
});

export const categoryAuthorised = check("category_authorised", ["CATEGORY_NOT_AUTHORISED"], (s) => {
  const { category } = subjectOf(s).order;
  const { authorized_categories: authorised, agent_id } = s.input.responsibility;
  return authorised.length === 0 || authorised.includes(category)
    ? PASSED
    : fail(
        "CATEGORY_NOT_AUTHORISED",
        `Category '${category}' not in the authorised categories [${authorised.join(", ")}] of agent ${agent_id}`,
      );
});

// ---- layer 5 — window: the order's purchase is at most return_window_days × 24 h before the claim's receipt.

export const returnWindow = check("return_window", ["OUTSIDE_RETURN_WINDOW"], (s) => {
  const { order, purchaseMs } = subjectOf(s);
  const days = s.input.contract.return_window_days;
  const elapsedMs = s.receivedMs - purchaseMs;
  return elapsedMs <= days * DAY_MS
    ? PASSED
    : fail(
        "OUTSIDE_RETURN_WINDOW",
        `Order ${order.order_id} outside return window (purchased ${order.purchase_date}, ${formatDuration(elapsedMs)} before the claim was received; return_window_days: ${days})`,
      );
});

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
  const refunded = eur(s.input.ledgerEntry?.refunded_cents ?? 0);
  const own = eur(s.input.claimId === undefined ? 0 : (reservedForClaim(s.input.ledgerEntry, s.input.claimId) ?? 0));
  const refundedByOthers = subtract(refunded, own);
  const balance = subtract(orderAmount, refundedByOthers);
  return compare(amount, balance) <= 0
    ? PASSED
    : fail(
        "EXCEEDS_REFUNDABLE_BALANCE",
        `Amount ${describeMoney(amount)} exceeds the refundable balance of order ${order.order_id} (${describeMoney(max(balance, zero(balance.currency)))}: order ${describeMoney(orderAmount)}, already refunded ${describeMoney(refundedByOthers)})`,
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
