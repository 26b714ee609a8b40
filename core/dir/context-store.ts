// The in-memory context store: authoritative orders, validated once when the store is built.
import * as z from "zod";
import { OrderSchema, type Order } from "./contracts.ts";
import { OrderDataError } from "./errors.ts";
import { parseCents } from "./money.ts";
import type { ContextSnapshot, ContextStore } from "./ports.ts";
import { parseIsoMs } from "./time.ts";

/**
 * Validates one authoritative order: the schema, an absolute ISO purchase date (relative offsets such
 * as `-3d` must be resolved by the config loader first) and an amount exact to the cent.
 */
export function validateOrder(input: unknown): Order {
  const parsed = OrderSchema.safeParse(input);
  if (!parsed.success) throw new OrderDataError(`order is invalid: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  const order = parsed.data;
  if (parseIsoMs(order.purchase_date) === undefined) {
    throw new OrderDataError(`order ${order.order_id}: purchase_date ${JSON.stringify(order.purchase_date)} is not an ISO-8601 date or timestamp`);
  }
  const cents = parseCents(order.amount);
  if (!cents.ok) throw new OrderDataError(`order ${order.order_id}: ${cents.message}`);
  return order;
}

/** An in-memory `ContextStore` over the given orders; throws `OrderDataError` for an invalid or duplicate order. */
export function createInMemoryContextStore(orders: readonly unknown[]): ContextStore {
  const byId = new Map<string, Order>();
  for (const input of orders) {
    const order = validateOrder(input);
    if (byId.has(order.order_id)) throw new OrderDataError(`duplicate order ${order.order_id} in the context store`);
    byId.set(order.order_id, order);
  }
  return {
    async getOrder(orderId) {
      const order = byId.get(orderId);
      return order ? structuredClone(order) : undefined;
    },
    async snapshot(): Promise<ContextSnapshot> {
      const out: Record<string, Order> = {};
      for (const [id, order] of [...byId.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        Object.defineProperty(out, id, { value: structuredClone(order), enumerable: true, writable: true, configurable: true });
      }
      return { orders: out };
    },
  };
}
