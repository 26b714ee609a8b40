// Any text a customer can send travels through the local stack's queues (docs/local-stack.md): claims whose text holds
// emoji and other characters outside the Basic Multilingual Plane (fauxqs refuses them raw), U+FFFE and
// U+FFFF (real SQS refuses them raw) end final, decided from the text as sent — structured and free text,
// through the HTTP handler, fauxqs, the crew and the kernel — and the sweep finds nothing stalled.
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiEvent, startTestStack } from "./testing/stack-fixture.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const TEXTS = {
  emoji: "Screen cracked 😡📱 after a day",
  "U+FFFE": "Screen cracked \uFFFE after a day",
  "U+FFFF": "Screen cracked \uFFFF after a day",
  "CJK Ext-B": "屏幕坏了 𠀋𠀍 after a day",
  "all of them": "💥 \uFFFE \uFFFF 𠀋 — kaputt, ünïcode ✓",
};

async function post(body: unknown): Promise<string> {
  const res = await stack.handlers.intakeApi(apiEvent("POST", "/claims", { body: JSON.stringify(body) }));
  expect(res.statusCode, res.body).toBe(202);
  return (JSON.parse(res.body ?? "{}") as { claim_id: string }).claim_id;
}

describe("claims with any Unicode in their text", () => {
  it.each(Object.entries(TEXTS))("a structured claim with %s in its reason ends DECIDED", async (_name, text) => {
    const id = await post({
      claim: { order_id: "ord_016", amount_eur: 20, category: "electronics", reason: text },
      label: `label ${text}`,
    });
    const record = await stack.runtime.settle(id);
    expect(record).toMatchObject({ status: "DECIDED", claim: { reason: text }, label: `label ${text}` });
  });

  it.each(Object.entries(TEXTS))(
    "a free-text claim with %s ends final, its text extracted as sent",
    async (_name, text) => {
      const claimText = `I bought order ord_006 for 12 EUR. ${text}`;
      const id = await post({ claim_text: claimText });
      const record = await stack.runtime.settle(id);
      expect(record?.status).toBe("DECIDED");
      expect(record?.input).toEqual({ claim_text: claimText });
      expect(record?.claim?.order_id).toBe("ord_006");
    },
  );

  it("leaves nothing for the sweep, and nothing in a dead-letter queue", async () => {
    await stack.drained();
    const sweep = await stack.handlers.sweep();
    expect(sweep).toMatchObject({ examined: 0, stalled: 0 });
    const open = await stack.deps.claims.listClaims({ statuses: ["RECEIVED", "RUNNING"], limit: 10 });
    expect(open.items).toEqual([]);
    for (const [role, poller] of Object.entries(stack.pollers)) expect(poller.stats.handlerErrors, role).toBe(0);
    for (const queue of Object.values(stack.queues)) {
      const dlq = await stack.clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queue.dlq!.url, AttributeNames: ["ApproximateNumberOfMessages"] }),
      );
      expect(dlq.Attributes?.ApproximateNumberOfMessages, queue.dlq!.name).toBe("0");
    }
  });
});
