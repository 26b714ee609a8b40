// A MOCK of Stripe's refunds API for tests: no Stripe can run here (no account, no network beyond npm), so a
// local HTTP server speaks the wire format the SDK uses (examples/stripe-standin/standin.mjs, the same server a
// person runs with server.mjs); this file gives it its types. What a payment_ref does is scripted per test.
import { startStripeStandin } from "../../examples/stripe-standin/standin.mjs";

/** How the mock treats a payment: settle, stay pending, refuse (card / balance), or fail with 5xx `times` times. */
export type MockPaymentBehaviour =
  | { kind: "succeeded" }
  | { kind: "pending" }
  | { kind: "card_declined" }
  | { kind: "balance_insufficient" }
  | { kind: "server_error"; times: number };

/** A running mock. */
export type StripeWireMock = {
  /** `http://127.0.0.1:<port>`: give it as STRIPE_API_BASE. */
  readonly base: string;
  /** Refunds created (not replays), in order. */
  readonly refunds: Array<Record<string, unknown>>;
  /** Customer balance transactions (store credit) created (not replays), in order. */
  readonly credits: Array<Record<string, unknown>>;
  /** Every request as received: key, idempotency key and the decoded form. */
  readonly requests: Array<{
    path: string;
    auth: string | undefined;
    idempotencyKey: string | undefined;
    form: Record<string, string>;
  }>;
  close(): Promise<void>;
};

/** Starts the mock on a random loopback port; `behaviours` by payment_ref (default: succeeded). */
export function startStripeWireMock(
  apiKey: string,
  behaviours: Record<string, MockPaymentBehaviour> = {},
): Promise<StripeWireMock> {
  return startStripeStandin(apiKey, behaviours) as Promise<StripeWireMock>;
}
