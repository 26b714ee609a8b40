// The SQS work queues on fauxqs through the real SDK: batch limits, FIFO group and deduplication ids,
// timer delays, message validation, and per-entry failures (injected with an SDK middleware).
import { GetQueueAttributesCommand, ReceiveMessageCommand, DeleteMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type {
  BatchResultErrorEntry,
  SendMessageBatchCommandInput,
  SendMessageBatchCommandOutput,
} from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import type { AgentStepMessage, CrewQueueMessage, ProposalMessage } from "../../pipeline/messages.ts";
import { localClientConfig } from "../../local/emulators.ts";
import { createLocalQueues } from "../../local/resources.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";
import { createSqsWorkQueues, planBatches, sqsSafeId, timerDelaySeconds } from "./sqs-work-queues.ts";
import type { SqsQueueUrls } from "./sqs-work-queues.ts";

const aws = useEmulatedAws();
let prefixes = 0;
const NOW = Date.parse("2025-03-01T10:00:00.000Z");

async function setup(client: SQSClient = aws.sqs) {
  const queues = await createLocalQueues(
    aws.sqs,
    [
      { name: "crew-events", fifo: true },
      { name: "agent-steps" },
      { name: "proposals" },
      { name: "extraction" },
      { name: "timers" },
    ].map((d) => ({ ...d, dlq: false })),
    { prefix: `wq${++prefixes}-` },
  );
  const urls: SqsQueueUrls = {
    crewEvents: queues["crew-events"]!.url,
    agentSteps: queues["agent-steps"]!.url,
    proposals: queues.proposals!.url,
    extraction: queues.extraction!.url,
    timers: queues.timers!.url,
  };
  const counter = createRequestCounter();
  countRequests(client, counter);
  const work = createSqsWorkQueues({ client, urls, clock: { now: () => NOW }, sleep: async () => undefined });
  return { urls, counter, work };
}

type Received = { body: unknown; attributes: Record<string, string> };

/** Receives (and deletes) everything visible on a queue. */
async function drain(url: string): Promise<Received[]> {
  const out: Received[] = [];
  for (let empty = 0; empty < 2; ) {
    const res = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ["All"],
      }),
    );
    const messages = res.Messages ?? [];
    if (messages.length === 0) empty++;
    for (const m of messages) {
      out.push({ body: JSON.parse(m.Body!), attributes: (m.Attributes ?? {}) as Record<string, string> });
      await aws.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
    }
  }
  return out;
}

function agentStep(i: number, inputText = "check the claim"): AgentStepMessage {
  return {
    claim_id: `clm_${i}`,
    dfid: `dfid_clm_${i}`,
    request: {
      type: "agent.step.requested",
      crewId: `clm_${i}`,
      correlationId: `clm_${i}:p0:s0:a1`,
      phaseIndex: 0,
      role: "analyst",
      agentId: "analyst-1",
      attempt: 1,
      roleSnapshot: {
        role: "analyst",
        capabilities: { thinking_allowed: false },
        permissions: { talk_to: [], delegate_to: [], escalate_to: [], invite: [] },
      },
      input: { text: inputText },
      deadlineMs: NOW + 120_000,
    },
  };
}

/** Makes the first SendMessageBatch calls fail chosen entries (they are not sent), like SQS's per-entry failures. */
function injectBatchFailures(
  client: SQSClient,
  plan: (call: number, ids: string[]) => { ids: string[]; senderFault?: boolean },
): () => number {
  let call = 0;
  client.middlewareStack.add(
    ((
      next: (args: { input: unknown }) => Promise<{ output: SendMessageBatchCommandOutput }>,
      context: { commandName?: string },
    ) =>
      async (args: { input: unknown }) => {
        if (context.commandName !== "SendMessageBatchCommand") return next(args);
        const input = args.input as SendMessageBatchCommandInput;
        const entries = input.Entries ?? [];
        const { ids, senderFault = false } = plan(
          ++call,
          entries.map((e) => e.Id!),
        );
        const failed: BatchResultErrorEntry[] = ids.map((Id) => ({
          Id,
          SenderFault: senderFault,
          Code: senderFault ? "InvalidParameterValue" : "InternalError",
          Message: "injected",
        }));
        const kept = entries.filter((e) => !ids.includes(e.Id!));
        const result =
          kept.length > 0
            ? await next({ ...args, input: { ...input, Entries: kept } })
            : { output: { Successful: [], Failed: [], $metadata: {} } as SendMessageBatchCommandOutput };
        result.output.Failed = [...(result.output.Failed ?? []), ...failed];
        return result;
      }) as never,
    { step: "initialize", name: "injectBatchFailures" },
  );
  return () => call;
}

describe("timerDelaySeconds", () => {
  it.each([
    [NOW - 5000, 0],
    [NOW, 0],
    [NOW + 1, 1],
    [NOW + 120_000, 120],
    [NOW + 3_600_000, 900],
  ])("delays a timer due at %d by %d s (never more than SQS's 15 minutes)", (due, expected) => {
    expect(timerDelaySeconds(due, NOW)).toBe(expected);
  });
});

describe("planBatches", () => {
  it.each([
    { sizes: Array(25).fill(10), batches: [10, 10, 5] },
    { sizes: [100_000, 100_000, 100_000, 100_000], batches: [2, 2] },
    { sizes: [262_144, 1, 262_143, 1], batches: [1, 2, 1] },
    { sizes: [], batches: [] },
  ])("splits $sizes.length messages into batches of $batches", ({ sizes, batches }) => {
    expect(planBatches(sizes.map((n) => ({ body: "x".repeat(n) }))).map((b) => b.length)).toEqual(batches);
  });
});

describe("sqsSafeId", () => {
  it.each([
    ["clm_1", "clm_1"],
    ["step:clm_1/analyst:p0:s0:a1", "step:clm_1/analyst:p0:s0:a1"],
  ])("keeps %s", (id, out) => expect(sqsSafeId(id)).toBe(out));
  it.each([["a b"], ["ü"], ["x".repeat(129)], [""]])("hashes %j into an id SQS accepts", (id) => {
    expect(sqsSafeId(id)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe("SQS work queues", () => {
  it("sends 25 agent steps in 3 batches, each message once and intact", async () => {
    const { urls, counter, work } = await setup();
    const steps = Array.from({ length: 25 }, (_, i) => agentStep(i));
    await work.sendAgentSteps(steps);
    expect(counter.snapshot().byService.SQS).toEqual({ SendMessageBatch: 3 });
    const received = await drain(urls.agentSteps);
    expect(
      received
        .map((r) => r.body)
        .sort((a, b) => (a as AgentStepMessage).claim_id.localeCompare((b as AgentStepMessage).claim_id)),
    ).toEqual([...steps].sort((a, b) => a.claim_id.localeCompare(b.claim_id)));
  });

  it("splits batches by size: four 100 KB steps go in two batches", async () => {
    const { urls, counter, work } = await setup();
    await work.sendAgentSteps(Array.from({ length: 4 }, (_, i) => agentStep(i, "y".repeat(100_000))));
    expect(counter.snapshot().byService.SQS).toEqual({ SendMessageBatch: 2 });
    expect(await drain(urls.agentSteps)).toHaveLength(4);
  });

  it("refuses a step over 256 KiB before sending anything", async () => {
    const { urls, counter, work } = await setup();
    await expect(work.sendAgentSteps([agentStep(1), agentStep(2, "z".repeat(270_000))])).rejects.toMatchObject({
      code: "MESSAGE_TOO_LARGE",
      message: expect.stringContaining("agent-steps"),
    });
    expect(counter.snapshot().total).toBe(0);
    expect(await drain(urls.agentSteps)).toEqual([]);
  });

  it("refuses a message that does not match its schema, naming the queue", async () => {
    const { counter, work } = await setup();
    const bad = { ...agentStep(1), dfid: "" };
    await expect(work.sendAgentSteps([bad])).rejects.toMatchObject({
      code: "QUEUE_MESSAGE_INVALID",
      queue: "agent-steps",
      message: expect.stringContaining("dfid"),
    });
    await expect(
      work.sendCrewEvents("clm_1", [{ type: "crew.tick", crewId: "clm_1" } as unknown as CrewQueueMessage]),
    ).rejects.toMatchObject({ code: "QUEUE_MESSAGE_INVALID", queue: "crew-events" });
    expect(counter.snapshot().total).toBe(0);
  });

  it("sends crew events to the claim's FIFO group with stable deduplication ids", async () => {
    const { urls, work } = await setup();
    const messages: CrewQueueMessage[] = [
      { type: "claim.start", crewId: "clm_1" },
      { type: "agent.step.completed", crewId: "clm_1", correlationId: "clm_1:p0:s0:a1", output: { ok: true } },
      { type: "crew.tick", crewId: "clm_1", nowMs: NOW },
    ];
    await work.sendCrewEvents("clm_1", messages);
    await work.sendCrewEvents("clm_1", messages); // a redelivered handler sends again: SQS drops the copies
    await work.sendCrewEvents("clm_2", [{ type: "claim.start", crewId: "clm_2" }]);
    const received = await drain(urls.crewEvents);
    const group = (id: string) => received.filter((r) => r.attributes.MessageGroupId === id);
    expect(received).toHaveLength(4);
    expect(group("clm_1").map((r) => r.attributes.MessageDeduplicationId)).toEqual([
      "start:clm_1",
      "step:clm_1:p0:s0:a1",
      `tick:clm_1:${NOW}`,
    ]);
    expect(group("clm_1").map((r) => r.body)).toEqual(messages);
    expect(group("clm_2").map((r) => r.attributes.MessageDeduplicationId)).toEqual(["start:clm_2"]);
  });

  it("keeps the audit an answer carries, and tells two answers to one step apart by it", async () => {
    const { urls, work } = await setup();
    const llmCall = (ms: number) => ({
      dfid: "dfid_clm_1",
      root_dfid: "dfid_clm_1",
      event_type: "LLM_CALL" as const,
      severity: "INFO" as const,
      state: "RUNNING",
      details: { role: "analyst", usage: { prompt_tokens: 500, completion_tokens: 30 } },
      created_at: new Date(NOW + ms).toISOString(),
    });
    const answer = (ms: number): CrewQueueMessage => ({
      type: "agent.step.completed",
      crewId: "clm_1",
      correlationId: "clm_1:p0:s0:a1",
      output: { ok: true },
      audit: [llmCall(ms)],
    });
    // The same answer redelivered is dropped; a second model call for the step (another audit) is not.
    await work.sendCrewEvents("clm_1", [answer(0)]);
    await work.sendCrewEvents("clm_1", [answer(0)]);
    await work.sendCrewEvents("clm_1", [answer(5)]);
    const received = await drain(urls.crewEvents);
    expect(received.map((r) => r.body)).toEqual([answer(0), answer(5)]);
    const ids = received.map((r) => r.attributes.MessageDeduplicationId);
    expect(ids[0]).toMatch(/^step:clm_1:p0:s0:a1:[0-9a-f]{16}$/);
    expect(ids[1]).not.toBe(ids[0]);
  });

  it("delays a timer until it is due and sends a due one at once", async () => {
    const { urls, work } = await setup();
    await work.scheduleTimer("clm_1", NOW + 300_000);
    await work.scheduleTimer("clm_2", NOW - 5_000);
    const attrs = await aws.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: urls.timers, AttributeNames: ["ApproximateNumberOfMessagesDelayed"] }),
    );
    expect(attrs.Attributes?.ApproximateNumberOfMessagesDelayed).toBe("1");
    expect((await drain(urls.timers)).map((r) => r.body)).toEqual([{ claim_id: "clm_2", due_ms: NOW - 5_000 }]);
  });

  it("sends a proposal and an extraction request to their queues", async () => {
    const { urls, work } = await setup();
    const proposal: ProposalMessage = {
      claim_id: "clm_1",
      dfid: "dfid_clm_1",
      proposal: { action: "refund", params: { order_id: "ord_1" } },
    };
    await work.sendProposal(proposal);
    await work.requestExtraction("clm_9");
    expect((await drain(urls.proposals)).map((r) => r.body)).toEqual([proposal]);
    expect((await drain(urls.extraction)).map((r) => r.body)).toEqual([{ claim_id: "clm_9" }]);
  });

  it("sends again the entries a batch could not take, each message arriving once", async () => {
    const client = new SQSClient(localClientConfig(aws.emulators.sqsEndpoint));
    injectBatchFailures(client, (call, ids) => ({
      ids: call === 1 ? ids.filter((_, i) => i % 3 === 0) : call === 2 ? ids.slice(0, 1) : [],
    }));
    const { urls, counter, work } = await setup(client);
    await work.sendAgentSteps(Array.from({ length: 7 }, (_, i) => agentStep(i)));
    expect(counter.snapshot().byService.SQS).toEqual({ SendMessageBatch: 3 });
    expect((await drain(urls.agentSteps)).map((r) => (r.body as AgentStepMessage).claim_id).sort()).toEqual(
      Array.from({ length: 7 }, (_, i) => `clm_${i}`),
    );
    client.destroy();
  });

  it("gives up after the bounded attempts and names the queue", async () => {
    const client = new SQSClient(localClientConfig(aws.emulators.sqsEndpoint));
    const attempts = injectBatchFailures(client, (_call, ids) => ({ ids: ids.slice(0, 1) }));
    const { urls, work } = await setup(client);
    const send = work.sendAgentSteps([agentStep(1), agentStep(2)]);
    await expect(send).rejects.toMatchObject({
      code: "QUEUE_SEND_FAILED",
      queue: "agent-steps",
      retryable: true,
      message: expect.stringMatching(/agent-steps.*after 4 attempts.*InternalError/),
    });
    expect(attempts()).toBe(4);
    expect((await drain(urls.agentSteps)).map((r) => (r.body as AgentStepMessage).claim_id)).toEqual(["clm_2"]);
    client.destroy();
  });

  it("does not retry an entry refused as the sender's fault", async () => {
    const client = new SQSClient(localClientConfig(aws.emulators.sqsEndpoint));
    const attempts = injectBatchFailures(client, (_call, ids) => ({ ids: ids.slice(1, 2), senderFault: true }));
    const { work } = await setup(client);
    await expect(work.sendAgentSteps([agentStep(1), agentStep(2)])).rejects.toMatchObject({
      code: "QUEUE_SEND_FAILED",
      retryable: false,
      message: expect.stringContaining("sender fault"),
    });
    expect(attempts()).toBe(1);
    client.destroy();
  });

  it("reports a queue that does not exist with the queue's role in the error", async () => {
    const { urls } = await setup();
    const work = createSqsWorkQueues({
      client: aws.sqs,
      urls: { ...urls, proposals: `${urls.proposals}-missing` },
      clock: { now: () => NOW },
    });
    await expect(work.requestExtraction("clm_1")).resolves.toBeUndefined();
    await expect(work.sendProposal({ claim_id: "c", dfid: "d", proposal: {} })).rejects.toMatchObject({
      code: "QUEUE_SEND_FAILED",
      queue: "proposals",
    });
  });
});
