// Queue messages and bus events sealed at the SDK client (adapters/vault/sealed-table.ts), as a function receives
// them: whoever hands a Lambda handler a record — the event source's poller, a second consumer racing it, a
// redelivery — hands it the body as it was sent, sealed, so the handler opens it itself (openingSqsHandler). And a
// message sent twice is the same bytes twice (the synthetic IV), so nothing comparing what was sent sees a change.
// Pure: the SDK clients never reach the network (a middleware answers for SQS/EventBridge), keys are in memory.
import { randomBytes } from "node:crypto";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { describe, expect, it } from "vitest";
import { isSealed } from "../../core/privacy/sealing.ts";
import { envelopeVault } from "./envelope.ts";
import type { DataKeyStore } from "./envelope.ts";
import { openingSqsHandler, sealEventsClient, sealQueueClient } from "./sealed-table.ts";

const WORDS = "Zelda Quirinius, zelda@example.com";

/** Data keys in memory. */
function memoryKeys(): DataKeyStore {
  const keys = new Map<string, Buffer | "erased">();
  return {
    async key(subject, { create }) {
      const k = keys.get(subject);
      if (k === "erased") return { state: "erased" };
      if (k) return { state: "key", key: k };
      if (!create) return { state: "none" };
      const made = randomBytes(32);
      keys.set(subject, made);
      return { state: "key", key: made };
    },
    async destroy(subject) {
      const had = keys.get(subject);
      keys.set(subject, "erased");
      return had === "erased" ? "already_erased" : had ? "destroyed" : "unknown";
    },
  };
}

/** What a client would have sent: each command's input after the sealing, the request itself never made. */
type Sent = Record<string, unknown>[];
const answer = (sent: Sent) => (args: { input: object }) => {
  sent.push(args.input as Record<string, unknown>);
  return Promise.resolve({ output: { $metadata: {}, MessageId: "m1", Entries: [] } as never, response: {} });
};
const LAST = { step: "initialize", name: "capture", priority: "low" } as const;

function capturingSqs(client: SQSClient): { client: SQSClient; sent: Sent } {
  const sent: Sent = [];
  client.middlewareStack.add(() => answer(sent), LAST);
  return { client, sent };
}

function capturingEvents(client: EventBridgeClient): { client: EventBridgeClient; sent: Sent } {
  const sent: Sent = [];
  client.middlewareStack.add(() => answer(sent), LAST);
  return { client, sent };
}

/** A proposal message as the worker sends it: the agent's reason beside the decision path. */
const proposalBody = JSON.stringify({
  claim_id: "clm_7",
  dfid: "dfid_clm_7",
  proposal: { params: { order_id: "ord_1", amount_eur: 80, reason: `Refund: ${WORDS} says the kettle leaks` } },
});

type Records = { Records: { messageId: string; body: string }[] };

describe("sealed queue messages, as a function receives them", () => {
  it("reach a queue handler opened when the record is handed on as sent (a racing consumer, the event source)", async () => {
    const vault = envelopeVault(memoryKeys());
    const { client, sent } = capturingSqs(sealQueueClient(new SQSClient({ region: "us-east-1", md5: false }), vault));
    await client.send(new SendMessageCommand({ QueueUrl: "q", MessageBody: proposalBody }));
    const body = String(sent[0]!.MessageBody);
    expect(body).not.toContain("Quirinius");
    expect(isSealed((JSON.parse(body) as { proposal: { params: { reason: string } } }).proposal.params.reason)).toBe(
      true,
    );
    const seen: string[] = [];
    const handler = openingSqsHandler(async (event: Records) => {
      seen.push(...event.Records.map((r) => r.body));
      return { batchItemFailures: [] };
    }, vault);
    await handler({ Records: [{ messageId: "a", body }] }, {});
    expect(seen).toEqual([proposalBody]);
  });

  it("hands a record with nothing sealed on as it is, and a handler without a vault is the handler itself", async () => {
    const vault = envelopeVault(memoryKeys());
    const plain = { messageId: "b", body: JSON.stringify({ claim_id: "clm_8", due_at: "2026-01-01" }) };
    const seen: unknown[] = [];
    const inner = async (event: { Records: (typeof plain)[] }) => void seen.push(...event.Records);
    await openingSqsHandler(inner, vault)({ Records: [plain] }, {});
    expect(seen[0]).toBe(plain);
    expect(openingSqsHandler(inner, undefined)).toBe(inner);
  });

  it("sends the same message twice as the same bytes, another claim's as others (synthetic IV)", async () => {
    const vault = envelopeVault(memoryKeys());
    const { client, sent } = capturingSqs(sealQueueClient(new SQSClient({ region: "us-east-1", md5: false }), vault));
    await client.send(new SendMessageCommand({ QueueUrl: "q", MessageBody: proposalBody }));
    await client.send(new SendMessageCommand({ QueueUrl: "q", MessageBody: proposalBody }));
    await client.send(
      new SendMessageCommand({ QueueUrl: "q", MessageBody: proposalBody.replaceAll("clm_7", "clm_9") }),
    );
    expect(sent[0]!.MessageBody).toBe(sent[1]!.MessageBody);
    expect(sent[2]!.MessageBody).not.toBe(String(sent[0]!.MessageBody).replaceAll("clm_7", "clm_9"));
  });

  it("publishes one bus event twice with the same detail (a redelivered ReviewDecided is not a changed one)", async () => {
    const vault = envelopeVault(memoryKeys());
    const { client, sent } = capturingEvents(sealEventsClient(new EventBridgeClient({ region: "us-east-1" }), vault));
    const entry = {
      Source: "claims",
      DetailType: "ReviewDecided",
      Detail: JSON.stringify({ claim_id: "clm_7", review_id: "rev_1", decision: "DENY", note: `${WORDS} has no case` }),
    };
    await client.send(new PutEventsCommand({ Entries: [entry] }));
    await client.send(new PutEventsCommand({ Entries: [entry] }));
    const details = sent.map((s) => (s.Entries as { Detail: string }[])[0]!.Detail);
    expect(details[0]).not.toContain("Quirinius");
    expect(details[0]).toBe(details[1]);
  });
});
