// Whether the shop's order API answers, for `claims serve` (ORDER_SOURCE=http, docs/orders.md): checked once at
// start — a wrong ORDER_API_URL or token is said then, not found out claim by claim — and again every
// ORDER_API_RECHECK_MS, so `GET /health` says `{"status":"degraded","orders":"unreachable"}` while it fails and ok
// again once it answers. The check is one request for a probe order (adapters/shop/order-api.ts `check`).
import { createOrderApiSource } from "../adapters/shop/order-api.ts";
import type { OrderApiCheck } from "../adapters/shop/order-api.ts";
import { orderSourceSecretsOf, orderSourceSettingsFrom } from "../app/order-source.ts";
import type { OrderSourceSecretLink } from "../app/order-source.ts";
import { localOrderSourceSecrets } from "./order-source.ts";

/** How often a running server checks the order API again (while it answers, and while it does not). */
export const ORDER_API_RECHECK_MS = 15_000;

/** The order API's state as `claims serve` knows it. */
export interface OrderApiMonitor {
  /** The first check's outcome (awaited before the server says it is ready). */
  readonly first: OrderApiCheck;
  /** Whether the latest check failed. */
  unreachable(): boolean;
  /** Stops checking. */
  stop(): void;
}

/**
 * Checks the order API now and every `recheckMs` (a check in flight is never doubled); the timer never keeps the
 * process alive. `every` is injected for tests (default setInterval).
 */
export async function startOrderApiMonitor(
  check: () => Promise<OrderApiCheck>,
  options: {
    recheckMs?: number;
    every?: (run: () => void, ms: number) => { stop(): void };
    onChange?: (latest: OrderApiCheck) => void;
  } = {},
): Promise<OrderApiMonitor> {
  const safely = () => check().catch((error: unknown): OrderApiCheck => ({ ok: false, problem: String(error) }));
  const first = await safely();
  let latest = first;
  let running = false;
  const every =
    options.every ??
    ((run: () => void, ms: number) => {
      const timer = setInterval(run, ms);
      timer.unref();
      return { stop: () => clearInterval(timer) };
    });
  const timer = every(() => {
    if (running) return;
    running = true;
    void safely()
      .then((next) => {
        const changed = next.ok !== latest.ok;
        latest = next;
        if (changed) options.onChange?.(next);
      })
      .finally(() => {
        running = false;
      });
  }, options.recheckMs ?? ORDER_API_RECHECK_MS);
  return { first, unreachable: () => !latest.ok, stop: () => timer.stop() };
}

/**
 * The monitor of the order API the environment configures (ORDER_SOURCE=http: ORDER_API_URL, ORDER_API_TIMEOUT_MS,
 * the token from ORDER_API_TOKEN or ORDER_API_TOKEN_FILE), or undefined for the table (nothing to check).
 */
export async function orderApiMonitorFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: Parameters<typeof startOrderApiMonitor>[1] = {},
): Promise<(OrderApiMonitor & { readonly url: string }) | undefined> {
  const settings = orderSourceSettingsFrom(env);
  if (settings.source !== "http") return undefined;
  const token = orderSourceSecretsOf("http").find((s) => s.role === "token")!.secret.link as OrderSourceSecretLink;
  const source = createOrderApiSource({
    url: settings.values.url,
    token: localOrderSourceSecrets("http", env)[token],
    timeoutMs: settings.values.timeoutMs,
  });
  return { ...(await startOrderApiMonitor(() => source.check(), options)), url: settings.values.url };
}
