// The cost model on hand-checked examples, and its restated Lambda memory sizes against infra/.
import { beforeAll, describe, expect, it } from "vitest";
import { evaluateSstConfig } from "../infra/sst-recorder.ts";
import type { Recording } from "../infra/sst-recorder.ts";
import { QUEUES } from "../infra/facts.ts";
import {
  addProfiles,
  billedGbSeconds,
  byService,
  costLines,
  DEFAULT_COST_OPTIONS,
  estimateAwsMs,
  FUNCTION_MEMORY_MB,
  invocationsFor,
  perMillion,
  PRICES,
  QUEUE_CONSUMERS,
  report,
  stepFunctionsStates,
  topDrivers,
  transitions,
} from "./cost.ts";
import type { AwsRequestsFile, ClaimProfile, FunctionKey } from "./cost.ts";

/** A small profile whose bill is worked out by hand below. */
function sample(): ClaimProfile {
  return {
    kind: "structured",
    claims: 10,
    requests: { DynamoDB: { PutItem: 2, GetItem: 1 } },
    dynamo: { session: { reads: 1, writes: 2, rru: 1, wru: 4, gsiWru: 0, conditionalFailures: 0 } },
    sqsSends: { crewEvents: { requests: 3, chunks: 3, messages: 4 } },
    events: { requests: 1, entries: 2, chunks: 2 },
    busDeliveries: { verdicts: 1 },
    apiRequests: 1,
    invocations: { orchestrator: { invocations: 2, records: 4, handlerMs: 100, sdkMs: 80, awsEstimateMs: 100, llmCalls: 0 } },
  };
}

const close = (actual: number, expected: number) => expect(actual).toBeCloseTo(expected, 9);

describe("billedGbSeconds", () => {
  it.each([
    // invocations, total ms, MB, GB-s: each invocation rounded up to 1 ms
    [2, 101, 256, (2 * 51 * 256) / 1024 / 1000],
    [1, 0.2, 128, (1 * 1 * 128) / 1024 / 1000],
    [4, 200, 1024, (4 * 50 * 1) / 1000],
    [0, 0, 256, 0],
  ])("%d invocations of %d ms in all at %d MB bill %f GB-s", (invocations, ms, mb, expected) => {
    close(billedGbSeconds(invocations, ms, mb), expected);
  });

  it("refuses negative time and zero memory", () => {
    expect(() => billedGbSeconds(1, -1, 256)).toThrow(RangeError);
    expect(() => billedGbSeconds(1, 10, 0)).toThrow(/invalid input/);
  });
});

describe("invocationsFor", () => {
  const usage = { invocations: 2, records: 4 };
  it.each([
    ["measured" as const, 2],
    [1, 4],
    [2, 2],
    [10, 0.4],
  ])("with batch fill %s gives %d invocations per claim", (fill, expected) => {
    close(invocationsFor(usage, fill), expected);
  });

  it("refuses a fill below one record per invocation", () => {
    expect(() => invocationsFor(usage, 0.5)).toThrow(/at least 1 record/);
  });
});

describe("costLines", () => {
  it("bills the sample claim line by line ($10.26 per million, worked out by hand)", () => {
    const lines = costLines(sample());
    const perClaim = (item: string) => lines.find((l) => l.item.startsWith(item))?.perClaim;
    close(perClaim("HTTP API request")!, 1e-6);
    close(perClaim("orchestrator invocations")!, 2 * 0.2e-6);
    // 2 invocations × ceil(100 / 2) ms × 0.25 GB = 0.025 GB-s
    close(perClaim("orchestrator duration")!, 0.025 * 0.0000133334);
    close(perClaim("crewEvents (FIFO) sends")!, 3 * 0.5e-6);
    close(perClaim("crewEvents (FIFO) ReceiveMessage")!, 2 * 0.5e-6);
    close(perClaim("crewEvents (FIFO) DeleteMessageBatch")!, 2 * 0.5e-6);
    close(perClaim('bus rule "verdicts"')!, 0.4e-6);
    close(perClaim("session: 2 writes")!, 4 * 0.625e-6);
    close(perClaim("session: 1 reads")!, 0.125e-6);
    close(perClaim("PutEvents entries")!, 2e-6);
    expect(lines.some((l) => l.item.includes("gsi1"))).toBe(false); // zero-unit lines are left out
    close(perMillion(lines), 1 + 0.4 + 0.333335 + 1.5 + 1 + 1 + 0.4 + 2.5 + 0.125 + 2);
  });

  it("bills every message as its own invocation with a batch fill of 1", () => {
    const lines = costLines(sample(), { ...DEFAULT_COST_OPTIONS, batchFill: 1 });
    const units = (item: string) => lines.find((l) => l.item.startsWith(item))?.units;
    expect(units("orchestrator invocations")).toBe(4);
    expect(units("crewEvents (FIFO) ReceiveMessage")).toBe(4);
    // 4 invocations × ceil(100 / 4) ms × 0.25 GB
    close(units("orchestrator duration")!, (4 * 25 * 0.25) / 1000);
  });

  it("bills the local handler time or the AWS estimate as chosen", () => {
    const profile = sample();
    profile.invocations.orchestrator = { ...profile.invocations.orchestrator!, handlerMs: 40, awsEstimateMs: 400 };
    const gbs = (duration: "local" | "awsEstimate") => costLines(profile, { ...DEFAULT_COST_OPTIONS, duration }).find((l) => l.item.startsWith("orchestrator duration"))!.units;
    close(gbs("local"), (2 * 20 * 0.25) / 1000);
    close(gbs("awsEstimate"), (2 * 200 * 0.25) / 1000);
  });

  it("adds the GB-seconds a worker spends waiting on the LLM", () => {
    const profile = sample();
    profile.invocations.worker = { invocations: 2, records: 2, handlerMs: 10, sdkMs: 5, awsEstimateMs: 10, llmCalls: 2 };
    const wait = costLines(profile, { ...DEFAULT_COST_OPTIONS, llmWaitS: 2 }).find((l) => l.item.startsWith("worker waiting on the LLM"));
    close(wait!.units, 2 * 2 * 0.25); // 2 calls × 2 s × 256 MB
    close(wait!.perClaim * 1e6, 13.3334);
    expect(costLines(profile).some((l) => l.item.includes("waiting on the LLM"))).toBe(false);
  });

  it("prices FIFO and standard queues apart", () => {
    const profile = sample();
    profile.sqsSends = { crewEvents: { requests: 1, chunks: 1, messages: 1 }, agentSteps: { requests: 1, chunks: 1, messages: 1 } };
    const lines = costLines(profile);
    expect(lines.find((l) => l.item.startsWith("crewEvents (FIFO) sends"))!.price).toBe(PRICES.sqs.fifoRequest);
    expect(lines.find((l) => l.item.startsWith("agentSteps sends"))!.price).toBe(PRICES.sqs.standardRequest);
  });

  it("sorts lines into orchestration and work", () => {
    const lines = costLines(sample());
    close(perMillion(lines.filter((l) => l.category === "orchestration")), 0.4 + 0.333335 + 1.5 + 1 + 1 + 2.5 + 0.125);
    expect(lines.filter((l) => l.category === "work").map((l) => l.service).sort()).toEqual(["API Gateway", "EventBridge", "SQS"]);
  });

  it("adds up by service and ranks the drivers", () => {
    const lines = costLines(sample());
    const services = byService(lines);
    close(services.DynamoDB!, 2.625);
    close(services.SQS!, 3.9);
    expect(topDrivers(lines, 2).map((l) => l.item)).toEqual(["session: 2 writes", "PutEvents entries (2 events in 1 requests)"]);
  });
});

describe("addProfiles", () => {
  it("sums two profiles field by field, keeping the first's kind and claim count", () => {
    const sum = addProfiles(sample(), sample());
    expect(sum.claims).toBe(10);
    expect(sum.requests.DynamoDB).toEqual({ PutItem: 4, GetItem: 2 });
    expect(sum.dynamo.session).toEqual({ reads: 2, writes: 4, rru: 2, wru: 8, gsiWru: 0, conditionalFailures: 0 });
    expect(sum.sqsSends.crewEvents).toEqual({ requests: 6, chunks: 6, messages: 8 });
    expect(sum.invocations.orchestrator?.records).toBe(8);
    expect(sum.busDeliveries).toEqual({ verdicts: 2 });
    close(perMillion(costLines(sum)), 2 * perMillion(costLines(sample())));
  });

  it("keeps entries only one side has", () => {
    const timer: ClaimProfile = { ...sample(), requests: { SQS: { SendMessageBatch: 2 } }, dynamo: {}, sqsSends: { timers: { requests: 2, chunks: 2, messages: 2 } }, busDeliveries: {}, apiRequests: 0, invocations: { timer: { invocations: 1, records: 2, handlerMs: 5, sdkMs: 4, awsEstimateMs: 30, llmCalls: 0 } } };
    const sum = addProfiles(sample(), timer);
    expect(sum.requests).toEqual({ DynamoDB: { PutItem: 2, GetItem: 1 }, SQS: { SendMessageBatch: 2 } });
    expect(Object.keys(sum.invocations).sort()).toEqual(["orchestrator", "timer"]);
    expect(sum.apiRequests).toBe(1);
  });
});

describe("estimateAwsMs", () => {
  it("scales CPU time to the memory's vCPU share and adds a latency per call", () => {
    // 10 ms × 1769 / 256 + 2 × 6 (DynamoDB) + 1 × 12 (SQS)
    close(estimateAwsMs(10, 256, { "DynamoDB.GetItem": 2, "SQS.SendMessage": 1 }), (10 * 1769) / 256 + 24);
  });

  it("uses an operation's own latency over its service's, and no CPU scaling at a full vCPU", () => {
    close(estimateAwsMs(10, 2048, { "DynamoDB.Query": 1 }, { DynamoDB: 5, "DynamoDB.Query": 9 }), 19);
  });

  it("names a service it has no latency for", () => {
    expect(() => estimateAwsMs(1, 256, { "S3.GetObject": 1 })).toThrow(/S3.GetObject/);
  });
});

describe("stepFunctionsStates", () => {
  it("counts 6 transitions for a structured claim and 8 with extraction", () => {
    expect(transitions(stepFunctionsStates("structured"))).toBe(6);
    expect(transitions(stepFunctionsStates("free_text"))).toBe(8);
    expect(stepFunctionsStates("free_text").slice(0, 2).map((s) => s.state)).toEqual(["Extract", "Extracted?"]);
  });

  it("costs $150 per million structured claims at $0.025 per 1,000 transitions", () => {
    close(transitions(stepFunctionsStates("structured")) * PRICES.stepFunctions.standardTransition * 1e6, 150);
  });
});

describe("report", () => {
  const file = (profile: ClaimProfile): AwsRequestsFile => ({
    recordedAt: "2026-11-22T00:00:00Z",
    machine: "test",
    note: "hand-made",
    sequential: { structured: profile, free_text: { ...profile, kind: "free_text" } },
    concurrent: { structured: profile, free_text: { ...profile, kind: "free_text" } },
    storedBytesPerClaim: { audit: 10_000, claim: 1_000 },
  });

  it("says the goal is met for a claim under $25 per million and missed above", () => {
    const cheap = report(file(sample()));
    expect(cheap).toMatch(/\| under load \(measured batch fill\), AWS duration estimate \|\s+10\.26 \| met/);
    const dear = sample();
    dear.dynamo.session!.wru = 40; // +$22.5 per million
    expect(report(file(dear))).toMatch(/AWS duration estimate \|\s+32\.76 \| MISSED/);
  });

  it("prices a million stored claims per month", () => {
    // 11 kB × 1e6 = 11 GB × ($0.25 + $0.20)
    expect(report(file(sample()))).toContain("11.0 GB → $4.95 per month");
  });

  it("says when the timer path was not measured", () => {
    expect(report(file(sample()))).toContain("NOT measured");
  });
});

describe("restated infra values", () => {
  let r: Recording;
  beforeAll(async () => {
    r = await evaluateSstConfig({ stage: "dev", env: { LLM_PROVIDER: undefined, LLM_MAX_CONCURRENCY: undefined } });
  });

  const keyOf = (handler: string | undefined): FunctionKey | undefined => {
    const file = /^functions\/(.+)\.handler$/.exec(handler ?? "")?.[1];
    return file?.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()) as FunctionKey | undefined;
  };

  it("FUNCTION_MEMORY_MB equals the memory infra/ gives each function", () => {
    const defs = [
      ...r.ofType("sst.aws.Function").map((f) => f.args),
      ...r.ofType("sst.aws.Queue").flatMap((q) => q.calls.filter((c) => c.method === "subscribe").map((c) => c.args[0])),
      ...r.ofType("sst.aws.CronV2").map((c) => c.args.function),
      ...r.ofType("sst.aws.ApiGatewayV2").flatMap((a) => a.calls.filter((c) => c.method === "addAuthorizer").map((c) => (c.args[0] as { lambda: { function: unknown } }).lambda.function)),
    ] as { handler?: string; memory?: string }[];
    const deployed = Object.fromEntries(defs.map((d) => [keyOf(d.handler), Number(/^(\d+) MB$/.exec(d.memory ?? "")?.[1])]));
    expect(deployed).toEqual(FUNCTION_MEMORY_MB);
  });

  it("QUEUE_CONSUMERS names each queue's consumer and FIFO-ness as infra/ does", () => {
    for (const [role, c] of Object.entries(QUEUE_CONSUMERS)) {
      const s = QUEUES[role as keyof typeof QUEUES];
      expect(s.consumer).toBe(c.fn);
      expect(s.fifo).toBe(c.fifo);
    }
  });
});
