import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { OrderSourceUnavailableError } from "../../pipeline/errors.ts";
import { createOrderApiSource } from "./order-api.ts";
import { OrderSourceConfigError } from "./errors.ts";
import { ISSUE_EXAMPLE_ORDER } from "../../core/kernel/order-lines.test-kit.ts";

const ORDER = {
  order_id: "ord_1",
  purchase_date: "2026-11-20T10:00:00Z",
  category: "electronics",
  amount: 299.99,
  currency: "EUR",
  customer_id: "cus_1",
  payment_ref: "pi_123",
};

/** The issue's example: a USD order of two lines and shipping, amounts as decimal strings. */
const MULTI = ISSUE_EXAMPLE_ORDER;

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
    expect(await source(fetch).getOrder("ord x?y#%2e")).toBeUndefined();
    expect(calls[0]!.url).toBe("https://shop.example/api/orders/ord%20x%3Fy%23%252e");
  });

  it.each([".", "..", "a/b", "../admin", "a\\b"])(
    "asks the shop nothing for the order id %j, which would change the path (no such order)",
    async (id) => {
      const { fetch, calls } = scriptedFetch(json(ORDER));
      expect(await source(fetch).getOrder(id)).toBeUndefined();
      expect(calls).toEqual([]);
    },
  );

  it("never follows a redirect: fetch is told to refuse one, and a refused redirect is not retried", async () => {
    const inits: RequestInit[] = [];
    const redirect = Object.assign(new TypeError("fetch failed"), { cause: new Error("unexpected redirect") });
    const refusing = (async (_url: string, init: RequestInit) => {
      inits.push(init);
      throw redirect;
    }) as typeof globalThis.fetch;
    expect(await unavailable(source(refusing).getOrder("ord_1"))).toMatch(
      /after 1 attempt: answered a redirect, which is not followed \(ORDER_API_URL must be the order API itself\)$/,
    );
    expect(inits).toHaveLength(1);
    expect(inits[0]!.redirect).toBe("error");
    const manual = scriptedFetch(new Response(null, { status: 302, headers: { location: "https://evil.example/" } }));
    expect(await unavailable(source(manual.fetch).getOrder("ord_1"))).toMatch(/answered HTTP 302, a redirect/);
    expect(manual.calls).toHaveLength(1);
  });

  it("reads the body inside the attempt: a body that stalls past the timeout is a failed attempt, retried", async () => {
    const controllers: AbortController[] = [];
    const stalled = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new TextEncoder().encode('{"order_id":'));
            // …and nothing more: the timeout ends the attempt.
          },
        }),
        { status: 200 },
      );
    const { fetch, calls } = scriptedFetch(stalled(), stalled(), stalled());
    const read = createOrderApiSource({
      url: "https://shop.example/api/",
      token: "tok_secret_value_123",
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        // The attempt's timeout fires once the answer's head has come.
        queueMicrotask(() => controllers.at(-1)!.abort(Object.assign(new Error("t"), { name: "TimeoutError" })));
        return response;
      },
      sleep: async () => undefined,
      timeoutSignal: () => {
        const c = new AbortController();
        controllers.push(c);
        return c.signal;
      },
    }).getOrder("ord_1");
    expect(await unavailable(read)).toMatch(/failed after 3 attempts: no answer within 4000 ms$/);
    expect(calls).toHaveLength(3);
  });

  it("counts a body that breaks off as a failed attempt, then reads the next answer", async () => {
    const broken = new Response(
      new ReadableStream<Uint8Array>({
        pull(c) {
          c.error(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }));
        },
      }),
      { status: 200 },
    );
    const { fetch, calls } = scriptedFetch(broken, json(ORDER));
    expect(await source(fetch).getOrder("ord_1")).toEqual(ORDER);
    expect(calls).toHaveLength(2);
    const always = scriptedFetch(
      ...[1, 2, 3].map(
        () =>
          new Response(
            new ReadableStream<Uint8Array>({
              pull(c) {
                c.error(new Error("other side closed"));
              },
            }),
            { status: 200 },
          ),
      ),
    );
    expect(await unavailable(source(always.fetch).getOrder("ord_1"))).toMatch(
      /failed after 3 attempts: the body could not be read \(other side closed\)$/,
    );
  });

  it("reads at most 1 MB of a body: a longer one is refused, declared or streamed", async () => {
    const big = "x".repeat(1_048_577);
    const declared = () => new Response(big, { status: 200, headers: { "content-length": String(big.length) } });
    expect(
      await unavailable(source(scriptedFetch(declared(), declared(), declared()).fetch).getOrder("ord_1")),
    ).toMatch(/answered a body of 1048577 bytes, more than the 1048576 an order may take$/);
    let pulled = 0;
    const endless = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(c) {
            pulled++;
            c.enqueue(new Uint8Array(64 * 1024));
          },
        }),
        { status: 200 },
      );
    expect(await unavailable(source(scriptedFetch(endless(), endless(), endless()).fetch).getOrder("ord_1"))).toMatch(
      /answered a body of more than 1048576 bytes, the most an order may take$/,
    );
    // Read up to the cap and no further (a chunk or two of the stream's read-ahead aside).
    expect(pulled).toBeLessThan(3 * 20);
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

  it("reads an order with lines in its own currency, shipping and a null sku as the shop sent them", async () => {
    const body = { ...MULTI, lines: [MULTI.lines[0], { ...MULTI.lines[1], sku: null }], extra: "ignored" };
    const { fetch } = scriptedFetch(json(body));
    const { extra: _, ...sent } = body;
    expect(await source(fetch).getOrder("ord_1")).toEqual({
      ...sent,
      lines: [MULTI.lines[0], { line_id: "l2", category: "clothing", quantity: 2, amount: "40.00" }],
    });
  });

  it.each([
    ["a body that is not JSON", new Response("<html>gateway</html>", { status: 200 }), /body that is not JSON/],
    [
      "an amount that is not a decimal",
      json({ ...ORDER, amount: "299,99" }),
      /amount "299,99" is not a decimal number/,
    ],
    ["no category", json({ ...ORDER, category: undefined }), /cannot be used \(order ord_1: category is missing/],
    ["another order", json({ ...ORDER, order_id: "ord_2" }), /answered order_id "ord_2" for "ord_1"/],
    ["a currency that is not ISO 4217", json({ ...ORDER, currency: "EURO" }), /currency "EURO" is not an ISO 4217/],
    ["yen with decimals", json({ ...ORDER, currency: "JPY", amount: 1200.5 }), /JPY has no minor unit/],
    [
      "lines that do not add up",
      json({ ...MULTI, amount: "600.00" }),
      /the lines and shipping add up to 548\.99 USD, not the order's amount 600\.0 USD/,
    ],
    [
      "a duplicate line id",
      json({ ...MULTI, lines: [MULTI.lines[0], { ...MULTI.lines[1], line_id: "l1" }] }),
      /lines\[1\] \("l1"\): duplicate line_id/,
    ],
    [
      "a line of zero units",
      json({ ...MULTI, lines: [MULTI.lines[0], { ...MULTI.lines[1], quantity: 0 }] }),
      /quantity must be a positive whole number, got 0/,
    ],
    ["an amount of fractions of a cent", json({ ...ORDER, amount: 1.234 }), /cannot be used \(order ord_1: /],
    ["a date that is not ISO", json({ ...ORDER, purchase_date: "yesterday" }), /purchase_date "yesterday"/],
  ])("treats %s as garbled: retried, then unavailable naming the field", async (_, answer, expected) => {
    const { fetch, calls } = scriptedFetch(answer, answer.clone(), answer.clone());
    expect(await unavailable(source(fetch).getOrder("ord_1"))).toMatch(expected);
    expect(calls).toHaveLength(3);
  });

  it.each([
    ["404", new Response("", { status: 404 }), { ok: true }],
    ["the probe order", json({ ...ORDER, order_id: "claims-crew-order-api-check" }), { ok: true }],
    [
      "a refused token",
      new Response("", { status: 401 }),
      { ok: false, problem: expect.stringMatching(/answered HTTP 401: it refused the token/) },
    ],
    [
      "an HTML page",
      new Response("<html>", { status: 200 }),
      { ok: false, problem: expect.stringMatching(/body that is not JSON/) },
    ],
    ["a 503", new Response("", { status: 503 }), { ok: false, problem: expect.stringMatching(/answered HTTP 503$/) }],
  ])("checks the API with one request for the probe order: %s", async (_, answer, expected) => {
    const { fetch, calls } = scriptedFetch(answer);
    expect(await source(fetch).check()).toEqual(expected);
    expect(calls.map((c) => c.url)).toEqual(["https://shop.example/api/orders/claims-crew-order-api-check"]);
  });

  it("says a check's refused connection without the token", async () => {
    const refused = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    const answer = await source(scriptedFetch(refused).fetch).check();
    expect(answer).toEqual({
      ok: false,
      problem:
        "order API GET https://shop.example/api/orders/claims-crew-order-api-check: request failed (ECONNREFUSED)",
    });
  });

  it("refuses a URL that is not http(s) and an empty token", () => {
    expect(() => createOrderApiSource({ url: "shop.example", token: "t" })).toThrow(OrderSourceConfigError);
    expect(() => createOrderApiSource({ url: "https://shop.example", token: " " })).toThrow("ORDER_API_TOKEN is empty");
  });
});

describe("the order API adapter against a real server", () => {
  /** A server answering every request with `answer`; resolves its base URL and the paths it was asked. */
  async function serve(answer: (req: IncomingMessage, res: ServerResponse) => void) {
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? "");
      answer(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/api`,
      paths,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  it("ends an attempt whose body stalls after the head at the timeout, as a failed attempt", async () => {
    const shop = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"order_id":"ord_1",');
    });
    try {
      const read = createOrderApiSource({ url: shop.url, token: "t", timeoutMs: 150, attempts: 2, backoffMs: 1 });
      expect(await unavailable(read.getOrder("ord_1"))).toMatch(/failed after 2 attempts: no answer within 150 ms$/);
      expect(shop.paths).toEqual(["/api/orders/ord_1", "/api/orders/ord_1"]);
    } finally {
      await shop.close();
    }
  });

  it("does not follow a redirect to another host with the token", async () => {
    const elsewhere = await serve((_req, res) => res.end(JSON.stringify(ORDER)));
    const shop = await serve((_req, res) => {
      res.writeHead(302, { location: `${elsewhere.url}/orders/ord_1` });
      res.end();
    });
    try {
      const read = createOrderApiSource({ url: shop.url, token: "t" });
      expect(await unavailable(read.getOrder("ord_1"))).toMatch(/after 1 attempt: answered a redirect/);
      expect(elsewhere.paths).toEqual([]);
    } finally {
      await shop.close();
      await elsewhere.close();
    }
  });
});
