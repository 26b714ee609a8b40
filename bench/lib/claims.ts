// The claims the pipeline benches send: every one an ACCEPT on its own order, structured or free text.
import type { Order } from "../../core/integrity/index.ts";
import type { ClaimKind } from "./profile.ts";

const DAY_MS = 86_400_000;
/** The amount every bench claim asks for (≤ 500 EUR: no escalation). */
export const CLAIM_EUR = 299.99;
/** The amount of the order behind it (room for any ledger). */
export const ORDER_EUR = 10_000;

/** Orders `ord_b<s|f><n>` for `count` claims of `kind`, electronics, bought 3 days before `nowMs`; `offset` shifts the numbers. */
export function benchOrders(kind: ClaimKind, count: number, nowMs: number, offset = 0): Order[] {
  const tag = kind === "structured" ? "s" : "f";
  return Array.from({ length: count }, (_, i) => ({
    order_id: `ord_b${tag}${String(offset + i + 1).padStart(6, "0")}`,
    purchase_date: new Date(nowMs - 3 * DAY_MS).toISOString(),
    category: "electronics",
    amount: ORDER_EUR,
    currency: "EUR" as const,
  }));
}

/** The request body of a claim on `orderId`: structured JSON, or the free text of docs/architecture.md */
export function claimBody(kind: ClaimKind, orderId: string): Record<string, unknown> {
  return kind === "structured"
    ? {
        claim: {
          order_id: orderId,
          amount_eur: CLAIM_EUR,
          category: "electronics",
          reason: "The screen is dead on arrival",
        },
      }
    : { claim_text: `I bought order ${orderId} for ${CLAIM_EUR} EUR, the screen is dead` };
}
