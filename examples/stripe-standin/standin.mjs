// Stripe's refunds API on loopback, as Claims Crew's Stripe adapter speaks to it (docs/payments.md): form-encoded
// POST /v1/refunds with a bearer key, JSON refunds and Stripe's error envelope, and Idempotency-Key replay (the same
// key answers the stored response, `Idempotent-Replayed: true`, and creates nothing). Dependency-free. The tests
// use it through adapters/payments/stripe-wire.test-kit.ts; server.mjs runs it for a person (README.md).
import { createServer } from "node:http";
import { URLSearchParams } from "node:url";

/**
 * What a payment_ref does when the stand-in runs with `byName` (server.mjs): a ref containing `declined` is a card
 * error, `insufficient` the platform balance too low, `pending` a refund that stays pending, `flaky` two 500s
 * first; any other settles at once.
 */
export function behaviourByName(ref) {
  if (ref.includes("declined")) return { kind: "card_declined" };
  if (ref.includes("insufficient")) return { kind: "balance_insufficient" };
  if (ref.includes("pending")) return { kind: "pending" };
  if (ref.includes("flaky")) return { kind: "server_error", times: 2 };
  return { kind: "succeeded" };
}

/**
 * Starts the stand-in (loopback, a random port unless `options.port`); `behaviours` by payment_ref: `succeeded`
 * (default), `pending`, `card_declined`, `balance_insufficient`, `server_error` `times` times (Stripe stores no 5xx
 * under the key, so a retry runs again). Resolves to `{ base, refunds, credits, requests, close() }`.
 */
export async function startStripeStandin(apiKey, behaviours = {}, options = {}) {
  const refunds = [];
  const credits = [];
  const requests = [];
  const stored = new Map();
  const failuresLeft = new Map();
  const behaviourOf = (ref) => behaviours[ref] ?? (options.byName ? behaviourByName(ref) : { kind: "succeeded" });
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c.toString("utf8")));
    req.on("end", () => {
      const form = Object.fromEntries(new URLSearchParams(raw));
      const idempotencyKey = req.headers["idempotency-key"];
      requests.push({ path: req.url ?? "", auth: req.headers.authorization, idempotencyKey, form });
      const send = (status, body, replayed = false) => {
        const text = JSON.stringify(body);
        res.writeHead(status, {
          "content-type": "application/json",
          "request-id": `req_${requests.length}`,
          ...(replayed ? { "idempotent-replayed": "true" } : {}),
        });
        res.end(text);
        return text;
      };
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return send(401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
      // GET /v1/refunds/{id}: a refund as created (examples/stripe-standin/sign-webhook.mjs reads its metadata).
      const got = req.method === "GET" ? /^\/v1\/refunds\/([\w-]+)$/.exec(req.url ?? "") : null;
      if (got) {
        const refund = refunds.find((r) => r.id === got[1]);
        return refund
          ? send(200, refund)
          : send(404, {
              error: {
                type: "invalid_request_error",
                code: "resource_missing",
                message: `No such refund: '${got[1]}'`,
              },
            });
      }
      // GET /v1/payment_intents/{id}, /v1/charges/{id}: the payment's customer (`cus_mock_<id>`; a ref containing
      // `guest` was paid without one), which store credit is issued to.
      const payment = req.method === "GET" ? /^\/v1\/(payment_intents|charges)\/([\w-]+)$/.exec(req.url ?? "") : null;
      if (payment)
        return send(200, {
          id: payment[2],
          object: payment[1] === "charges" ? "charge" : "payment_intent",
          customer: payment[2].includes("guest") ? null : `cus_mock_${payment[2]}`,
        });
      // POST /v1/customers/{id}/balance_transactions: store credit (a negative amount), replayed by Idempotency-Key.
      const balance =
        req.method === "POST" ? /^\/v1\/customers\/([\w-]+)\/balance_transactions$/.exec(req.url ?? "") : null;
      if (balance) {
        if (idempotencyKey && stored.has(idempotencyKey)) {
          const s = stored.get(idempotencyKey);
          return send(s.status, JSON.parse(s.body), true);
        }
        const credit = {
          id: `cbtxn_mock_${credits.length + 1}`,
          object: "customer_balance_transaction",
          amount: Number(form.amount),
          currency: form.currency,
          customer: balance[1],
          description: form.description ?? null,
          metadata: Object.fromEntries(
            Object.entries(form)
              .filter(([k]) => k.startsWith("metadata["))
              .map(([k, v]) => [k.slice(9, -1), v]),
          ),
          type: "adjustment",
          created: 1_800_000_000,
        };
        credits.push(credit);
        const text = send(200, credit);
        if (idempotencyKey) stored.set(idempotencyKey, { status: 200, body: text });
        return;
      }
      if (req.method !== "POST" || req.url !== "/v1/refunds")
        return send(404, {
          error: { type: "invalid_request_error", message: `Unrecognized request URL (${req.method} ${req.url})` },
        });
      if (!(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded"))
        return send(400, { error: { type: "invalid_request_error", message: "expected a form-encoded body" } });
      if (idempotencyKey && stored.has(idempotencyKey)) {
        const s = stored.get(idempotencyKey);
        return send(s.status, JSON.parse(s.body), true);
      }
      const ref = form.payment_intent ?? form.charge ?? "";
      const behaviour = behaviourOf(ref);
      // Stripe does not store a 5xx under the key: a retry with it runs again.
      if (behaviour.kind === "server_error") {
        const left = failuresLeft.get(ref) ?? behaviour.times;
        if (left > 0) {
          failuresLeft.set(ref, left - 1);
          return send(500, { error: { type: "api_error", message: "An unknown error occurred" } });
        }
      }
      const remember = (status, body) => {
        const text = send(status, body);
        if (idempotencyKey) stored.set(idempotencyKey, { status, body: text });
      };
      if (behaviour.kind === "card_declined")
        return remember(402, {
          error: {
            type: "card_error",
            code: "card_declined",
            decline_code: "expired_card",
            message: "The card has expired.",
          },
        });
      if (behaviour.kind === "balance_insufficient")
        return remember(400, {
          error: {
            type: "invalid_request_error",
            code: "balance_insufficient",
            message: "You have insufficient funds in your Stripe account.",
          },
        });
      const refund = {
        id: `re_mock_${refunds.length + 1}`,
        object: "refund",
        amount: Number(form.amount),
        currency: "eur",
        ...(form.payment_intent ? { payment_intent: form.payment_intent } : { charge: form.charge }),
        metadata: Object.fromEntries(
          Object.entries(form)
            .filter(([k]) => k.startsWith("metadata["))
            .map(([k, v]) => [k.slice(9, -1), v]),
        ),
        status: behaviour.kind === "pending" ? "pending" : "succeeded",
        created: 1_800_000_000,
      };
      refunds.push(refund);
      remember(200, refund);
    });
  });
  await new Promise((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    base: `http://127.0.0.1:${port}`,
    refunds,
    credits,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
