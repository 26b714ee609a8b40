// The payment provider of the local stack (docs/payments.md), read by the registry (app/payment-provider.ts):
// PAYMENT_PROVIDER (unset: `simulated`) and the provider's declared variables — its secrets, handed to the
// handlers as the same links as on AWS (STRIPE_API_KEY → Resource.StripeApiKey), and its plain settings, handed
// to them as variables (STRIPE_API_BASE). A provider's webhook route answers only when its signing secret is set
// (STRIPE_WEBHOOK_SECRET), and only that provider's.
import { PAYMENT_PROVIDER_VAR, paymentProvider, secretsOf, settingsOf } from "../app/payment-provider.ts";
import type { PaymentProviderName, ProviderSecretLink } from "../app/payment-provider.ts";
import { paymentProviderNameFrom } from "../functions/composition/payments.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** What the local stack is told of its payment provider (each unset one comes from the environment). */
export interface LocalPaymentOptions {
  /** false: no payments rule and no refund executor, as on AWS without PAYMENT_PROVIDER (the benches price that). */
  readonly executor?: boolean;
  /** PAYMENT_PROVIDER (default: the environment's, else `simulated`). */
  readonly provider?: string;
  /** The provider's declared variables (STRIPE_API_KEY, STRIPE_API_BASE, STRIPE_WEBHOOK_SECRET, …), over the environment's. */
  readonly env?: Env;
}

/** The payment provider as the local stack runs it. */
export interface LocalPayments {
  readonly provider: PaymentProviderName;
  /** Its secrets that are set, by link (`Resource.<link>` for the handlers). */
  readonly secrets: Readonly<Partial<Record<ProviderSecretLink, string>>>;
  /** The variables the handlers get: PAYMENT_PROVIDER and the provider's settings that are set. */
  readonly env: Readonly<Record<string, string>>;
  /** Whether its webhook route answers: it has one and its signing secret is set. */
  readonly webhook: boolean;
}

const value = (v: string | undefined) => (v?.trim() ? v : undefined);

/** The provider of `options` over `env`; ConfigLoadError for a PAYMENT_PROVIDER the registry does not know. */
export function localPayments(options: LocalPaymentOptions | undefined, env: Env): LocalPayments {
  const read = (name: string) => value(options?.env?.[name]) ?? value(env[name]);
  const name = paymentProviderNameFrom({ [PAYMENT_PROVIDER_VAR]: options?.provider ?? env[PAYMENT_PROVIDER_VAR] });
  const declared = paymentProvider(name);
  const secrets: Partial<Record<ProviderSecretLink, string>> = {};
  for (const { secret } of secretsOf(declared)) {
    const v = read(secret.env);
    if (v !== undefined) secrets[secret.link as ProviderSecretLink] = v;
  }
  const settings: Record<string, string> = {};
  for (const { setting } of settingsOf(declared)) {
    const v = read(setting.env);
    if (v !== undefined) settings[setting.env] = v;
  }
  const webhookSecret =
    "webhook" in declared ? secretsOf(declared).find((s) => s.role === declared.webhook.secret) : undefined;
  return {
    provider: name,
    secrets,
    env: { [PAYMENT_PROVIDER_VAR]: name, ...settings },
    webhook: webhookSecret !== undefined && secrets[webhookSecret.secret.link as ProviderSecretLink] !== undefined,
  };
}
