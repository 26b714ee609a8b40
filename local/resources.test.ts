import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueueDefinitionError, SstResourceError } from "./errors.ts";
import { localClientConfig, startEmulators } from "./emulators.ts";
import type { Emulators } from "./emulators.ts";
import { createLocalQueues, setSstResourceEnv } from "./resources.ts";
import type { LocalQueueDef } from "./resources.ts";

let emulators: Emulators;
let sqs: SQSClient;

beforeAll(async () => {
  emulators = await startEmulators();
  sqs = new SQSClient(localClientConfig(emulators.sqsEndpoint));
});

afterAll(async () => {
  sqs.destroy();
  await emulators.stop();
});

const attributesOf = async (url: string) =>
  (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }))).Attributes ?? {};

describe("createLocalQueues", () => {
  it("creates a standard queue with a DLQ wired through its RedrivePolicy", async () => {
    const { steps } = await createLocalQueues(sqs, [{ name: "steps", visibilityTimeoutS: 5, maxReceiveCount: 4 }], {
      prefix: "t1-",
    });
    expect(steps).toMatchObject({
      name: "t1-steps",
      fifo: false,
      arn: "arn:aws:sqs:us-east-1:000000000000:t1-steps",
      dlq: { name: "t1-steps-dlq", arn: "arn:aws:sqs:us-east-1:000000000000:t1-steps-dlq" },
    });
    const attrs = await attributesOf(steps?.url ?? "");
    expect(attrs.VisibilityTimeout).toBe("5");
    expect(JSON.parse(attrs.RedrivePolicy ?? "{}")).toEqual({
      deadLetterTargetArn: steps?.dlq?.arn,
      maxReceiveCount: 4,
    });
    expect((await attributesOf(steps?.dlq?.url ?? "")).MessageRetentionPeriod).toBe(String(14 * 24 * 3600));
  });

  it("creates FIFO queues and FIFO DLQs with explicit deduplication by default", async () => {
    const { events } = await createLocalQueues(sqs, [{ name: "events", fifo: true }], { prefix: "t2-" });
    expect(events?.name).toBe("t2-events.fifo");
    expect(events?.dlq?.name).toBe("t2-events-dlq.fifo");
    const attrs = await attributesOf(events?.url ?? "");
    expect(attrs).toMatchObject({ FifoQueue: "true", ContentBasedDeduplication: "false", VisibilityTimeout: "30" });
    expect(JSON.parse(attrs.RedrivePolicy ?? "{}")).toMatchObject({ maxReceiveCount: 3 });
    await expect(
      sqs.send(new SendMessageCommand({ QueueUrl: events?.url, MessageBody: "x", MessageGroupId: "g" })),
    ).rejects.toThrow();
  });

  it("creates a queue without a DLQ when asked", async () => {
    const { timer } = await createLocalQueues(sqs, [{ name: "timer", dlq: false, delaySeconds: 2 }], { prefix: "t3-" });
    expect(timer?.dlq).toBeUndefined();
    const attrs = await attributesOf(timer?.url ?? "");
    expect(attrs.RedrivePolicy).toBeUndefined();
    expect(attrs.DelaySeconds).toBe("2");
  });

  const bad: ReadonlyArray<readonly [string, LocalQueueDef[], string]> = [
    ["a name with .fifo", [{ name: "x.fifo", fifo: true }], "x.fifo"],
    ["an empty name", [{ name: "" }], "1–75"],
    ["a duplicate name", [{ name: "d" }, { name: "d" }], "twice"],
    ["content-based dedup on a standard queue", [{ name: "s", contentBasedDeduplication: true }], "FIFO queues only"],
    ["a visibility timeout out of range", [{ name: "v", visibilityTimeoutS: 50_000 }], "visibilityTimeoutS"],
    ["maxReceiveCount without a DLQ", [{ name: "m", dlq: false, maxReceiveCount: 2 }], "dead-letter"],
  ];

  it.each(bad)("rejects %s", async (_name, defs, message) => {
    await expect(createLocalQueues(sqs, defs)).rejects.toSatisfy(
      (e: unknown) => e instanceof QueueDefinitionError && e.message.includes(message),
    );
  });
});

describe("setSstResourceEnv", () => {
  it("feeds local values to Resource from the sst package, also after its first use", async () => {
    setSstResourceEnv({ CrewEvents: { url: "http://local/crew-events.fifo" }, ClaimsTable: { name: "claims-local" } });
    expect(JSON.parse(process.env.SST_RESOURCE_CrewEvents ?? "{}")).toEqual({ url: "http://local/crew-events.fifo" });
    expect(JSON.parse(process.env.SST_RESOURCE_App ?? "{}")).toEqual({ name: "claims-crew", stage: "local" });

    const { Resource } = await import("sst");
    const resources = Resource as unknown as Record<string, Record<string, string>>;
    expect(resources.CrewEvents?.url).toBe("http://local/crew-events.fifo");
    expect(resources.ClaimsTable?.name).toBe("claims-local");
    expect(() => resources.NotLinked).toThrow(/"NotLinked" is not linked/);

    // A second stack in the same process (new ports) replaces the values sst already loaded.
    setSstResourceEnv({ CrewEvents: { url: "http://local:2/crew-events.fifo" } });
    expect(resources.CrewEvents?.url).toBe("http://local:2/crew-events.fifo");
  });

  it("writes into a given environment object without touching process.env", () => {
    const env: NodeJS.ProcessEnv = {};
    const before = { ...process.env };
    setSstResourceEnv({ Bus: { name: "claims", arn: "arn:aws:events:us-east-1:000000000000:event-bus/other" } }, env);
    expect(Object.keys(env).sort()).toEqual(["SST_RESOURCE_App", "SST_RESOURCE_Bus"]);
    expect(process.env).toEqual(before);
  });

  it("rejects a name that cannot be a variable suffix and a value that is not an object", () => {
    expect(() => setSstResourceEnv({ "bad-name": { url: "x" } }, {})).toThrow(SstResourceError);
    expect(() => setSstResourceEnv({ Good: "x" as unknown as Record<string, unknown> }, {})).toThrow(SstResourceError);
  });
});
