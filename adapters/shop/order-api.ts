// OrderSource over the shop's own order API (ORDER_SOURCE=http, docs/orders.md): `GET {url}/orders/{order_id}`
// with `Authorization: Bearer {token}`, answered `200 { order_id, purchase_date, category, amount, currency,
// customer_id?, payment_ref? }` or 404. Each attempt has a timeout; a network error, a timeout, 429 and 5xx are
// retried a bounded number of times with exponential backoff; whatever still fails — and any answer that is not
// an order — is an OrderSourceUnavailableError naming what was wrong (never the token), so the claim waits and
// retries instead of being decided on facts the shop did not give.
import * as z from "zod";
import type { Order } from "../../core/integrity/contracts.ts";
import { validateOrder } from "../../core/kernel/orders.ts";
import { OrderSourceUnavailableError } from "../../pipeline/errors.ts";
import { OrderSourceConfigError } from "./errors.ts";
import type { OrderSource, OrderSourceAdapter } from "../../pipeline/ports.ts";

/** The body of a 200 answer: the order contract. Fields the shop adds are ignored; `null` counts as absent. */
export const OrderApiOrderSchema = z.object({
  order_id: z.string().min(1),
  purchase_date: z.string().min(1),
  category: z.string().min(1),
  amount: z.number().positive(),
  currency: z.string().min(1),
  customer_id: z.string().min(1).nullish(),
  payment_ref: z.string().min(1).nullish(),
});

/** Settings of the order API adapter; everything but `url` and `token` has a default. */
export type OrderApiOptions = {
  /** ORDER_API_URL: the base the adapter appends `/orders/{order_id}` to. */
  readonly url: string;
  /** ORDER_API_TOKEN: sent as `Authorization: Bearer …`, never logged nor put in an error. */
  readonly token: string;
  /** Each attempt's timeout (default 4 s: three attempts and their backoff fit a 30 s function). */
  readonly timeoutMs?: number;
  /** Attempts per read, the first included (default 3). */
  readonly attempts?: number;
  /** Backoff before the 2nd attempt, doubled before each next one (default 250 ms). */
  readonly backoffMs?: number;
  /** Injected for tests: the fetch, the wait between attempts and the attempt's abort signal. */
  readonly fetch?: typeof fetch;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly timeoutSignal?: (ms: number) => AbortSignal;
};

/** Defaults of the adapter (docs/orders.md). */
export const ORDER_API_DEFAULTS = { timeoutMs: 4_000, attempts: 3, backoffMs: 250 } as const;

/**
 * The `http` order source's adapter (app/order-sources/http.ts): the order API at its URL with its token and each
 * attempt's timeout, as declared and validated there.
 */
export const orderApiSource = {
  name: "http",
  createSource: ({ settings, secret }) =>
    createOrderApiSource({ url: settings.url, token: secret("token"), timeoutMs: settings.timeoutMs }),
} as const satisfies OrderSourceAdapter<"token", { readonly url: string; readonly timeoutMs: number }>;

/** One attempt's outcome: an order, none (404), or a failure and whether another attempt may help. */
type Attempt = { found: Order | undefined } | { problem: string; retryable: boolean };

/** An OrderSource reading the shop's order API. */
export function createOrderApiSource(options: OrderApiOptions): OrderSource {
  const base = options.url.replace(/\/+$/, "");
  if (!/^https?:\/\/[^\s/]+/.test(base))
    throw new OrderSourceConfigError(`ORDER_API_URL must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  if (options.token.trim() === "") throw new OrderSourceConfigError("ORDER_API_TOKEN is empty");
  const timeoutMs = options.timeoutMs ?? ORDER_API_DEFAULTS.timeoutMs;
  const attempts = Math.max(1, options.attempts ?? ORDER_API_DEFAULTS.attempts);
  const backoffMs = options.backoffMs ?? ORDER_API_DEFAULTS.backoffMs;
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const timeoutSignal = options.timeoutSignal ?? ((ms: number) => AbortSignal.timeout(ms));

  async function attempt(orderId: string, url: string): Promise<Attempt> {
    let response: Response;
    try {
      response = await doFetch(url, {
        method: "GET",
        headers: { authorization: `Bearer ${options.token}`, accept: "application/json" },
        signal: timeoutSignal(timeoutMs),
      });
    } catch (error) {
      const name = (error as Error).name;
      const timedOut = name === "TimeoutError" || name === "AbortError";
      return {
        problem: timedOut ? `no answer within ${timeoutMs} ms` : `request failed (${describe(error)})`,
        retryable: true,
      };
    }
    if (response.status === 404) {
      await response.body?.cancel();
      return { found: undefined };
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      const status = `answered HTTP ${response.status}`;
      if (response.status === 401 || response.status === 403)
        return { problem: `${status}: it refused the token (check ORDER_API_TOKEN)`, retryable: false };
      return { problem: status, retryable: response.status === 429 || response.status >= 500 };
    }
    const body = orderFrom(orderId, await response.text());
    return "found" in body ? body : { problem: body.problem, retryable: true };
  }

  return {
    async getOrder(orderId) {
      const url = `${base}/orders/${encodeURIComponent(orderId)}`;
      const problems: string[] = [];
      for (let n = 1; n <= attempts; n++) {
        const result = await attempt(orderId, url);
        if ("found" in result) return result.found;
        problems.push(result.problem);
        if (!result.retryable || n === attempts) break;
        await sleep(backoffMs * 2 ** (n - 1));
      }
      throw new OrderSourceUnavailableError(
        `order API GET ${url} failed after ${problems.length} attempt${problems.length === 1 ? "" : "s"}: ${problems.at(-1)}`,
      );
    },
  };
}

/** The order in a 200 body, or what is wrong with it (naming the field). */
function orderFrom(orderId: string, text: string): { found: Order } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: `answered 200 with a body that is not JSON (${JSON.stringify(text.slice(0, 60))})` };
  }
  const parsed = OrderApiOrderSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.length ? i.path.join(".") : "(body)"}: ${i.message}`)
      .join("; ");
    return { problem: `answered an order that does not follow the contract (${issues})` };
  }
  const { customer_id, payment_ref, ...rest } = parsed.data;
  if (rest.order_id !== orderId)
    return { problem: `answered order_id ${JSON.stringify(rest.order_id)} for ${JSON.stringify(orderId)}` };
  try {
    return {
      found: validateOrder({
        ...rest,
        ...(customer_id == null ? {} : { customer_id }),
        ...(payment_ref == null ? {} : { payment_ref }),
      }),
    };
  } catch (error) {
    return { problem: `answered an order that cannot be used (${(error as Error).message})` };
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === "string") return cause.code;
  return error instanceof Error ? error.message : String(error);
}
