// Stripe's webhooks, verified with the SDK: the `Stripe-Signature` header over the raw body with the endpoint's
// signing secret (STRIPE_WEBHOOK_SECRET) and Stripe's 5-minute tolerance, at the injected clock's time. A
// `refund.updated` / `refund.failed` whose refund this app created (its metadata names the claim and the
// execution) becomes the provider's word on that execution; anything else is acknowledged and ignored.
import Stripe from "stripe";
import type { ProviderUpdate } from "../../core/kernel/settlement.ts";
import { settlementOfStripeRefund } from "./stripe.ts";

/** What a verified webhook says. */
export type StripeWebhook =
  | { ok: false; message: string }
  | { ok: true; eventId: string; type: string; update?: ProviderUpdate & { claim_id: string } };

/** The refund events the app follows. */
const REFUND_EVENTS = new Set(["refund.updated", "refund.failed"]);

/** Verifies and reads one webhook delivery; an unverified one is `{ ok: false }` with what is wrong. */
export function readStripeWebhook(
  rawBody: string,
  signature: string | undefined,
  secret: string,
  nowMs: number,
): StripeWebhook {
  if (!signature) return { ok: false, message: "the Stripe-Signature header is missing" };
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, secret, 300, undefined, nowMs);
  } catch (error) {
    return { ok: false, message: `the Stripe signature does not verify: ${(error as Error).message}` };
  }
  if (!REFUND_EVENTS.has(event.type)) return { ok: true, eventId: event.id, type: event.type };
  const refund = event.data.object as Partial<Stripe.Refund>;
  const claimId = refund.metadata?.claim_id;
  const executionId = refund.metadata?.execution_id;
  if (typeof refund.id !== "string" || !claimId || !executionId)
    return { ok: true, eventId: event.id, type: event.type };
  const result = settlementOfStripeRefund({
    id: refund.id,
    status: event.type === "refund.failed" && refund.status !== "failed" ? "failed" : (refund.status ?? null),
    failure_reason: refund.failure_reason ?? undefined,
  } as Pick<Stripe.Refund, "id" | "status" | "failure_reason">);
  return {
    ok: true,
    eventId: event.id,
    type: event.type,
    update: {
      claim_id: claimId,
      execution_id: executionId,
      status: result.status,
      ...(result.providerRef === undefined ? {} : { provider_ref: result.providerRef }),
      ...(result.failureReason === undefined ? {} : { failure_reason: result.failureReason }),
    },
  };
}
