// The orders a listing of reviews shows, read bounded in count and in time (docs/reviews.md): the queue is what
// people work from during a shop outage, so one order the shop cannot serve — down, slow, garbled — shows on its
// own item (`order: null` and why) and never takes the listing, or the other items, with it.
import { OrderDataError } from "../core/integrity/index.ts";
import type { Order } from "../core/integrity/index.ts";
import { ORDER_SOURCE_UNAVAILABLE } from "../core/kernel/reason-codes.ts";
import { OrderSourceUnavailableError } from "./errors.ts";
import type { OrderSource } from "./ports.ts";

/** How many distinct orders one listing reads, and how long it waits for them all (then shows the rest as unread). */
export const LISTING_ORDER_READS = { max: 20, budgetMs: 3_000 } as const;

/** Why a listed review shows no order. */
export type OrderUnread = {
  readonly code: "ORDER_NOT_FOUND" | "ORDER_DATA_INVALID" | typeof ORDER_SOURCE_UNAVAILABLE | "ORDER_NOT_READ";
  readonly reason: string;
};

/** An order as a listing read it: the order, or why there is none. */
export type OrderRead = { readonly order: Order } | { readonly unread: OrderUnread };

/**
 * Reads each distinct id once, at most `max` of them (the first ones), all within `budgetMs` together; every id
 * gets an answer: the order, or why not (not found, unusable, the source down, not read in this listing). Errors
 * other than the source's own are not swallowed. `deadline` is injected for tests (default a timer).
 */
export async function readOrdersBounded(
  orders: OrderSource,
  ids: readonly string[],
  bounds: { max?: number; budgetMs?: number; deadline?: Promise<void> } = {},
): Promise<Map<string, OrderRead>> {
  const max = bounds.max ?? LISTING_ORDER_READS.max;
  const budgetMs = bounds.budgetMs ?? LISTING_ORDER_READS.budgetMs;
  const distinct = [...new Set(ids)];
  const answers = new Map<string, OrderRead>();
  let timer: NodeJS.Timeout | undefined;
  const deadline =
    bounds.deadline ??
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, budgetMs);
    });
  const late = "late" as const;
  try {
    await Promise.all(
      distinct.slice(0, max).map(async (id) => {
        const read = orders.getOrder(id).then(
          (order): OrderRead =>
            order ? { order } : { unread: { code: "ORDER_NOT_FOUND", reason: `the shop does not know order ${id}` } },
          (error: unknown): OrderRead => {
            if (error instanceof OrderDataError)
              return { unread: { code: "ORDER_DATA_INVALID", reason: error.message } };
            if (error instanceof OrderSourceUnavailableError)
              return {
                unread: {
                  code: ORDER_SOURCE_UNAVAILABLE,
                  reason: `the shop's order API cannot be read now (${error.message})`,
                },
              };
            throw error;
          },
        );
        // A read that ends after the deadline is dropped; its error too (the listing answered without it).
        read.catch(() => undefined);
        const answer: OrderRead | typeof late = await Promise.race([read, deadline.then(() => late)]);
        answers.set(
          id,
          answer === late
            ? {
                unread: {
                  code: ORDER_SOURCE_UNAVAILABLE,
                  reason: `the shop's order API did not answer within ${budgetMs / 1000} s; the next listing reads it again`,
                },
              }
            : answer,
        );
      }),
    );
  } finally {
    clearTimeout(timer);
  }
  for (const id of distinct.slice(max))
    answers.set(id, {
      unread: {
        code: "ORDER_NOT_READ",
        reason: `not read: a listing reads at most ${max} orders (ask for a smaller page)`,
      },
    });
  return answers;
}
