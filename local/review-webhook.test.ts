// Locally, being told a review waits: with a webhook URL the stack POSTs every ReviewOpened there, the event as
// events.jsonl holds it; a URL that is not http(s) is refused; a failed POST is a failed delivery (the bus retries).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decideOnStack, startTestStack } from "./testing/stack-fixture.ts";
import { reviewWebhookTarget, reviewWebhookUrlFrom } from "./review-webhook.ts";

const received: { path: string; body: Record<string, unknown> }[] = [];
let status = 200;
const hook = createServer((req, res) => {
  let text = "";
  req.on("data", (d: Buffer) => (text += d.toString("utf8")));
  req.on("end", () => {
    received.push({ path: req.url ?? "", body: JSON.parse(text) as Record<string, unknown> });
    res.writeHead(status).end();
  });
});
let url: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hooks/reviews`;
});
afterAll(async () => {
  hook.closeAllConnections();
  await new Promise<void>((resolve) => hook.close(() => resolve()));
});

describe("the local review webhook", () => {
  it("reads CLAIMS_REVIEW_WEBHOOK_URL, refusing one that is not http(s)", () => {
    expect(reviewWebhookUrlFrom({})).toBeUndefined();
    expect(reviewWebhookUrlFrom({ CLAIMS_REVIEW_WEBHOOK_URL: " https://chat.example/hook " })).toBe(
      "https://chat.example/hook",
    );
    expect(() => reviewWebhookUrlFrom({ CLAIMS_REVIEW_WEBHOOK_URL: "file:///etc/passwd" })).toThrow(
      /must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(() => reviewWebhookUrlFrom({ CLAIMS_REVIEW_WEBHOOK_URL: "not a url" })).toThrow(/is not a URL/);
  });

  it("gets the ReviewOpened of an escalation from a running stack, and nothing else", async () => {
    const stack = await startTestStack({ reviewWebhookUrl: url });
    try {
      const record = await decideOnStack(stack, {
        claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" },
      });
      expect(record.verdict).toBe("ESCALATE");
      await expect.poll(() => received.length, { timeout: 20_000 }).toBe(1);
      expect(received[0]).toMatchObject({
        path: "/hooks/reviews",
        body: {
          "detail-type": "ReviewOpened",
          source: "claims.kernel",
          detail: { claim_id: record.claim_id, origin: "ESCALATE", order_id: "ord_002", due_at: expect.any(String) },
        },
      });
    } finally {
      await stack.stop();
    }
  }, 120_000);

  it("throws for an answer that is not 2xx, so the bus retries the delivery", async () => {
    status = 503;
    const event = { id: "e1", "detail-type": "ReviewOpened", detail: {} } as never;
    await expect(reviewWebhookTarget(url)(event)).rejects.toThrow(/answered HTTP 503 for e1/);
    status = 200;
    await expect(reviewWebhookTarget(url)(event)).resolves.toBeUndefined();
  });
});
