// OrderSource over the shop's own order API (ORDER_SOURCE=http, docs/orders.md): `GET {url}/orders/{order_id}`
// with `Authorization: Bearer {token}`, answered `200 { order_id, purchase_date, currency, category + amount | lines
// [+ shipping], customer_id?, payment_ref? }` (docs/orders.md) or 404. Each attempt — the request and reading its body, at most 1 MB — has a
// timeout; redirects are never followed; a network error, a timeout (of the answer or of its body), 429 and 5xx
// are retried a bounded number of times with exponential backoff; whatever still fails — and any answer that is
// not an order — is an OrderSourceUnavailableError naming what was wrong (never the token), so the claim waits
// and retries (up to ORDER_SOURCE_MAX_WAIT_S) instead of being decided on facts the shop did not give. An order id
// that would change the path (`.`, `..`) is asked for nowhere: no such order.
import * as z from "zod";
import type { Order } from "../../core/integrity/contracts.ts";
import { orderIdPathProblem } from "../../core/claim/claim.ts";
import { validateOrder } from "../../core/kernel/orders.ts";
import { OrderSourceUnavailableError } from "../../pipeline/errors.ts";
import { OrderSourceConfigError } from "./errors.ts";
import type { OrderSource, OrderSourceAdapter } from "../../pipeline/ports.ts";

/** The body of a 200 answer: the order contract. Fields the shop adds are ignored; `null` counts as absent. */
export const OrderApiOrderSchema = z.object({
  order_id: z.string().min(1),
  purchase_date: z.string().min(1),
  category: z.string().min(1).nullish(),
  amount: z.union([z.number(), z.string().min(1)]).nullish(),
  currency: z.string().min(1),
  customer_id: z.string().min(1).nullish(),
  payment_ref: z.string().min(1).nullish(),
  shipping: z.union([z.number(), z.string().min(1)]).nullish(),
  lines: z
    .array(
      z.object({
        line_id: z.string().min(1).max(64),
        sku: z.string().min(1).nullish(),
        title: z.string().min(1).max(200).nullish(),
        category: z.string().min(1),
        quantity: z.number(),
        amount: z.union([z.number(), z.string().min(1)]),
      }),
    )
    .min(1)
    .nullish(),
});

/** Settings of the order API adapter; everything but `url` and `token` has a default. */
export type OrderApiOptions = {
  /** ORDER_API_URL: the base the adapter appends `/orders/{order_id}` to. */
  readonly url: string;
  /** ORDER_API_TOKEN: sent as `Authorization: Bearer …`, never logged nor put in an error. */
  readonly token: string;
  /** Each attempt's timeout, the body's reading included (default 4 s: three attempts and their backoff fit a 30 s function). */
  readonly timeoutMs?: number;
  /** Attempts per read, the first included (default 3). */
  readonly attempts?: number;
  /** Backoff before the 2nd attempt, doubled before each next one (default 250 ms). */
  readonly backoffMs?: number;
  /** The largest body read (default 1 MB); a longer one is a failed attempt, not read further. */
  readonly maxBodyBytes?: number;
  /** Injected for tests: the fetch, the wait between attempts and the attempt's abort signal. */
  readonly fetch?: typeof fetch;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly timeoutSignal?: (ms: number) => AbortSignal;
};

/** Defaults of the adapter (docs/orders.md). */
export const ORDER_API_DEFAULTS = { timeoutMs: 4_000, attempts: 3, backoffMs: 250, maxBodyBytes: 1_048_576 } as const;

/**
 * The order id the start-up check asks for (`checkOrderApi`): any answer of the contract — 404, or 200 — says the
 * API is there and takes the token.
 */
export const ORDER_API_PROBE_ID = "claims-crew-order-api-check";

/** The outcome of checking the order API: it answers the contract, or what is wrong (never the token). */
export type OrderApiCheck = { readonly ok: true } | { readonly ok: false; readonly problem: string };

/** An order source over the shop's order API, which can also check that the API answers (`claims serve`'s start). */
export type OrderApiSource = OrderSource & {
  /** One attempt at the probe order (no retry): ok on 200 or 404, else what was wrong. */
  check(): Promise<OrderApiCheck>;
};

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
export function createOrderApiSource(options: OrderApiOptions): OrderApiSource {
  const base = options.url.replace(/\/+$/, "");
  if (!/^https?:\/\/[^\s/]+/.test(base))
    throw new OrderSourceConfigError(`ORDER_API_URL must be an http(s) URL, got ${JSON.stringify(options.url)}`);
  if (options.token.trim() === "") throw new OrderSourceConfigError("ORDER_API_TOKEN is empty");
  const timeoutMs = options.timeoutMs ?? ORDER_API_DEFAULTS.timeoutMs;
  const attempts = Math.max(1, options.attempts ?? ORDER_API_DEFAULTS.attempts);
  const backoffMs = options.backoffMs ?? ORDER_API_DEFAULTS.backoffMs;
  const maxBodyBytes = options.maxBodyBytes ?? ORDER_API_DEFAULTS.maxBodyBytes;
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const timeoutSignal = options.timeoutSignal ?? ((ms: number) => AbortSignal.timeout(ms));
  const basePath = new URL(base).pathname.replace(/\/+$/, "");

  /** The order's URL, or undefined when the id would not stay one segment under `{url}/orders/` (no such order). */
  function orderUrl(orderId: string): string | undefined {
    if (orderIdPathProblem(orderId) !== undefined) return undefined;
    const url = `${base}/orders/${encodeURIComponent(orderId)}`;
    return new URL(url).pathname === `${basePath}/orders/${encodeURIComponent(orderId)}` ? url : undefined;
  }

  async function attempt(orderId: string, url: string): Promise<Attempt> {
    const signal = timeoutSignal(timeoutMs);
    const timedOut = () => ({ problem: `no answer within ${timeoutMs} ms`, retryable: true });
    let response: Response;
    try {
      response = await doFetch(url, {
        method: "GET",
        headers: { authorization: `Bearer ${options.token}`, accept: "application/json" },
        redirect: "error",
        signal,
      });
    } catch (error) {
      if (isAbort(error) || signal.aborted) return timedOut();
      if (isRedirect(error))
        return {
          problem: "answered a redirect, which is not followed (ORDER_API_URL must be the order API itself)",
          retryable: false,
        };
      return { problem: `request failed (${describe(error)})`, retryable: true };
    }
    if (response.status === 404) {
      await discard(response);
      return { found: undefined };
    }
    if (response.status !== 200) {
      await discard(response);
      const status = `answered HTTP ${response.status}`;
      if (response.status === 401 || response.status === 403)
        return { problem: `${status}: it refused the token (check ORDER_API_TOKEN)`, retryable: false };
      if (response.status >= 300 && response.status < 400)
        return {
          problem: `${status}, a redirect, which is not followed (ORDER_API_URL must be the order API itself)`,
          retryable: false,
        };
      return { problem: status, retryable: response.status === 429 || response.status >= 500 };
    }
    const text = await readBody(response, signal, maxBodyBytes);
    if ("problem" in text) return text.timedOut ? timedOut() : { problem: text.problem, retryable: true };
    const body = orderFrom(orderId, text.text);
    return "found" in body ? body : { problem: body.problem, retryable: true };
  }

  return {
    origin: "shop_api",
    async getOrder(orderId) {
      const url = orderUrl(orderId);
      if (url === undefined) return undefined;
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
    async check() {
      const url = orderUrl(ORDER_API_PROBE_ID)!;
      const result = await attempt(ORDER_API_PROBE_ID, url);
      if ("found" in result) return { ok: true };
      // A 200 that is not the probe order is still the API answering with the token accepted.
      if (result.problem.startsWith("answered an order") || result.problem.startsWith("answered order_id"))
        return { ok: true };
      return { ok: false, problem: `order API GET ${url}: ${result.problem}` };
    },
  };
}

/**
 * The source, its API checked on first use (a deployed function's cold start): the check runs beside the first
 * read, once, and `report` hears its outcome — a wrong ORDER_API_URL or token is said plainly in the function's
 * log then, not found out claim by claim. The reads themselves are unchanged.
 */
export function checkedOnFirstUse(source: OrderApiSource, report: (check: OrderApiCheck) => void): OrderApiSource {
  let checked = false;
  return {
    ...(source.origin ? { origin: source.origin } : {}),
    check: () => source.check(),
    getOrder(orderId) {
      if (!checked) {
        checked = true;
        void source.check().then(report, (error: unknown) => report({ ok: false, problem: String(error) }));
      }
      return source.getOrder(orderId);
    },
  };
}

/** Reads a body of at most `maxBytes` before `signal` aborts; its errors and its timeout are the attempt's. */
async function readBody(
  response: Response,
  signal: AbortSignal,
  maxBytes: number,
): Promise<{ text: string } | { problem: string; timedOut: boolean }> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discard(response);
    return {
      problem: `answered a body of ${declared} bytes, more than the ${maxBytes} an order may take`,
      timedOut: false,
    };
  }
  if (!response.body) return { text: "" };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  // The fetch's own signal stops the body of a real answer; this also stops a stream that ignores it.
  const aborted = new Promise<"aborted">((resolve) => {
    if (signal.aborted) resolve("aborted");
    else signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), aborted]);
      if (next === "aborted") {
        void reader.cancel().catch(() => undefined);
        return { problem: "", timedOut: true };
      }
      if (next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) {
        void reader.cancel().catch(() => undefined);
        return {
          problem: `answered a body of more than ${maxBytes} bytes, the most an order may take`,
          timedOut: false,
        };
      }
      chunks.push(next.value);
    }
  } catch (error) {
    if (isAbort(error) || signal.aborted) return { problem: "", timedOut: true };
    return { problem: `the body could not be read (${describe(error)})`, timedOut: false };
  }
  return { text: Buffer.concat(chunks).toString("utf8") };
}

/** Drops an answer's body unread (a failed cancel is nothing to report). */
async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === "TimeoutError" || name === "AbortError";
}

/** fetch's refusal of a redirect (`redirect: "error"`): a TypeError caused by "unexpected redirect". */
function isRedirect(error: unknown): boolean {
  const cause = (error as { cause?: { message?: unknown } } | undefined)?.cause;
  return typeof cause?.message === "string" && /redirect/i.test(cause.message);
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
  const { customer_id, payment_ref, category, amount, shipping, lines, ...rest } = parsed.data;
  if (rest.order_id !== orderId)
    return { problem: `answered order_id ${JSON.stringify(rest.order_id)} for ${JSON.stringify(orderId)}` };
  try {
    return {
      found: validateOrder({
        ...rest,
        ...(category == null ? {} : { category }),
        ...(amount == null ? {} : { amount }),
        ...(customer_id == null ? {} : { customer_id }),
        ...(payment_ref == null ? {} : { payment_ref }),
        ...(shipping == null ? {} : { shipping }),
        ...(lines == null
          ? {}
          : {
              lines: lines.map(({ sku, title, ...line }) => ({
                ...line,
                ...(sku == null ? {} : { sku }),
                ...(title == null ? {} : { title }),
              })),
            }),
      }),
    };
  } catch (error) {
    return { problem: `answered an order that cannot be used (${(error as Error).message})` };
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === "string") return cause.code;
  if (cause && typeof cause.message === "string" && cause.message !== "") return cause.message;
  return error instanceof Error ? error.message : String(error);
}
