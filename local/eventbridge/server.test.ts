import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DescribeEventBusCommand, EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import type { PutEventsRequestEntry } from "@aws-sdk/client-eventbridge";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BUS_NAME } from "../../app/manifest.ts";
import { KERNEL_SOURCE } from "../../core/kernel/events.ts";
import { DETAIL_TYPES } from "../../core/kernel/events.ts";
import { localClientConfig } from "../emulators.ts";
import { BusConfigError, InvalidEventPatternError } from "./errors.ts";
import { startLocalBus } from "./server.ts";
import type { BusEvent, LocalBus } from "./server.ts";

process.env.AWS_EC2_METADATA_DISABLED = "true";

const verdictDetail = (verdict: string, n = 1) => ({
  verdict_id: `vrd_${n}`,
  claim_id: `clm_${n}`,
  dfid: `dfid_${n}`,
  verdict,
  reason_code: "OK",
  reason: "r",
  order_id: "ord_001",
  amount_eur: 10,
  policy_kind: "defect",
  idempotency_key: `k${n}`,
  decided_at: "2026-01-01T00:00:00Z",
});

const entry = (
  detailType: string,
  detail: unknown,
  extra: Partial<PutEventsRequestEntry> = {},
): PutEventsRequestEntry => ({
  EventBusName: BUS_NAME,
  Source: KERNEL_SOURCE,
  DetailType: detailType,
  Detail: JSON.stringify(detail),
  ...extra,
});

describe("local PutEvents endpoint", () => {
  let dataDir: string;
  let bus: LocalBus;
  let client: EventBridgeClient;
  let ids = 0;
  const received: Record<string, BusEvent[]> = { verdicts: [], escalations: [], refunds: [] };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "claims-bus-"));
    bus = await startLocalBus({
      dataDir,
      newId: () => `evt-${++ids}`,
      now: () => new Date("2026-03-04T05:06:07.890Z"),
      retryDelayMs: () => 0,
    });
    bus.addTarget("verdicts", (e) => {
      received.verdicts?.push(e);
    });
    bus.addTarget("escalations", (e) => {
      received.escalations?.push(e);
    });
    bus.addTarget("refunds", (e) => {
      received.refunds?.push(e);
    });
    client = new EventBridgeClient({ ...localClientConfig(bus.endpoint), maxAttempts: 1 });
  });

  afterEach(() => {
    bus.setFailureHook(undefined);
    for (const list of Object.values(received)) list.length = 0;
  });

  afterAll(async () => {
    client.destroy();
    await bus.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("delivers a matching event to its rule target once, with the full envelope", async () => {
    const out = await client.send(
      new PutEventsCommand({
        Entries: [entry(DETAIL_TYPES.verdict, verdictDetail("ACCEPT"), { Resources: ["arn:claims:clm_1"] })],
      }),
    );
    await bus.settled();
    expect(out.FailedEntryCount).toBe(0);
    const id = out.Entries?.[0]?.EventId;
    expect(id).toMatch(/^evt-\d+$/);
    expect(received.verdicts).toEqual([
      {
        version: "0",
        id,
        "detail-type": "ClaimVerdict",
        source: "claims.kernel",
        account: "000000000000",
        time: "2026-03-04T05:06:07Z",
        region: "us-east-1",
        resources: ["arn:claims:clm_1"],
        detail: verdictDetail("ACCEPT"),
      },
    ]);
    expect(received.escalations).toEqual([]);
    expect(received.refunds).toEqual([]);
  });

  it("routes an ESCALATE verdict to both verdicts and escalations, and skips events no rule matches", async () => {
    const out = await client.send(
      new PutEventsCommand({
        Entries: [
          entry(DETAIL_TYPES.verdict, verdictDetail("ESCALATE", 2)),
          entry("SomethingElse", { x: 1 }),
          entry(DETAIL_TYPES.review, { claim_id: "clm_3", dfid: "d", reason_code: "R", reason: "r" }),
        ],
      }),
    );
    await bus.settled();
    expect(out.FailedEntryCount).toBe(0);
    expect(received.verdicts?.map((e) => e.detail.verdict_id)).toEqual(["vrd_2"]);
    expect(received.escalations?.map((e) => e["detail-type"]).sort()).toEqual(["ClaimNeedsReview", "ClaimVerdict"]);
    expect(received.refunds).toEqual([]);
  });

  it("uses the entry Time when one is given", async () => {
    await client.send(
      new PutEventsCommand({
        Entries: [entry(DETAIL_TYPES.refund, { execution_id: "e" }, { Time: new Date("2025-12-31T23:59:58Z") })],
      }),
    );
    await bus.settled();
    expect(received.refunds?.map((e) => e.time)).toEqual(["2025-12-31T23:59:58Z"]);
  });

  it("fails bad entries one by one, keeps the order, and accepts the rest", async () => {
    bus.setFailureHook((_e, index) =>
      index === 5 ? { errorCode: "InternalFailure", errorMessage: "injected" } : undefined,
    );
    const out = await client.send(
      new PutEventsCommand({
        Entries: [
          entry(DETAIL_TYPES.verdict, verdictDetail("ACCEPT", 10)),
          { EventBusName: BUS_NAME, DetailType: "ClaimVerdict", Detail: "{}" },
          { EventBusName: BUS_NAME, Source: KERNEL_SOURCE, DetailType: "ClaimVerdict" },
          { EventBusName: BUS_NAME, Source: KERNEL_SOURCE, DetailType: "ClaimVerdict", Detail: "{not json" },
          { EventBusName: BUS_NAME, Source: KERNEL_SOURCE, DetailType: "ClaimVerdict", Detail: "[1,2]" },
          entry(DETAIL_TYPES.verdict, verdictDetail("ACCEPT", 11)),
          entry(DETAIL_TYPES.verdict, verdictDetail("ACCEPT", 12), { EventBusName: "nope" }),
          { EventBusName: BUS_NAME, Source: KERNEL_SOURCE, Detail: "{}" },
        ],
      }),
    );
    await bus.settled();
    expect(out.FailedEntryCount).toBe(7);
    expect(out.Entries?.map((e) => e.ErrorCode ?? "ok")).toEqual([
      "ok",
      "InvalidArgument",
      "InvalidArgument",
      "MalformedDetail",
      "MalformedDetail",
      "InternalFailure",
      "NotFoundException",
      "InvalidArgument",
    ]);
    expect(out.Entries?.[1]?.ErrorMessage).toContain("Source");
    expect(out.Entries?.[2]?.ErrorMessage).toContain("Detail");
    expect(out.Entries?.[7]?.ErrorMessage).toContain("DetailType");
    expect(out.Entries?.[5]?.ErrorMessage).toBe("injected");
    expect(out.Entries?.[5]?.EventId).toBeUndefined();
    expect(received.verdicts?.map((e) => e.detail.verdict_id)).toEqual(["vrd_10"]);
  });

  it("rejects more than 10 entries with a ValidationException", async () => {
    const entries = Array.from({ length: 11 }, (_, i) => entry(DETAIL_TYPES.verdict, verdictDetail("ACCEPT", 100 + i)));
    await expect(client.send(new PutEventsCommand({ Entries: entries }))).rejects.toMatchObject({
      name: "ValidationException",
    });
    await bus.settled();
    expect(received.verdicts).toEqual([]);
  });

  it("rejects entries over 256 KB in total with a ValidationException", async () => {
    const big = { blob: "x".repeat(256 * 1024) };
    await expect(
      client.send(new PutEventsCommand({ Entries: [entry(DETAIL_TYPES.verdict, big)] })),
    ).rejects.toMatchObject({
      name: "ValidationException",
      message: expect.stringContaining("over the limit"),
    });
  });

  /** What the bus answers a signed request whose target or body is rewritten before signing. */
  async function signedRaw(
    target: string,
    body: string,
  ): Promise<{ name?: string; message?: string; status?: number }> {
    const raw = new EventBridgeClient({ ...localClientConfig(bus.endpoint), maxAttempts: 1 });
    raw.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers: Record<string, string>; body: string };
        request.headers["x-amz-target"] = target;
        request.headers["content-length"] = String(Buffer.byteLength(body));
        request.body = body;
        return next(args);
      },
      { step: "build" },
    );
    try {
      await raw.send(new PutEventsCommand({ Entries: [entry("X", {})] }));
      return {};
    } catch (error) {
      const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
      return { name: e.name, message: e.message, status: e.$metadata?.httpStatusCode };
    } finally {
      raw.destroy();
    }
  }

  it("answers DescribeEventBus as AWS does: the bus's name and ARN, ResourceNotFoundException for a bus that does not exist", async () => {
    expect(await client.send(new DescribeEventBusCommand({ Name: BUS_NAME }))).toMatchObject({
      Name: BUS_NAME,
      Arn: `arn:aws:events:us-east-1:000000000000:event-bus/${BUS_NAME}`,
    });
    await expect(client.send(new DescribeEventBusCommand({ Name: "no-such-bus" }))).rejects.toMatchObject({
      name: "ResourceNotFoundException",
      message: "Event bus no-such-bus does not exist.",
    });
  });

  it("answers an unknown operation with a JSON UnknownOperationException", async () => {
    expect(await signedRaw("AWSEvents.ListRules", "{}")).toMatchObject({
      status: 400,
      name: "UnknownOperationException",
      message: expect.stringContaining("ListRules"),
    });
  });

  it("answers a body that is not JSON with a SerializationException", async () => {
    expect(await signedRaw("AWSEvents.PutEvents", "{nope")).toMatchObject({
      status: 400,
      name: "SerializationException",
    });
  });

  it("refuses a request that is not signed with its keys, before reading the operation", async () => {
    const res = await fetch(bus.endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-amz-json-1.1", "x-amz-target": "AWSEvents.PutEvents" },
      body: JSON.stringify({ Entries: [entry(DETAIL_TYPES.refund, { execution_id: "exe_forged" })] }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ __type: "MissingAuthenticationTokenException" });
    expect(await readLines(join(dataDir, "events.jsonl"))).not.toContainEqual(expect.stringContaining("exe_forged"));
  });

  it("appends one JSON line per accepted entry to events.jsonl", async () => {
    const before = await readLines(join(dataDir, "events.jsonl"));
    const out = await client.send(
      new PutEventsCommand({
        Entries: [
          entry(DETAIL_TYPES.verdict, verdictDetail("REJECT", 20)),
          { EventBusName: BUS_NAME, Source: KERNEL_SOURCE, DetailType: "ClaimVerdict" },
          entry(DETAIL_TYPES.refund, { execution_id: "exe_21", claim_id: "clm_21" }),
        ],
      }),
    );
    const after = await readLines(join(dataDir, "events.jsonl"));
    const added = after.slice(before.length).map((line) => JSON.parse(line) as BusEvent);
    expect(added.map((e) => e.id)).toEqual([out.Entries?.[0]?.EventId, out.Entries?.[2]?.EventId]);
    expect(added[0]).toMatchObject({
      version: "0",
      source: "claims.kernel",
      "detail-type": "ClaimVerdict",
      account: "000000000000",
      region: "us-east-1",
      resources: [],
      detail: { verdict_id: "vrd_20" },
    });
    expect(added[1]).toMatchObject({ "detail-type": "RefundExecuted", detail: { execution_id: "exe_21" } });
  });
});

describe("local bus target delivery", () => {
  let bus: LocalBus | undefined;
  let client: EventBridgeClient | undefined;

  afterEach(async () => {
    client?.destroy();
    await bus?.stop();
  });

  const put = (c: EventBridgeClient) =>
    c.send(new PutEventsCommand({ Entries: [entry(DETAIL_TYPES.refund, { execution_id: "exe_1" })] }));

  it("retries a failing target and records a dead letter without failing PutEvents", async () => {
    bus = await startLocalBus({ maxAttempts: 3, retryDelayMs: () => 0 });
    client = new EventBridgeClient({ ...localClientConfig(bus.endpoint), maxAttempts: 1 });
    let calls = 0;
    bus.addTarget(
      "refunds",
      () => {
        calls++;
        throw new Error("executor down");
      },
      { id: "executor" },
    );
    const out = await put(client);
    await bus.settled();
    expect(out.FailedEntryCount).toBe(0);
    expect(calls).toBe(3);
    expect(bus.deadLetters()).toEqual([
      expect.objectContaining({
        ruleName: "refunds",
        targetId: "executor",
        attempts: 3,
        error: "Error: executor down",
        event: expect.objectContaining({ id: out.Entries?.[0]?.EventId }),
      }),
    ]);
    expect(bus.stats()).toMatchObject({ accepted: 1, deliveries: 0, failedAttempts: 3, deadLettered: 1 });
  });

  it("delivers on a retry after a transient target failure", async () => {
    bus = await startLocalBus({ maxAttempts: 3, retryDelayMs: () => 0 });
    client = new EventBridgeClient({ ...localClientConfig(bus.endpoint), maxAttempts: 1 });
    const seen: string[] = [];
    let calls = 0;
    bus.addTarget("refunds", (e) => {
      calls++;
      if (calls === 1) throw new Error("blip");
      seen.push(e.id);
    });
    const out = await put(client);
    await bus.settled();
    expect(seen).toEqual([out.Entries?.[0]?.EventId]);
    expect(bus.deadLetters()).toEqual([]);
  });

  it("gives each target its own copy of the event", async () => {
    bus = await startLocalBus({ retryDelayMs: () => 0 });
    client = new EventBridgeClient({ ...localClientConfig(bus.endpoint), maxAttempts: 1 });
    const seen: unknown[] = [];
    bus.addTarget(
      "refunds",
      (e) => {
        e.detail.execution_id = "mutated";
      },
      { id: "a" },
    );
    bus.addTarget(
      "refunds",
      (e) => {
        seen.push(e.detail.execution_id);
      },
      { id: "b" },
    );
    await put(client);
    await bus.settled();
    expect(seen).toEqual(["exe_1"]);
  });

  it("answers a clear InternalException and delivers nothing when it cannot write its journal", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "claims-bus-"));
    await mkdir(join(dataDir, "events.jsonl")); // a directory where the journal goes: no line can be written
    bus = await startLocalBus({ dataDir, retryDelayMs: () => 0 });
    client = new EventBridgeClient({ ...localClientConfig(bus.endpoint), maxAttempts: 1 });
    const seen: unknown[] = [];
    bus.addTarget("refunds", (e) => {
      seen.push(e.detail.execution_id);
    });
    await expect(put(client)).rejects.toMatchObject({
      name: "InternalException",
      message: expect.stringContaining("the local bus could not write its journal"),
    });
    await bus.settled();
    expect(seen).toEqual([]);
    expect(bus.stats().accepted).toBe(0);
    await rm(dataDir, { recursive: true, force: true });
  });

  it("writes no journal without a data directory", async () => {
    bus = await startLocalBus();
    expect(bus.journalPath).toBeUndefined();
  });

  it("refuses a rule with an unsupported operator and a target on an unknown rule", async () => {
    bus = await startLocalBus();
    expect(() => bus?.putRule("by-ip", { detail: { ip: [{ cidr: "10.0.0.0/8" }] } })).toThrow(InvalidEventPatternError);
    expect(() => bus?.addTarget("nope", () => undefined)).toThrow(BusConfigError);
  });
});

async function readLines(path: string): Promise<string[]> {
  try {
    return (await readFile(path, "utf8")).split("\n").filter((l) => l !== "");
  } catch {
    return [];
  }
}
