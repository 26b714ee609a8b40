// Stripe's webhooks, verified with the SDK: the `Stripe-Signature` header over the raw body with the endpoint's
// signing secret (STRIPE_WEBHOOK_SECRET) and Stripe's 5-minute tolerance either way (a timestamp more than 5 minutes
// ahead is refused too), at the injected clock's time. A
// `refund.updated` / `refund.failed` whose refund this app created (its metadata names the claim and the
// execution) becomes the provider's word on that execution; anything else is acknowledged and ignored.
import Stripe from "stripe";
import type { ProviderUpdate } from "../../core/kernel/settlement.ts";
import { settlementOfStripeRefund } from "./stripe.ts";

/** What a verified webhook says. */
export type StripeWebhook =
  | { ok: false; message: string }
  | { ok: true; eventId: string; type: string; update?: ProviderUpdate & { claim_id: string } };

/** How far a delivery's signed timestamp may be from now, either way (Stripe's 5 minutes). */
export const WEBHOOK_TOLERANCE_S = 300;

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
  // The SDK refuses a timestamp older than the tolerance only; one from the future is refused here the same way,
  // so a signed delivery cannot be held back and replayed later (a timestamp 24 h ahead stays "fresh" a day).
  const signedAt = Number(/(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]);
  if (Number.isFinite(signedAt) && signedAt * 1000 > nowMs + WEBHOOK_TOLERANCE_S * 1000)
    return {
      ok: false,
      message: `the Stripe signature's timestamp is ${Math.round(signedAt - nowMs / 1000)} s in the future (more than ${WEBHOOK_TOLERANCE_S} s)`,
    };
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, secret, WEBHOOK_TOLERANCE_S, undefined, nowMs);
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
