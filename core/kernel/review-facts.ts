// What a reviewer decides on beside the claim (docs/reviews.md#what-a-reviewer-sees): the order as the shop's data
// says (or why it could not be read), what was refunded on it so far, its other claims, the customer's window.
/** What `reviewFacts` reads: the order, its ledger entry, and the other claims the order's ledger knows. */
export interface ReviewFactsInput {
  order?: {
    order_id: string;
    amount: number;
    currency: string;
    purchase_date: string;
    category: string;
    customer_id?: string | undefined;
  };
  ledger?: { refunded_cents: number; automatic_cents?: number | undefined; claims: Record<string, number> };
  others: {
    claim_id: string;
    status: string;
    verdict?: string | undefined;
    reason_code?: string | undefined;
    amount_eur?: number | undefined;
  }[];
  /** The order's customer's automatic refunds in the limit window (only when customer limits bind the order). */
  customerWindow?: { refunds: number; refunded_cents: number };
  /** Why the order could not be read for this listing (then it shows as `order: null`). */
  orderUnread?: { code: string; reason: string };
}

/**
 * The facts a reviewer decides on beside the claim (docs/reviews.md): the order (amount, currency, purchase date,
 * category, customer; `order: null` and `order_unread: { code, reason }` when it could not be read), what was refunded on it so far (automatic / approved by people, EUR), and the other claims
 * on it with their outcomes (the amount each reserved, else the amount it asked).
 */
export function reviewFacts(input: ReviewFactsInput): Record<string, unknown> {
  const { order, ledger } = input;
  const automatic = ledger?.automatic_cents ?? 0;
  return {
    ...(order
      ? {
          order: {
            order_id: order.order_id,
            amount_eur: order.amount,
            currency: order.currency,
            purchase_date: order.purchase_date,
            category: order.category,
            ...(order.customer_id ? { customer_id: order.customer_id } : {}),
          },
        }
      : input.orderUnread
        ? { order: null, order_unread: { code: input.orderUnread.code, reason: input.orderUnread.reason } }
        : {}),
    refunded: {
      automatic_eur: automatic / 100,
      approved_eur: Math.max(0, (ledger?.refunded_cents ?? 0) - automatic) / 100,
    },
    other_claims: input.others.map((c) => ({
      claim_id: c.claim_id,
      status: c.status,
      ...(c.verdict ? { verdict: c.verdict } : {}),
      ...(c.reason_code ? { reason_code: c.reason_code } : {}),
      amount_eur: ledger?.claims[c.claim_id] !== undefined ? ledger.claims[c.claim_id]! / 100 : (c.amount_eur ?? 0),
    })),
    ...(input.customerWindow
      ? {
          customer_window: {
            refunds: input.customerWindow.refunds,
            refunded_eur: input.customerWindow.refunded_cents / 100,
          },
        }
      : {}),
  };
}
