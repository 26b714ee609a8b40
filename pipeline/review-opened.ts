// Telling people a review is waiting (docs/reviews.md#the-desk): every review announced `ReviewRequested` is also
// announced `ReviewOpened`, with when it is due under the policy (`review_due_days` / `review_due_hours`), for
// notifications. The deciders that open reviews do not hold the policy's due duration, so the function's publisher
// adds the event beside the one it derives from, in the same publish (at least once, like it; dedupe on review_id).
// A failed refund's review announces its own (pipeline/payments.ts `announce`).
import { busEntry, reviewOpenedDetail } from "../core/kernel/events.ts";
import type { BusEntry } from "../core/kernel/events.ts";
import type { EventPublisher } from "./ports.ts";

/** `publisher`, with a `ReviewOpened` after each `ReviewRequested` it publishes, due `dueMs()` after the request. */
export function withReviewOpened(publisher: EventPublisher, dueMs: () => number): EventPublisher {
  return {
    publish(entries) {
      if (!entries.some((e) => e.detailType === "ReviewRequested")) return publisher.publish(entries);
      const all = entries.flatMap((e): BusEntry[] =>
        e.detailType === "ReviewRequested" ? [e, busEntry("ReviewOpened", reviewOpenedDetail(e.detail, dueMs()))] : [e],
      );
      return publisher.publish(all);
    },
  };
}
