// The payment providers' webhook routes (docs/payments.md; Stripe's: POST /webhooks/stripe): each delivery is
// verified by the provider's adapter (functions/composition/payment-providers.ts) against the provider's signing
// secret before anything is read; an unverified delivery is 400 and changes nothing. A verified refund update is
// recorded idempotently and out-of-order safe (pipeline: recordProviderUpdate); every other verified event is
// acknowledged (200) so the provider stops resending it. A route of a provider other than the configured one is 404.
import type { PaymentProviderName } from "../../app/payment-provider.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { recordProviderUpdate } from "../../pipeline/payments.ts";
import { apiError, bodyBytes, json } from "./http.ts";
import type { ApiRequest, ApiResponse, RouteHandler } from "./http.ts";
import { paymentDeps } from "../composition/payments.ts";
import { paymentAdapter } from "../composition/payment-providers.ts";

/** `POST <provider's webhook path>`: 200 `{ received: true, recorded }`; 400 INVALID_SIGNATURE; 404 when `provider` is not configured. */
export function paymentWebhookRoute(provider: PaymentProviderName): RouteHandler {
  const readWebhook = paymentAdapter(provider).readWebhook;
  return async (request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> => {
    if (!deps.webhookSecret) throw new Error("the webhook function has no signing secret (compose webhookSecret)");
    const secret = deps.webhookSecret(provider);
    if (secret === undefined || readWebhook === undefined)
      return apiError(
        404,
        "NOT_FOUND",
        `${provider}'s webhooks are not served here (PAYMENT_PROVIDER is not ${provider})`,
      );
    const read = readWebhook(
      { rawBody: bodyBytes(request).toString("utf8"), headers: request.headers },
      secret,
      deps.clock.now(),
    );
    if (!read.ok) return apiError(400, "INVALID_SIGNATURE", read.message);
    if (!read.update) return json(200, { received: true, recorded: false });
    const { claim_id, ...update } = read.update;
    const after = await recordProviderUpdate(paymentDeps(deps), claim_id, update);
    return json(200, { received: true, recorded: after !== undefined, ...(after ? { status: after.status } : {}) });
  };
}
