import { describe, expect, it } from "vitest";
import { OrderSourceUnavailableError } from "../../pipeline/errors.ts";
import { createOrderApiSource } from "./order-api.ts";
import { OrderSourceConfigError } from "./errors.ts";

const ORDER = {
  order_id: "ord_1",
  purchase_date: "2026-11-20T10:00:00Z",
  category: "electronics",
  amount: 299.99,
  currency: "EUR",
  customer_id: "cus_1",
  payment_ref: "pi_123",
};

type Answer = Response | Error;

/** A fetch that answers from a script, one answer per call, recording every request. */
function scriptedFetch(...answers: Answer[]) {
  const calls: { url: string; headers: Record<string, string> }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, headers: init.headers as Record<string, string> });
    const next = answers.shift();
    if (next === undefined) throw new Error("the script has no answer left");
    if (next instanceof Error) throw next;
    return next;
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

function source(fetch: typeof globalThis.fetch, sleeps: number[] = []) {
  return createOrderApiSource({
    url: "https://shop.example/api/",
    token: "tok_secret_value_123",
    fetch,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
}

async function unavailable(read: Promise<unknown>): Promise<string> {
  const error = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OrderSourceUnavailableError);
  return (error as Error).message;
}

describe("the order API adapter", () => {
  it("reads an order with the bearer token, carrying customer_id and payment_ref", async () => {
    const { fetch, calls } = scriptedFetch(json({ ...ORDER, warehouse: "north" }));
    expect(await source(fetch).getOrder("ord_1")).toEqual(ORDER);
    expect(calls).toEqual([
      {
        url: "https://shop.example/api/orders/ord_1",
        headers: { authorization: "Bearer tok_secret_value_123", accept: "application/json" },
      },
    ]);
  });

  it("answers undefined for 404 (the kernel's ORDER_NOT_FOUND) and encodes the id in the path", async () => {
    const { fetch, calls } = scriptedFetch(new Response("no such order", { status: 404 }));
    expect(await source(fetch).getOrder("ord/../x y")).toBeUndefined();
    expect(calls[0]!.url).toBe("https://shop.example/api/orders/ord%2F..%2Fx%20y");
  });

  it("drops null optional fields", async () => {
    const { fetch } = scriptedFetch(json({ ...ORDER, customer_id: null, payment_ref: null }));
    const order = await source(fetch).getOrder("ord_1");
    expect(order).toEqual({ ...ORDER, customer_id: undefined, payment_ref: undefined });
    expect(Object.keys(order!)).not.toContain("payment_ref");
  });

  it("retries 5xx, 429, timeouts and network errors with doubling backoff, then succeeds", async () => {
    const timeout = Object.assign(new Error("The operation was aborted due to timeout"), { name: "TimeoutError" });
    const refused = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    const { fetch, calls } = scriptedFetch(new Response("", { status: 503 }), json({}, 429), json(ORDER));
    const sleeps: number[] = [];
    expect(await source(fetch, sleeps).getOrder("ord_1")).toEqual(ORDER);
    expect(calls).toHaveLength(3);
    expect(sleeps).toEqual([250, 500]);
    const again = scriptedFetch(timeout, refused, json(ORDER));
    expect(await source(again.fetch).getOrder("ord_1")).toEqual(ORDER);
  });

  it("gives up after the bounded attempts with an error naming the last problem, never the token", async () => {
    const { fetch, calls } = scriptedFetch(
      new Response("", { status: 502 }),
      new Response("", { status: 502 }),
      new Response("", { status: 503 }),
      json(ORDER),
    );
    const message = await unavailable(source(fetch).getOrder("ord_1"));
    expect(calls).toHaveLength(3);
    expect(message).toBe(
      "order API GET https://shop.example/api/orders/ord_1 failed after 3 attempts: answered HTTP 503",
    );
    expect(message).not.toContain("tok_secret");
  });

  it("names a timeout and a refused connection", async () => {
    const timeout = Object.assign(new Error("aborted"), { name: "TimeoutError" });
    const refused = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    expect(await unavailable(source(scriptedFetch(refused, refused, timeout).fetch).getOrder("ord_1"))).toMatch(
      /failed after 3 attempts: no answer within 4000 ms$/,
    );
    expect(await unavailable(source(scriptedFetch(timeout, timeout, refused).fetch).getOrder("ord_1"))).toMatch(
      /request failed \(ECONNREFUSED\)$/,
    );
  });

  it("does not retry a refused token or another 4xx, and says which", async () => {
    const denied = scriptedFetch(new Response("", { status: 401 }), json(ORDER));
    expect(await unavailable(source(denied.fetch).getOrder("ord_1"))).toMatch(
      /after 1 attempt: answered HTTP 401: it refused the token \(check ORDER_API_TOKEN\)$/,
    );
    expect(denied.calls).toHaveLength(1);
    const bad = scriptedFetch(new Response("", { status: 400 }), json(ORDER));
    expect(await unavailable(source(bad.fetch).getOrder("ord_1"))).toMatch(/answered HTTP 400$/);
    expect(bad.calls).toHaveLength(1);
  });

  it.each([
    ["a body that is not JSON", new Response("<html>gateway</html>", { status: 200 }), /body that is not JSON/],
    [
      "a string amount",
      json({ ...ORDER, amount: "299.99" }),
      /\(amount: Invalid input: expected number, received string\)/,
    ],
    ["no category", json({ ...ORDER, category: undefined }), /\(category: Invalid input/],
    ["another order", json({ ...ORDER, order_id: "ord_2" }), /answered order_id "ord_2" for "ord_1"/],
    ["another currency", json({ ...ORDER, currency: "USD" }), /cannot be used \(order is invalid: .*currency/s],
    ["an amount of fractions of a cent", json({ ...ORDER, amount: 1.234 }), /cannot be used \(order ord_1: /],
    ["a date that is not ISO", json({ ...ORDER, purchase_date: "yesterday" }), /purchase_date "yesterday"/],
  ])("treats %s as garbled: retried, then unavailable naming the field", async (_, answer, expected) => {
    const { fetch, calls } = scriptedFetch(answer, answer.clone(), answer.clone());
    expect(await unavailable(source(fetch).getOrder("ord_1"))).toMatch(expected);
    expect(calls).toHaveLength(3);
  });

  it("refuses a URL that is not http(s) and an empty token", () => {
    expect(() => createOrderApiSource({ url: "shop.example", token: "t" })).toThrow(OrderSourceConfigError);
    expect(() => createOrderApiSource({ url: "https://shop.example", token: " " })).toThrow("ORDER_API_TOKEN is empty");
  });
});
