// A MOCK of Stripe's refunds API for tests: no Stripe can run here (no account, no network beyond npm), so this
// local HTTP server speaks the wire format the SDK uses — form-encoded POST /v1/refunds with a bearer key,
// JSON refunds and Stripe's error envelope, and Idempotency-Key replay (the same key answers the stored
// response, `Idempotent-Replayed: true`, and creates nothing). What a payment_ref does is scripted by its name.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** How the mock treats a payment: settle, stay pending, refuse (card / balance), or fail with 5xx `times` times. */
export type MockPaymentBehaviour =
  | { kind: "succeeded" }
  | { kind: "pending" }
  | { kind: "card_declined" }
  | { kind: "balance_insufficient" }
  | { kind: "server_error"; times: number };

/** A running mock. */
export type StripeWireMock = {
  /** `http://127.0.0.1:<port>`: give it as STRIPE_API_BASE. */
  readonly base: string;
  /** Refunds created (not replays), in order. */
  readonly refunds: Array<Record<string, unknown>>;
  /** Every request as received: key, idempotency key and the decoded form. */
  readonly requests: Array<{
    path: string;
    auth: string | undefined;
    idempotencyKey: string | undefined;
    form: Record<string, string>;
  }>;
  close(): Promise<void>;
};

/** Starts the mock on a random loopback port; `behaviours` by payment_ref (default: succeeded). */
export async function startStripeWireMock(
  apiKey: string,
  behaviours: Record<string, MockPaymentBehaviour> = {},
): Promise<StripeWireMock> {
  const refunds: Array<Record<string, unknown>> = [];
  const requests: StripeWireMock["requests"] = [];
  const stored = new Map<string, { status: number; body: string }>();
  const failuresLeft = new Map<string, number>();
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      const form = Object.fromEntries(new URLSearchParams(raw));
      const idempotencyKey = req.headers["idempotency-key"] as string | undefined;
      requests.push({ path: req.url ?? "", auth: req.headers.authorization, idempotencyKey, form });
      const send = (status: number, body: unknown, replayed = false) => {
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
      if (req.method !== "POST" || req.url !== "/v1/refunds")
        return send(404, {
          error: { type: "invalid_request_error", message: `Unrecognized request URL (${req.method} ${req.url})` },
        });
      if (!(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded"))
        return send(400, { error: { type: "invalid_request_error", message: "expected a form-encoded body" } });
      if (idempotencyKey && stored.has(idempotencyKey)) {
        const s = stored.get(idempotencyKey)!;
        return send(s.status, JSON.parse(s.body), true);
      }
      const ref = form.payment_intent ?? form.charge ?? "";
      const behaviour = behaviours[ref] ?? { kind: "succeeded" };
      // Stripe does not store a 5xx under the key: a retry with it runs again.
      if (behaviour.kind === "server_error") {
        const left = failuresLeft.get(ref) ?? behaviour.times;
        if (left > 0) {
          failuresLeft.set(ref, left - 1);
          return send(500, { error: { type: "api_error", message: "An unknown error occurred" } });
        }
      }
      const remember = (status: number, body: unknown) => {
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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    refunds,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
