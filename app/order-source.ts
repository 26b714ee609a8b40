// Where the kernel's orders come from (docs/orders.md), defined once and free of SST: the variables, their defaults
// and their validation. `sst deploy` reads them from its environment (infra/settings.ts) and gives the functions
// that read orders (ORDER_READERS) the same variables; the functions and the local stack (`claims serve`,
// `claims batch`) read them from theirs. The token is never here: on AWS it is the OrderApiToken secret, locally
// ORDER_API_TOKEN or the file ORDER_API_TOKEN_FILE names.
import { OrderSourceSettingError } from "./errors.ts";
import type { FunctionKey } from "./manifest.ts";

/** The order sources: the DynamoDB table (`claims load-orders`) or the shop's order API. */
export const ORDER_SOURCES = ["table", "http"] as const;

/** An order source. */
export type OrderSourceKind = (typeof ORDER_SOURCES)[number];

/** The variables, by role. */
export const ORDER_SOURCE_VARS = {
  source: "ORDER_SOURCE",
  url: "ORDER_API_URL",
  maxWait: "ORDER_SOURCE_MAX_WAIT_S",
  timeout: "ORDER_API_TIMEOUT_MS",
  token: "ORDER_API_TOKEN",
  tokenFile: "ORDER_API_TOKEN_FILE",
} as const;

/**
 * How long a claim waits for an order source that cannot answer, by default (10 minutes), and at most: less than
 * the proposal's validity window (15 minutes), so the wait itself can never expire a proposal (TTL_EXPIRED).
 */
export const ORDER_WAIT_LIMITS_S = { default: 600, min: 1, max: 840 } as const;

/** Each attempt's timeout of the order API adapter, by default and at most (3 attempts fit the kernel's 30 s). */
export const ORDER_TIMEOUT_LIMITS_MS = { default: 4_000, min: 100, max: 8_000 } as const;

/**
 * The functions that read orders (the kernel's decisions, the orchestrator's triage, a reviewer's approval, the sweep finishing an approval,
 * the batch recording its run's orders): only they get the order API's settings and token.
 */
export const ORDER_READERS = [
  "kernel",
  "orchestrator",
  "reviewApi",
  "sweep",
  "batch",
  "refundExecutor",
] as const satisfies readonly FunctionKey[];

/** The order source as configured. */
export type OrderSourceSettings =
  | { readonly source: "table"; readonly maxWaitMs: number }
  | { readonly source: "http"; readonly url: string; readonly maxWaitMs: number; readonly timeoutMs: number };

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

/** Reads ORDER_SOURCE (default table), ORDER_API_URL (required for http), ORDER_SOURCE_MAX_WAIT_S, ORDER_API_TIMEOUT_MS. */
export function orderSourceSettingsFrom(env: Env): OrderSourceSettings {
  const raw = read(env, ORDER_SOURCE_VARS.source) ?? "table";
  const source = ORDER_SOURCES.find((s) => s === raw);
  if (source === undefined)
    throw new OrderSourceSettingError(
      `${ORDER_SOURCE_VARS.source}=${JSON.stringify(raw)} is invalid: expected ${ORDER_SOURCES.join(" or ")}`,
    );
  const maxWaitMs = readInt(env, ORDER_SOURCE_VARS.maxWait, ORDER_WAIT_LIMITS_S) * 1000;
  if (source === "table") return { source, maxWaitMs };
  const url = read(env, ORDER_SOURCE_VARS.url);
  if (url === undefined)
    throw new OrderSourceSettingError(
      `${ORDER_SOURCE_VARS.url} is not set: ${ORDER_SOURCE_VARS.source}=http reads orders from {${ORDER_SOURCE_VARS.url}}/orders/{order_id}`,
    );
  if (!/^https?:\/\/[^\s/]+\S*$/.test(url))
    throw new OrderSourceSettingError(
      `${ORDER_SOURCE_VARS.url}=${JSON.stringify(url)} is invalid: expected an http:// or https:// URL`,
    );
  return { source, url, maxWaitMs, timeoutMs: readInt(env, ORDER_SOURCE_VARS.timeout, ORDER_TIMEOUT_LIMITS_MS) };
}

/** The variables a function that reads orders gets on AWS (the token comes by link, not here). */
export function orderSourceEnvironment(settings: OrderSourceSettings): Record<string, string> {
  return {
    [ORDER_SOURCE_VARS.source]: settings.source,
    [ORDER_SOURCE_VARS.maxWait]: String(settings.maxWaitMs / 1000),
    ...(settings.source === "http"
      ? { [ORDER_SOURCE_VARS.url]: settings.url, [ORDER_SOURCE_VARS.timeout]: String(settings.timeoutMs) }
      : {}),
  };
}
