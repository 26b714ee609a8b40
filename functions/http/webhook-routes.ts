// POST /webhooks/stripe (docs/payments.md): Stripe's refund webhooks, verified with the SDK against the endpoint's
// signing secret before anything is read; an unverified delivery is 400 and changes nothing. A verified
// refund.updated / refund.failed is recorded idempotently and out-of-order safe (pipeline: recordProviderUpdate);
// every other verified event is acknowledged (200) so Stripe stops resending it.
import { readStripeWebhook } from "../../adapters/payments/stripe-webhook.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { recordProviderUpdate } from "../../pipeline/payments.ts";
import { apiError, bodyBytes, json } from "./http.ts";
import type { ApiRequest, ApiResponse } from "./http.ts";
import { paymentDeps } from "../composition/payments.ts";

/** `POST /webhooks/stripe`: 200 `{ received: true, recorded }`; 400 INVALID_SIGNATURE. */
export async function postStripeWebhook(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  if (!deps.webhookSecret) throw new Error("the webhook function has no signing secret (compose webhookSecret)");
  const read = readStripeWebhook(
    bodyBytes(request).toString("utf8"),
    request.headers["stripe-signature"],
    deps.webhookSecret(),
    deps.clock.now(),
  );
  if (!read.ok) return apiError(400, "INVALID_SIGNATURE", read.message);
  if (!read.update) return json(200, { received: true, recorded: false });
  const { claim_id, ...update } = read.update;
  const after = await recordProviderUpdate(paymentDeps(deps), claim_id, update);
  return json(200, { received: true, recorded: after !== undefined, ...(after ? { status: after.status } : {}) });
}
