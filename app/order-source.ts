// The order-source registry (docs/orders.md#adding-an-order-source), free of SST: every place the kernel's orders
// can come from, each declared by one module of app/order-sources/ (name, settings, secrets), and the variables,
// their defaults and their validation derived from them. `sst deploy` reads them from its environment
// (infra/settings.ts) and gives the functions that read orders (ORDER_READERS) the same variables and the source's
// secrets by link; the functions and the local stack (`claims serve`, `claims batch`) read them from theirs, and
// functions/composition/order-sources.ts binds each name to its adapter. A secret is never here: on AWS it is an
// SST secret, locally a variable or a file (local/order-source.ts). A new source: its module here, its adapter,
// one entry in each of the two lists, and docs/orders.md.
import { OrderSourceSettingError } from "./errors.ts";
import type { FunctionKey } from "./manifest.ts";
import type { OrderSourceSecret, OrderSourceSetting } from "./order-sources/declaration.ts";
import { http } from "./order-sources/http.ts";
import { table } from "./order-sources/table.ts";

export type { OrderSourceSecret } from "./order-sources/declaration.ts";

/** Every order source, the default first, in the order errors and docs list them. */
export const ORDER_SOURCE_MODULES = [table, http] as const;

/** An order source's declaration. */
export type OrderSourceModule = (typeof ORDER_SOURCE_MODULES)[number];

/** An order source: a value of ORDER_SOURCE. */
export type OrderSourceKind = OrderSourceModule["name"];

/** The declaration of the source named `N`. */
export type OrderSourceOf<N extends OrderSourceKind> = Extract<OrderSourceModule, { name: N }>;

/** The order sources' names: the DynamoDB table (`claims load-orders`, the default) or the shop's order API. */
export const ORDER_SOURCES: readonly OrderSourceKind[] = ORDER_SOURCE_MODULES.map((s) => s.name);

/** The source when ORDER_SOURCE is unset. */
export const DEFAULT_ORDER_SOURCE: OrderSourceKind = table.name;

/** The variables of every source, by role: which source, and how long a claim waits for one that does not answer. */
export const ORDER_SOURCE_VARS = {
  source: "ORDER_SOURCE",
  maxWait: "ORDER_SOURCE_MAX_WAIT_S",
} as const;

/**
 * How long a claim waits for an order source that cannot answer, by default (10 minutes), and at most: less than
 * the proposal's validity window (15 minutes), so the wait itself can never expire a proposal (TTL_EXPIRED).
 */
export const ORDER_WAIT_LIMITS_S = { default: 600, min: 1, max: 840 } as const;

/**
 * The functions that read orders (intake completing a claim on lines, the kernel's decisions, the orchestrator's
 * triage, a reviewer's approval, the sweep finishing an approval, the batch recording its run's orders): only they
 * get the order source's settings and secrets.
 */
export const ORDER_READERS = [
  "intakeApi",
  "kernel",
  "orchestrator",
  "reviewApi",
  "sweep",
  "batch",
  "refundExecutor",
] as const satisfies readonly FunctionKey[];

/** The values of a declaration's settings: a URL is a string, an integer a number. */
export type OrderSourceValues<D extends { readonly settings: object }> = {
  readonly [K in keyof D["settings"]]: D["settings"][K] extends { readonly kind: "int" } ? number : string;
};

/** The order source as configured: which one, the wait, and its settings' values. */
export type OrderSourceSettings = {
  readonly [N in OrderSourceKind]: {
    readonly source: N;
    readonly maxWaitMs: number;
    readonly values: OrderSourceValues<OrderSourceOf<N>>;
  };
}[OrderSourceKind];

/** The links of declarations' secrets (each member of a union of them). */
type LinksOf<S> = S extends unknown
  ? { [K in keyof S]: S[K] extends { readonly link: infer L } ? L : never }[keyof S]
  : never;

/** The link (SST secret) name of every source's secrets. */
export type OrderSourceSecretLink = LinksOf<OrderSourceModule["secrets"]>;

type Env = Readonly<Record<string, string | undefined>>;

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function readInt(env: Env, name: string, limits: { default: number; min: number; max: number }): number {
  const raw = read(env, name);
  if (raw === undefined) return limits.default;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < limits.min || n > limits.max)
    throw new OrderSourceSettingError(
      `${name}=${JSON.stringify(raw)} is invalid: expected an integer from ${limits.min} to ${limits.max}`,
    );
  return n;
}

function readSetting(env: Env, setting: OrderSourceSetting): string | number {
  if (setting.kind === "int") return readInt(env, setting.env, setting.limits);
  const url = read(env, setting.env);
  if (url === undefined) throw new OrderSourceSettingError(`${setting.env} is not set: ${setting.missing}`);
  if (!/^https?:\/\/[^\s/]+\S*$/.test(url))
    throw new OrderSourceSettingError(
      `${setting.env}=${JSON.stringify(url)} is invalid: expected an http:// or https:// URL`,
    );
  return url;
}

/** The source called `name`. */
function orderSourceModule<N extends OrderSourceKind>(name: N): OrderSourceOf<N> {
  return ORDER_SOURCE_MODULES.find((s) => s.name === name) as OrderSourceOf<N>;
}

/** Every setting of `source`, with its role (the key its declaration and adapter use), in declaration order. */
export function orderSourceSettingsOf(source: OrderSourceKind): { role: string; setting: OrderSourceSetting }[] {
  const declared = orderSourceModule(source).settings as Readonly<Record<string, OrderSourceSetting>>;
  return Object.entries(declared).map(([role, setting]) => ({ role, setting }));
}

/** Every secret of `source`, with its role. */
export function orderSourceSecretsOf(source: OrderSourceKind): { role: string; secret: OrderSourceSecret }[] {
  const declared = orderSourceModule(source).secrets as Readonly<Record<string, OrderSourceSecret>>;
  return Object.entries(declared).map(([role, secret]) => ({ role, secret }));
}

/** Reads ORDER_SOURCE (default table), ORDER_SOURCE_MAX_WAIT_S, then the source's own settings (ORDER_API_URL, …). */
export function orderSourceSettingsFrom(env: Env): OrderSourceSettings {
  const raw = read(env, ORDER_SOURCE_VARS.source) ?? DEFAULT_ORDER_SOURCE;
  const source = ORDER_SOURCES.find((s) => s === raw);
  if (source === undefined)
    throw new OrderSourceSettingError(
      `${ORDER_SOURCE_VARS.source}=${JSON.stringify(raw)} is invalid: expected ${ORDER_SOURCES.join(" or ")}`,
    );
  const maxWaitMs = readInt(env, ORDER_SOURCE_VARS.maxWait, ORDER_WAIT_LIMITS_S) * 1000;
  const values = Object.fromEntries(
    orderSourceSettingsOf(source).map(({ role, setting }) => [role, readSetting(env, setting)]),
  );
  return { source, maxWaitMs, values } as OrderSourceSettings;
}

/**
 * The variables a function that reads orders gets on AWS: ORDER_SOURCE, the wait and the source's settings. The
 * default source needs none (the functions' defaults are it). Secrets come by link, never here.
 */
export function orderSourceEnvironment(settings: OrderSourceSettings): Record<string, string> {
  if (settings.source === DEFAULT_ORDER_SOURCE) return {};
  const values = settings.values as Readonly<Record<string, string | number>>;
  return {
    [ORDER_SOURCE_VARS.source]: settings.source,
    [ORDER_SOURCE_VARS.maxWait]: String(settings.maxWaitMs / 1000),
    ...Object.fromEntries(
      orderSourceSettingsOf(settings.source).map(({ role, setting }) => [setting.env, String(values[role])]),
    ),
  };
}

/** The links the functions that read orders (ORDER_READERS) get from `source`: its secrets. */
export function orderSourceLinks(source: OrderSourceKind): OrderSourceSecretLink[] {
  return orderSourceSecretsOf(source).map((s) => s.secret.link as OrderSourceSecretLink);
}

/** The links of every source's secrets (each a LinkName of app/links.ts). */
export const ORDER_SOURCE_SECRET_LINKS = ORDER_SOURCES.flatMap(orderSourceLinks);
