// Authoritative orders: what makes one valid before the kernel may read it.
import * as z from "zod";
import { OrderSchema, type Order } from "../integrity/contracts.ts";
import { OrderDataError } from "../integrity/errors.ts";
import { parseIsoMs } from "../integrity/time.ts";
import { viewOrder } from "./order-view.ts";

/**
 * Validates one authoritative order: the schema, an absolute ISO purchase date (relative offsets such
 * as `-3d` must be resolved by the config loader first) and lines that read as an order view
 * (core/kernel/order-view.ts: amounts exact to the currency's minor unit, lines adding up, an ISO 4217 currency).
 */
export function validateOrder(input: unknown): Order {
  const parsed = OrderSchema.safeParse(input);
  if (!parsed.success)
    throw new OrderDataError(`order is invalid: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  const order = parsed.data;
  if (parseIsoMs(order.purchase_date) === undefined) {
    throw new OrderDataError(
      `order ${order.order_id}: purchase_date ${JSON.stringify(order.purchase_date)} is not an ISO-8601 date or timestamp`,
    );
  }
  viewOrder(order);
  return order;
}
