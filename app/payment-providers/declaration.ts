// What a payment provider declares (docs/payments.md#adding-a-payment-provider), as plain data free of SST: its
// name, its secrets (the SST secret on AWS, the variable locally, the payment function that reads it), its plain
// settings, and its webhook route. infra/ deploys from it, functions/ and local/ read their settings by it; how
// the provider pays and verifies its webhooks is its adapter's (adapters/payments/, bound by name in
// functions/composition/payment-providers.ts).
import type * as z from "zod";

/** The functions that pay refunds and take a provider's webhooks (app/functions.ts PAYMENT_FUNCTIONS). */
export type PaymentFunction = "refundExecutor" | "paymentWebhook";

/** A secret of the provider: on AWS an SST secret, linked to the one payment function that reads it. */
export interface ProviderSecret {
  /** The SST secret's name, which is also its link (`Resource.<link>`): `npx sst secret set <link> …`. */
  readonly link: string;
  /** The variable that holds it locally (`claims serve`, `claims batch`); the stack hands it to the handlers as the same link. */
  readonly env: string;
  /** The payment function linked to it. The refund executor's are required (`claims serve` refuses to start without them); the webhook's turns its route on locally. */
  readonly readBy: PaymentFunction;
  /** What it is, in the words of an error naming it ("the key refunds are paid with"). */
  readonly description: string;
}

/** A plain (not secret) setting of the provider, read by the payment functions from their environment. */
export interface ProviderSetting {
  readonly env: string;
  readonly description: string;
  /** true: `sst deploy` passes it on to the payment functions when it is set; false: local runs and tests only. */
  readonly deployed: boolean;
}

/** The OpenAPI description of a webhook route (functions/http/openapi.ts adds the answers every webhook gives). */
export interface ProviderWebhookDoc {
  readonly summary: string;
  readonly description: string;
  /** The header that carries the provider's signature, and what it looks like. */
  readonly signatureHeader: { readonly name: string; readonly description: string };
  /** The body as the provider sends it. */
  readonly body: { readonly description: string; readonly schema: z.ZodType };
}

/** The provider's webhook: `POST <path>`, open at the gateway, verified by the adapter against the signing secret. */
export interface ProviderWebhook {
  readonly path: `/webhooks/${string}`;
  /** The secret it is signed with: a key of the provider's `secrets`, read by paymentWebhook. */
  readonly secret: string;
  /** The stack output that gives the endpoint's URL (`<api><path>`) on AWS. */
  readonly output: string;
  readonly doc: ProviderWebhookDoc;
}

/** One payment provider: everything the deployment, the settings and the docs need to know of it. */
export interface PaymentProviderDeclaration {
  /** The value of PAYMENT_PROVIDER, and what settlements and RefundSettled / RefundFailed record as `provider`. */
  readonly name: string;
  /** What it does, for the providers' table of docs/payments.md. */
  readonly description: string;
  readonly secrets: Readonly<Record<string, ProviderSecret>>;
  readonly settings: Readonly<Record<string, ProviderSetting>>;
  readonly webhook?: ProviderWebhook;
}
