// The shared SQS consumer shapes: zod parsing, partial batch responses (Powertools), FIFO groups in one call,
// and what gets logged for bad and failing messages.
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { recordingLogger, sqsEvent } from "../../local/testing/stack-fixture.ts";
import { RetryLaterError } from "./errors.ts";
import { VersionConflictError } from "../../core/errors.ts";
import { parseMessage, sqsConsumer, sqsFifoGroupConsumer } from "./sqs-consumer.ts";
import type { Context } from "aws-lambda";

const Schema = z.object({ n: z.number().int() }).strict();
const context = {} as Context;

function consumer(handle: (n: number) => Promise<unknown>) {
  const log = recordingLogger();
  const seen: number[] = [];
  const h = sqsConsumer(
    {
      schema: Schema,
      handle: async (m) => {
        seen.push(m.n);
        return handle(m.n);
      },
    },
    log.logger,
  );
  return { h, seen, log };
}

const failed = (r: { batchItemFailures: { itemIdentifier: string }[] }) =>
  r.batchItemFailures.map((f) => f.itemIdentifier);

describe("parseMessage", () => {
  it.each([
    ["not JSON", "{n:1", /not JSON/],
    ["a wrong type", '{"n":"one"}', /n: /],
    ["an extra field", '{"n":1,"x":2}', /\(message\)/],
  ])("refuses %s, naming the problem", (_c, body, message) => {
    expect(() => parseMessage(body, Schema)).toThrow(message);
  });
});

describe("sqsConsumer", () => {
  it("fails only the bad records of a batch and handles the rest", async () => {
    const { h, seen, log } = consumer(async () => "OK");
    const out = await h(
      sqsEvent([{ body: '{"n":1}' }, { body: "garbage" }, { body: '{"n":"x"}' }, { body: '{"n":4}' }]),
      context,
    );
    expect(failed(out)).toEqual(["m1", "m2"]);
    expect(seen).toEqual([1, 4]);
    const errors = log.lines.filter((l) => l.level === "error");
    expect(errors).toHaveLength(2);
    expect(errors.map((e) => e.message)).toEqual([
      "invalid message: it will reach the DLQ after its retries",
      "invalid message: it will reach the DLQ after its retries",
    ]);
    expect(JSON.stringify(errors[1]?.fields)).toContain('"path":"n"');
  });

  it("reports a batch in which every record fails as item failures instead of throwing", async () => {
    const { h } = consumer(async () => {
      throw new Error("table unreachable");
    });
    const out = await h(sqsEvent([{ body: '{"n":1}' }, { body: '{"n":2}' }]), context);
    expect(failed(out)).toEqual(["m0", "m1"]);
  });

  it("logs a retry as a warning, not an error", async () => {
    const { h, log } = consumer(async () => {
      throw new RetryLaterError("model busy");
    });
    const out = await h(sqsEvent([{ body: '{"n":1}' }]), context);
    expect(failed(out)).toEqual(["m0"]);
    expect(log.lines.map((l) => l.level)).toEqual(["warn"]);
  });
});

describe("sqsFifoGroupConsumer", () => {
  function groupConsumer(handleGroup: (ns: number[]) => Promise<unknown>) {
    const log = recordingLogger();
    const calls: number[][] = [];
    const h = sqsFifoGroupConsumer(
      {
        schema: Schema,
        handleGroup: async (messages) => {
          calls.push(messages.map((m) => m.n));
          return handleGroup(messages.map((m) => m.n));
        },
      },
      log.logger,
    );
    return { h, calls, log };
  }

  it("hands each group's messages to one call, in order", async () => {
    const { h, calls } = groupConsumer(async () => ["ADVANCED"]);
    const out = await h(
      sqsEvent([
        { body: '{"n":1}', groupId: "a" },
        { body: '{"n":2}', groupId: "b" },
        { body: '{"n":3}', groupId: "a" },
      ]),
      context,
    );
    expect(failed(out)).toEqual([]);
    expect(calls).toEqual([[1, 3], [2]]);
  });

  it("fails a whole group when its call throws, and leaves other groups alone", async () => {
    const { h, log } = groupConsumer(async (ns) => {
      if (ns.includes(2)) throw new Error("version conflict");
      return "ok";
    });
    const out = await h(
      sqsEvent([
        { body: '{"n":1}', groupId: "a" },
        { body: '{"n":2}', groupId: "b" },
        { body: '{"n":3}', groupId: "b" },
        { body: '{"n":4}', groupId: "a" },
      ]),
      context,
    );
    expect(failed(out)).toEqual(["m1", "m2"]);
    expect(log.text()).toContain("message group failed");
  });

  it("handles the messages before an invalid one and fails it with everything after it in its group", async () => {
    const { h, calls } = groupConsumer(async () => "ok");
    const out = await h(
      sqsEvent([
        { body: '{"n":1}', groupId: "a" },
        { body: "garbage", groupId: "a" },
        { body: '{"n":3}', groupId: "a" },
        { body: '{"n":4}', groupId: "b" },
      ]),
      context,
    );
    expect(calls).toEqual([[1], [4]]);
    expect(failed(out)).toEqual(["m1", "m2"]);
  });
});

describe("MessageFailures: each message a consumer reports failed for a real failure is counted once", () => {
  const counting = () => {
    const records: { metrics: Record<string, number>; dimensions: readonly Record<string, string>[] }[] = [];
    const metrics = { emit: (r: (typeof records)[number]) => void records.push(r) };
    const total = () =>
      records.reduce((sum, r) => {
        expect(r.dimensions).toEqual([{ Consumer: "kernel" }]);
        return sum + (r.metrics.MessageFailures ?? 0);
      }, 0);
    return { metrics, records, total };
  };

  it("counts invalid and throwing messages, not the handled ones, not planned retries or lost races", async () => {
    const sink = counting();
    const h = sqsConsumer(
      {
        schema: Schema,
        handle: async (m) => {
          if (m.n === 2) throw new Error("table unreachable");
          if (m.n === 3) throw new RetryLaterError("waiting for the order source");
          if (m.n === 4) throw new VersionConflictError("claim", "clm_1", 2);
          return "OK";
        },
      },
      recordingLogger().logger,
      undefined,
      { metrics: sink.metrics, consumer: "kernel" },
    );
    const out = await h(
      sqsEvent([
        { body: '{"n":1}' },
        { body: '{"n":2}' },
        { body: "garbage" },
        { body: '{"n":3}' },
        { body: '{"n":4}' },
      ]),
      context,
    );
    expect(failed(out).sort()).toEqual(["m1", "m2", "m3", "m4"]);
    // The throw and the invalid body; the retry and the lost race are how the consumers work.
    expect(sink.total()).toBe(2);
  });

  it("counts a FIFO group's failed messages and its invalid one, not the records that only wait behind it", async () => {
    const sink = counting();
    const h = sqsFifoGroupConsumer(
      {
        schema: Schema,
        handleGroup: async (ns) => {
          if (ns.some((m) => m.n === 9)) throw new Error("snapshot corrupt");
          return "ok";
        },
      },
      recordingLogger().logger,
      { metrics: sink.metrics, consumer: "kernel" },
    );
    const out = await h(
      sqsEvent([
        { body: '{"n":9}', groupId: "a" },
        { body: '{"n":8}', groupId: "a" },
        { body: '{"n":1}', groupId: "b" },
        { body: "garbage", groupId: "b" },
        { body: '{"n":3}', groupId: "b" },
      ]),
      context,
    );
    expect(failed(out)).toEqual(["m0", "m1", "m3", "m4"]);
    // Group a: both its messages failed; group b: the invalid one (n=3 waits behind it, n=1 was handled).
    expect(sink.total()).toBe(3);
  });
});
