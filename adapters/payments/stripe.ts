// The Stripe payment provider (PAYMENT_PROVIDER=stripe) on the official `stripe` SDK: a refund against the
// order's payment (`pi_…` → payment_intent, `ch_…` → charge), the amount in minor units, the execution id as the
// Idempotency-Key (a redelivered RefundExecuted gets Stripe's stored answer, never a second refund) and the
// claim's ids in the refund's metadata (the webhook finds the claim by them). Errors are translated: what the
// card, the balance or the request make impossible is a FAILED refund with its reason; the network, 429 and 5xx
// are PaymentUnavailableError (the message is retried with the same key). Stripe's webhooks are verified with the
// SDK: the `Stripe-Signature` header over the raw body with the endpoint's signing secret and Stripe's 5-minute
// tolerance either way (a timestamp more than 5 minutes ahead is refused too), at the injected clock's time; a `refund.updated` / `refund.failed` whose refund this app created (its
// metadata names the claim and the execution) becomes the provider's word on that execution. `stripePayments` is
// the adapter the composition root binds to the `stripe` declaration (app/payment-providers/stripe.ts).
import Stripe from "stripe";
import { PaymentUnavailableError } from "../../pipeline/errors.ts";
import type {
  PaymentAdapter,
  PaymentProvider,
  ProviderRefundRequest,
  ProviderRefundResult,
  WebhookReading,
} from "../../pipeline/payments.ts";
import { stripeAmount } from "./stripe-amount.ts";

/** Settings of the Stripe adapter. */
export type StripeProviderOptions = {
  readonly apiKey: string;
  /** Overrides the API endpoint (tests: a local server speaking Stripe's wire format), e.g. `http://127.0.0.1:12111`. */
  readonly apiBase?: string;
  /** Per-request timeout (default 20 s: inside the executor's timeout). */
  readonly timeoutMs?: number;
  /** The SDK's own retries of network errors, with the same idempotency key (default 2). */
  readonly maxNetworkRetries?: number;
};

/** The SDK client for `options` (the webhook verifier uses one too, without any network call). */
export function stripeClient(options: StripeProviderOptions): Stripe {
  const base = options.apiBase ? new URL(options.apiBase) : undefined;
  return new Stripe(options.apiKey, {
    timeout: options.timeoutMs ?? 20_000,
    maxNetworkRetries: options.maxNetworkRetries ?? 2,
    telemetry: false,
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === "http:" ? 80 : 443),
          protocol: base.protocol === "http:" ? "http" : "https",
        }
      : {}),
  });
}

/** Maps a Stripe refund's status: succeeded → SETTLED, failed / canceled → FAILED, anything else PENDING. */
export function settlementOfStripeRefund(
  refund: Pick<Stripe.Refund, "id" | "status" | "failure_reason">,
): ProviderRefundResult {
  if (refund.status === "succeeded") return { status: "SETTLED", providerRef: refund.id };
  if (refund.status === "failed" || refund.status === "canceled")
    return {
      status: "FAILED",
      providerRef: refund.id,
      failureReason: refund.failure_reason ?? `refund ${refund.status}`,
    };
  return { status: "PENDING", providerRef: refund.id };
}

/** The payment a `payment_ref` names, as the refund's parameter. */
function paymentOf(ref: string): { payment_intent: string } | { charge: string } | undefined {
  if (ref.startsWith("pi_")) return { payment_intent: ref };
  if (ref.startsWith("ch_")) return { charge: ref };
  return undefined;
}

/** The answer to a request whose order's payment_ref names no Stripe payment. */
function notAPayment(request: ProviderRefundRequest): ProviderRefundResult {
  return {
    status: "FAILED",
    failureReason: `payment_ref ${JSON.stringify(request.paymentRef ?? null)} of order ${request.orderId} is neither a payment intent (pi_…) nor a charge (ch_…)`,
  };
}

/** A provider that refunds through Stripe. */
export function createStripePaymentProvider(options: StripeProviderOptions): PaymentProvider {
  const stripe = stripeClient(options);
  return {
    name: "stripe",
    needsPaymentRef: true,
    async refund(request: ProviderRefundRequest): Promise<ProviderRefundResult> {
      const payment = request.paymentRef ? paymentOf(request.paymentRef) : undefined;
      if (!payment) return notAPayment(request);
      const amount = stripeAmount(request.amountMinor, request.currency);
      if (!amount.ok)
        return { status: "FAILED", failureReason: `refund of order ${request.orderId}: ${amount.reason}` };
      try {
        const refund = await stripe.refunds.create(
          {
            ...payment,
            amount: amount.amount,
            metadata: { claim_id: request.claimId, execution_id: request.executionId, order_id: request.orderId },
          },
          { idempotencyKey: request.executionId },
        );
        return settlementOfStripeRefund(refund);
      } catch (error) {
        return translate(error, request);
      }
    },
    // Store credit (docs/payments.md#store-credit): a customer balance transaction of the payment's customer, with a
    // negative amount (a credit) in the refund's currency and the execution id as the Idempotency-Key.
    async issueCredit(request: ProviderRefundRequest): Promise<ProviderRefundResult> {
      const payment = request.paymentRef ? paymentOf(request.paymentRef) : undefined;
      if (!payment) return notAPayment(request);
      const amount = stripeAmount(request.amountMinor, request.currency);
      if (!amount.ok)
        return { status: "FAILED", failureReason: `store credit of order ${request.orderId}: ${amount.reason}` };
      try {
        const paid =
          "payment_intent" in payment
            ? await stripe.paymentIntents.retrieve(payment.payment_intent)
            : await stripe.charges.retrieve(payment.charge);
        const customer = typeof paid.customer === "string" ? paid.customer : paid.customer?.id;
        if (!customer)
          return {
            status: "FAILED",
            failureReason: `payment ${request.paymentRef} of order ${request.orderId} has no Stripe customer to credit`,
          };
        const credit = await stripe.customers.createBalanceTransaction(
          customer,
          {
            amount: -amount.amount,
            currency: request.currency.toLowerCase(),
            description: `Store credit for claim ${request.claimId}`,
            metadata: { claim_id: request.claimId, execution_id: request.executionId, order_id: request.orderId },
          },
          { idempotencyKey: request.executionId },
        );
        return { status: "SETTLED", providerRef: credit.id };
      } catch (error) {
        return translate(error, request);
      }
    },
  };
}

/** A refused refund (FAILED with the reason) or a retryable failure (thrown). */
function translate(error: unknown, request: ProviderRefundRequest): ProviderRefundResult {
  const e = error as { type?: string; statusCode?: number; code?: string; decline_code?: string; message?: string };
  const what = `Stripe refund ${request.executionId}`;
  if (!(error instanceof Stripe.errors.StripeError))
    throw new PaymentUnavailableError(`${what}: ${(error as Error).message}`, { cause: error });
  if (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeRateLimitError ||
    error instanceof Stripe.errors.StripeAPIError ||
    (e.statusCode ?? 0) >= 500
  )
    throw new PaymentUnavailableError(
      `${what}: Stripe is unavailable (${e.type ?? "error"} ${e.statusCode ?? ""}): ${e.message ?? ""}`.trim(),
      {
        cause: error,
      },
    );
  if (error instanceof Stripe.errors.StripeAuthenticationError || error instanceof Stripe.errors.StripePermissionError)
    throw new PaymentUnavailableError(
      `${what}: Stripe refused the API key (${e.statusCode ?? ""}); check STRIPE_API_KEY`,
      {
        cause: error,
      },
    );
  if (error instanceof Stripe.errors.StripeIdempotencyError)
    throw new PaymentUnavailableError(
      `${what}: Stripe holds another request under this idempotency key: ${e.message ?? ""}`,
      {
        cause: error,
      },
    );
  // Card errors and invalid requests (already refunded, amount above the charge, balance_insufficient, …): refused.
  const code = e.decline_code ?? e.code;
  return { status: "FAILED", failureReason: `${code ? `${code}: ` : ""}${e.message ?? "refused by Stripe"}` };
}

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
): WebhookReading {
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

/** The `stripe` provider's adapter: the port from its API key (and STRIPE_API_BASE, tests), its webhooks' verifier. */
export const stripePayments = {
  name: "stripe",
  createPort: ({ secret, settings }) =>
    createStripePaymentProvider({
      apiKey: secret("apiKey"),
      ...(settings.apiBase === undefined ? {} : { apiBase: settings.apiBase }),
    }),
  readWebhook: (delivery, signingSecret, nowMs) =>
    readStripeWebhook(delivery.rawBody, delivery.headers["stripe-signature"], signingSecret, nowMs),
} as const satisfies PaymentAdapter<"apiKey", "apiBase">;
