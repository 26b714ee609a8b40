// The payment-provider registry (docs/payments.md#adding-a-payment-provider), free of SST: every provider the app
// can pay through, each declared by one module of app/payment-providers/ (name, secrets, settings, webhook), and
// what the app derives from them — the PAYMENT_PROVIDER values, the secrets' links, the webhook routes
// (app/routes.ts), the payment functions' environment. infra/ deploys the configured provider's secrets, links and
// route from here; functions/composition/payment-providers.ts binds each name to its adapter (adapters/payments/),
// and the local stack reads the provider's variables by it. A new provider: its module here, its adapter, one
// entry in each of the two lists, and docs/payments.md.
import { simulated } from "./payment-providers/simulated.ts";
import { stripe } from "./payment-providers/stripe.ts";
import type { ProviderSecret, ProviderSetting } from "./payment-providers/declaration.ts";

/** Every payment provider, in the order errors and docs list them. */
export const PAYMENT_PROVIDERS = [simulated, stripe] as const;

/** A provider's declaration. */
export type PaymentProviderModule = (typeof PAYMENT_PROVIDERS)[number];

/** A provider's name: a value of PAYMENT_PROVIDER. */
export type PaymentProviderName = PaymentProviderModule["name"];

/** The declaration of the provider named `N`. */
export type PaymentProviderOf<N extends PaymentProviderName> = Extract<PaymentProviderModule, { name: N }>;

/** The providers with a webhook. */
export type WebhookProvider = Extract<PaymentProviderModule, { webhook: object }>;

/** The variable that picks the provider (the refund executor's; locally unset means `simulated`, on AWS no executor). */
export const PAYMENT_PROVIDER_VAR = "PAYMENT_PROVIDER";

/** The provider a local run pays through when PAYMENT_PROVIDER is unset. */
export const LOCAL_PAYMENT_PROVIDER: PaymentProviderName = simulated.name;

/** The names of every provider, in registry order. */
export const PAYMENT_PROVIDER_NAMES: readonly PaymentProviderName[] = PAYMENT_PROVIDERS.map((p) => p.name);

/** The provider called `name`, or undefined. */
export function paymentProviderNamed(name: string): PaymentProviderModule | undefined {
  return PAYMENT_PROVIDERS.find((p) => p.name === name);
}

/** The provider called `name` (a name of the registry). */
export function paymentProvider<N extends PaymentProviderName>(name: N): PaymentProviderOf<N> {
  return paymentProviderNamed(name) as PaymentProviderOf<N>;
}

type Env = Readonly<Record<string, string | undefined>>;

/** PAYMENT_PROVIDER as set in `env` (trimmed; an empty one is unset): undefined when unset. */
export function paymentProviderVariable(env: Env): string | undefined {
  const raw = env[PAYMENT_PROVIDER_VAR]?.trim();
  return raw === undefined || raw === "" ? undefined : raw;
}

/** Every secret of `provider`, with its role (the key its declaration and adapter use). */
export function secretsOf(provider: PaymentProviderModule): { role: string; secret: ProviderSecret }[] {
  return Object.entries(provider.secrets as Readonly<Record<string, ProviderSecret>>).map(([role, secret]) => ({
    role,
    secret,
  }));
}

/** Every plain setting of `provider`, with its role. */
export function settingsOf(provider: PaymentProviderModule): { role: string; setting: ProviderSetting }[] {
  return Object.entries(provider.settings as Readonly<Record<string, ProviderSetting>>).map(([role, setting]) => ({
    role,
    setting,
  }));
}

/** The links of declarations' secrets (each member of a union of them). */
type LinksOf<S> = S extends unknown
  ? { [K in keyof S]: S[K] extends { readonly link: infer L } ? L : never }[keyof S]
  : never;

/** The link (SST secret) name of every provider's secrets. */
export type ProviderSecretLink = LinksOf<PaymentProviderModule["secrets"]>;

/** The links of every provider's secrets (each a LinkName of app/links.ts). */
export const PROVIDER_SECRET_LINKS = PAYMENT_PROVIDERS.flatMap((p) =>
  secretsOf(p).map((s) => s.secret.link),
) as readonly ProviderSecretLink[];

/** The links `fn` gets from `provider`: the secrets it reads (none without a provider). */
export function providerLinksOf(fn: string, provider: PaymentProviderName | undefined): ProviderSecretLink[] {
  if (provider === undefined) return [];
  return secretsOf(paymentProvider(provider))
    .filter((s) => s.secret.readBy === fn)
    .map((s) => s.secret.link as ProviderSecretLink);
}

/** The link of the secret `provider`'s webhooks are signed with (undefined: it has no webhook). */
export function webhookSecretLink(provider: PaymentProviderName): ProviderSecretLink | undefined {
  const declared: PaymentProviderModule = paymentProvider(provider);
  if (!("webhook" in declared)) return undefined;
  return (declared.secrets as Readonly<Record<string, ProviderSecret>>)[declared.webhook.secret]!
    .link as ProviderSecretLink;
}

/**
 * The variables the payment functions get on AWS: PAYMENT_PROVIDER and the provider's deployed settings that are
 * set in `env` (the deploy's environment). Secrets travel by link, never here.
 */
export function paymentEnvironment(provider: PaymentProviderName, env: Env): Record<string, string> {
  const out: Record<string, string> = { [PAYMENT_PROVIDER_VAR]: provider };
  for (const { setting } of settingsOf(paymentProvider(provider))) {
    const value = env[setting.env]?.trim();
    if (setting.deployed && value) out[setting.env] = value;
  }
  return out;
}

/**
 * The secrets `provider`'s refund executor cannot pay without that are not set in `env` (locally: `claims serve`
 * refuses to start without them), each with its variable and what it is.
 */
export function missingExecutorSecrets(provider: PaymentProviderName, env: Env): ProviderSecret[] {
  return secretsOf(paymentProvider(provider))
    .map((s) => s.secret)
    .filter((s) => s.readBy === "refundExecutor" && !env[s.env]?.trim());
}
