// The order of issue 32's example, shared by the tests of orders with lines: a TV (499.00) and two shirts (40.00 for
// both), 9.99 shipping, in USD; its lines alone for tests that need them in another currency or order.
import type { Order } from "../integrity/contracts.ts";

/** The example's two lines. */
export const TV_AND_SHIRTS = [
  { line_id: "l1", sku: "TV-55", category: "electronics", quantity: 1, amount: "499.00" },
  { line_id: "l2", sku: "TEE-M", category: "clothing", quantity: 2, amount: "40.00" },
] as const;

/** The issue's example order, as the order API would send it. */
export const ISSUE_EXAMPLE_ORDER = {
  order_id: "ord_1",
  purchase_date: "2026-11-24T09:30:00Z",
  currency: "USD",
  customer_id: "cus_1",
  payment_ref: "pi_1",
  shipping: "9.99",
  lines: TV_AND_SHIRTS.map((line) => ({ ...line })),
} satisfies Order;
