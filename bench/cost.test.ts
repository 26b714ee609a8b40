// The cost model on hand-checked examples.
import { describe, expect, it } from "vitest";
import {
  allInPerMillion,
  modelPerMillion,
  addProfiles,
  billedGbSeconds,
  byService,
  costLines,
  costSummary,
  costTable,
  DEFAULT_COST_OPTIONS,
  estimateAwsMs,
  expressPerClaim,
  GB,
  invocationsFor,
  LOG_BYTES,
  LOG_EXAMPLES,
  optionsFor,
  perMillion,
  PRICES,
  stepFunctionsStates,
  storagePerMonth,
  topDrivers,
  transitions,
} from "./cost.ts";
import type { AwsRequestsFile, ClaimProfile } from "./lib/profile.ts";

/**
 * A small profile whose bill is worked out by hand below. The orchestrator spends no CPU of its own and
 * makes SDK calls whose assumed AWS latencies add up to 100 ms per claim: 10 GetItem × 6 ms + 2 PutEvents × 20 ms.
 */
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
    invocations: {
      orchestrator: {
        invocations: 2,
        records: 4,
        handlerMs: 100,
        sdkMs: 100,
        cpuMs: 0,
        calls: { "DynamoDB.GetItem": 10, "EventBridge.PutEvents": 2 },
        llmCalls: 0,
        logLines: 4,
        logBytes: 1000,
      },
    },
  };
}

/** $ per million of `bytes` of log ingestion per claim. */
const logM = (bytes: number) => (bytes / GB) * 0.5 * 1e6;
/** What the sample's logs cost per million: handler lines (+ the trace id per line), 2 invocations' platform lines, one access-log line. */
const sampleLogsM =
  logM(1000 + 4 * LOG_BYTES.lambdaFieldsPerLine) +
  logM(2 * LOG_BYTES.platformPerInvocation) +
  logM(LOG_BYTES.accessLogPost);

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

describe("log sizes", () => {
  it("sizes AWS's own log events from their example lines, each one JSON", () => {
    for (const line of Object.values(LOG_EXAMPLES).filter((l) => l.startsWith("{")))
      expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(LOG_BYTES.platformPerInvocation).toBe(
      Buffer.byteLength(LOG_EXAMPLES.platformStart) + Buffer.byteLength(LOG_EXAMPLES.platformReport),
    );
    expect(JSON.parse(`{"a":1${LOG_EXAMPLES.lambdaFieldsPerLine}}`)).toHaveProperty("xray_trace_id");
  });
});

describe("costLines", () => {
  it("bills the sample claim line by line (worked out by hand)", () => {
    const lines = costLines(sample());
    const perClaim = (item: string) => lines.find((l) => l.item.startsWith(item))?.perClaim;
    close(perClaim("HTTP API request")!, 1e-6);
    close(perClaim("orchestrator invocations")!, 2 * 0.2e-6);
    // AWS estimate 100 ms per claim: 2 invocations × ceil(100 / 2) ms × 0.25 GB = 0.025 GB-s
    close(perClaim("orchestrator duration")!, 0.025 * 0.0000133334);
    close(perClaim("crewEvents (FIFO) sends")!, 3 * 0.5e-6);
    close(perClaim("crewEvents (FIFO) ReceiveMessage")!, 2 * 0.5e-6);
    close(perClaim("crewEvents (FIFO) DeleteMessageBatch")!, 2 * 0.5e-6);
    close(perClaim('bus rule "verdicts"')!, 0.4e-6);
    close(perClaim("session: 2 writes")!, 4 * 0.625e-6);
    close(perClaim("session: 1 reads")!, 0.125e-6);
    close(perClaim("PutEvents entries")!, 2e-6);
    close(perClaim("orchestrator handler lines")! * 1e6, logM(1000 + 4 * LOG_BYTES.lambdaFieldsPerLine));
    close(perClaim("orchestrator platform.start + platform.report")! * 1e6, logM(2 * LOG_BYTES.platformPerInvocation));
    close(perClaim("API access log")! * 1e6, logM(LOG_BYTES.accessLogPost));
    expect(lines.some((l) => l.item.includes("gsi1"))).toBe(false); // zero-unit lines are left out
    close(perMillion(lines), 1 + 0.4 + 0.333335 + 1.5 + 1 + 1 + 0.4 + 2.5 + 0.125 + 2 + sampleLogsM);
  });

  it("writes the access-log line of the route the requests took", () => {
    const get = costLines(sample(), { ...DEFAULT_COST_OPTIONS, apiRoute: "GET" });
    expect(get.find((l) => l.service === "API Gateway")!.item).toContain("GET /claims/{id}");
    expect(get.find((l) => l.item.startsWith("API access log"))!.units).toBe(LOG_BYTES.accessLogGet);
  });

  it("bills every message as its own invocation with a batch fill of 1, platform lines included", () => {
    const lines = costLines(sample(), { ...DEFAULT_COST_OPTIONS, batchFill: 1 });
    const units = (item: string) => lines.find((l) => l.item.startsWith(item))?.units;
    expect(units("orchestrator invocations")).toBe(4);
    expect(units("crewEvents (FIFO) ReceiveMessage")).toBe(4);
    // 4 invocations × ceil(100 / 4) ms × 0.25 GB
    close(units("orchestrator duration")!, (4 * 25 * 0.25) / 1000);
    expect(units("orchestrator platform.start + platform.report")).toBe(4 * LOG_BYTES.platformPerInvocation);
  });

  it("bills success lines at the deployed sample rate and no platform lines at system level WARN", () => {
    const profile = sample();
    profile.invocations.orchestrator = {
      ...profile.invocations.orchestrator!,
      logLines: 4,
      logBytes: 1000,
      successLines: 3,
      successBytes: 600,
    };
    const lines = costLines(profile, {
      ...DEFAULT_COST_OPTIONS,
      logging: { systemLogLevel: "WARN", successSampleRate: 0.01 },
    });
    const handler = lines.find((l) => l.item.startsWith("orchestrator handler lines"))!;
    // 1 line of 400 B always, 3 success lines of 600 B in all at 1 %, the trace id on each line written
    close(handler.units, 400 + 6 + (1 + 0.03) * LOG_BYTES.lambdaFieldsPerLine);
    expect(lines.some((l) => l.item.includes("platform."))).toBe(false);
    const info = costLines(profile, {
      ...DEFAULT_COST_OPTIONS,
      logging: { systemLogLevel: "INFO", successSampleRate: 1 },
    });
    close(
      info.find((l) => l.item.startsWith("orchestrator handler lines"))!.units,
      1000 + 4 * LOG_BYTES.lambdaFieldsPerLine,
    );
    expect(info.find((l) => l.item.includes("platform."))!.units).toBe(2 * LOG_BYTES.platformPerInvocation);
  });

  it("estimates the duration from the handler's own CPU time and its SDK calls", () => {
    const profile = sample();
    profile.invocations.orchestrator = {
      ...profile.invocations.orchestrator!,
      handlerMs: 40,
      sdkMs: 30,
      cpuMs: 10,
      calls: { "SQS.SendMessage": 1 },
    };
    const gbs = costLines(profile).find((l) => l.item.startsWith("orchestrator duration"))!.units;
    // 10 ms × 1769 / 256 + 12 ms = 81.1 ms → 2 invocations × 41 ms × 0.25 GB (wall time plays no part)
    close(gbs, (2 * 41 * 0.25) / 1000);
  });

  it("adds the GB-seconds a worker spends waiting on the LLM", () => {
    const profile = sample();
    profile.invocations.worker = {
      invocations: 2,
      records: 2,
      handlerMs: 10,
      sdkMs: 10,
      cpuMs: 0,
      calls: {},
      llmCalls: 2,
      logLines: 0,
      logBytes: 0,
    };
    const wait = costLines(profile, { ...DEFAULT_COST_OPTIONS, llmWaitS: 2 }).find((l) =>
      l.item.startsWith("worker waiting on the LLM"),
    );
    close(wait!.units, 2 * 2 * 0.25); // 2 calls × 2 s × 256 MB
    close(wait!.perClaim * 1e6, 13.3334);
    expect(costLines(profile).some((l) => l.item.includes("waiting on the LLM"))).toBe(false);
  });

  it("bills a windowed event source's receives and deletes as measured, and one of each per invocation otherwise", () => {
    const profile = sample();
    profile.sqsSends = { ...profile.sqsSends, timers: { requests: 1, chunks: 1, messages: 1 } };
    const timer = { ...profile.invocations.orchestrator!, invocations: 0.05, records: 1, calls: {} };
    profile.invocations.timer = { ...timer, eventSourceReceives: 0.4, eventSourceDeletes: 0.1 };
    const units = (item: string, p = profile, fill: "measured" | number = "measured") =>
      costLines(p, { ...DEFAULT_COST_OPTIONS, batchFill: fill }).find((l) => l.item.startsWith(item))?.units;
    expect(units("timers ReceiveMessage")).toBe(0.4);
    expect(units("timers DeleteMessageBatch")).toBe(0.1);
    expect(units("timer invocations")).toBe(0.05);
    expect(units("crewEvents (FIFO) ReceiveMessage")).toBe(2);
    expect(units("crewEvents (FIFO) DeleteMessageBatch")).toBe(2);
    // Not measured: one receive and one delete per invocation.
    const unmeasured = { ...profile, invocations: { ...profile.invocations, timer } };
    expect(units("timers ReceiveMessage", unmeasured)).toBe(0.05);
    // A fixed fill above 10: one receive and one delete per 10 records of a batch.
    expect(units("timers ReceiveMessage", profile, 20)).toBe((1 / 20) * 2);
    expect(units("timers DeleteMessageBatch", profile, 1)).toBe(1);
  });

  it("adds the event source's measured requests of two profiles, one per invocation on the side without them", () => {
    const a = sample();
    const b = sample();
    a.invocations.orchestrator!.eventSourceReceives = 0.5;
    a.invocations.orchestrator!.eventSourceDeletes = 0.25;
    const sum = addProfiles(a, b).invocations.orchestrator!;
    expect(sum.eventSourceReceives).toBe(0.5 + 2);
    expect(sum.eventSourceDeletes).toBe(0.25 + 2);
    expect(addProfiles(b, sample()).invocations.orchestrator!.eventSourceReceives).toBeUndefined();
  });

  it("prices FIFO and standard queues apart", () => {
    const profile = sample();
    profile.sqsSends = {
      crewEvents: { requests: 1, chunks: 1, messages: 1 },
      agentSteps: { requests: 1, chunks: 1, messages: 1 },
    };
    const lines = costLines(profile);
    expect(lines.find((l) => l.item.startsWith("crewEvents (FIFO) sends"))!.price).toBe(PRICES.sqs.fifoRequest);
    expect(lines.find((l) => l.item.startsWith("agentSteps sends"))!.price).toBe(PRICES.sqs.standardRequest);
  });

  it("sorts lines into orchestration and work, the orchestrator's logs with the orchestration", () => {
    const lines = costLines(sample());
    const orchestratorLogs = logM(1000 + 4 * LOG_BYTES.lambdaFieldsPerLine) + logM(2 * LOG_BYTES.platformPerInvocation);
    close(
      perMillion(lines.filter((l) => l.category === "orchestration")),
      0.4 + 0.333335 + 1.5 + 1 + 1 + 2.5 + 0.125 + orchestratorLogs,
    );
    expect([...new Set(lines.filter((l) => l.category === "work").map((l) => l.service))].sort()).toEqual([
      "API Gateway",
      "CloudWatch Logs",
      "EventBridge",
      "SQS",
    ]);
  });

  it("adds up by service and ranks the drivers", () => {
    const lines = costLines(sample());
    const services = byService(lines);
    close(services.DynamoDB!, 2.625);
    close(services.SQS!, 3.9);
    close(services["CloudWatch Logs"]!, sampleLogsM);
    expect(topDrivers(lines, 2).map((l) => l.item)).toEqual([
      "session: 2 writes",
      "PutEvents entries (2 events in 1 requests)",
    ]);
  });

  it("prices the data keys as kmsKeyStore serves them: GetItem per lookup, a PutItem per key made, no KMS call per claim", () => {
    const profile = sample();
    profile.invocations.orchestrator = {
      ...profile.invocations.orchestrator!,
      keyLookups: 5,
      keysMade: 1,
      keyDecryptsPerInvocation: 6,
      keyDecryptsPerFunction: 2,
      keyInvocations: 4,
    };
    const keyLines = (options = DEFAULT_COST_OPTIONS) =>
      costLines(profile, options).filter((l) => l.service === "KMS" || l.item.startsWith("data_key:"));
    // 5 RRU × $0.125/M + 1 WRU × $0.625/M; warm containers unwrap the branch key every 10 minutes: ~$0 per claim.
    close(perMillion(keyLines()), 5 * 0.125 + 0.625);
    expect(keyLines().map((l) => l.unit)).toEqual(["RRU", "WRU"]);
    // A fresh container per invocation: each of the 4 invocations that looked up a key reads and unwraps the branch key.
    const low = keyLines({ ...DEFAULT_COST_OPTIONS, keyDecrypts: "per invocation" });
    close(perMillion(low), 5 * 0.125 + 0.625 + 4 * (0.125 + 3));
    expect(low.filter((l) => l.service === "KMS").map((l) => l.units)).toEqual([4]);
    // The timer composes no vault on AWS (no key link): whatever it looked up locally costs nothing there.
    const timer = sample();
    timer.invocations = { timer: { ...profile.invocations.orchestrator! } };
    expect(costLines(timer).some((l) => l.service === "KMS" || l.item.startsWith("data_key:"))).toBe(false);
    // A profile without the count (from before issue 37) has no key lines.
    expect(costLines(sample()).some((l) => l.service === "KMS" || l.item.startsWith("data_key:"))).toBe(false);
  });
});

describe("addProfiles", () => {
  it("sums two profiles field by field, keeping the first's kind and claim count", () => {
    const sum = addProfiles(sample(), sample());
    expect(sum.claims).toBe(10);
    expect(sum.requests.DynamoDB).toEqual({ PutItem: 4, GetItem: 2 });
    expect(sum.dynamo.session).toEqual({ reads: 2, writes: 4, rru: 2, wru: 8, gsiWru: 0, conditionalFailures: 0 });
    expect(sum.sqsSends.crewEvents).toEqual({ requests: 6, chunks: 6, messages: 8 });
    expect(sum.invocations.orchestrator).toMatchObject({
      records: 8,
      calls: { "DynamoDB.GetItem": 20, "EventBridge.PutEvents": 4 },
      logLines: 8,
      logBytes: 2000,
    });
    expect(sum.busDeliveries).toEqual({ verdicts: 2 });
    close(perMillion(costLines(sum)), 2 * perMillion(costLines(sample())));
  });

  it("keeps entries only one side has, without sharing them", () => {
    const timer: ClaimProfile = {
      ...sample(),
      requests: { SQS: { SendMessageBatch: 2 } },
      dynamo: {},
      sqsSends: { timers: { requests: 2, chunks: 2, messages: 2 } },
      busDeliveries: {},
      apiRequests: 0,
      invocations: {
        timer: {
          invocations: 1,
          records: 2,
          handlerMs: 5,
          sdkMs: 4,
          cpuMs: 1,
          calls: { "SQS.SendMessageBatch": 1 },
          llmCalls: 0,
          logLines: 2,
          logBytes: 300,
        },
      },
    };
    const sum = addProfiles(sample(), timer);
    expect(sum.requests).toEqual({ DynamoDB: { PutItem: 2, GetItem: 1 }, SQS: { SendMessageBatch: 2 } });
    expect(Object.keys(sum.invocations).sort()).toEqual(["orchestrator", "timer"]);
    expect(sum.apiRequests).toBe(1);
    sum.invocations.timer!.calls["SQS.SendMessageBatch"] = 99;
    expect(timer.invocations.timer!.calls["SQS.SendMessageBatch"]).toBe(1);
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

describe("storagePerMonth", () => {
  it("counts 100 bytes per item and per index entry, PITR on the table only, logs compressed", () => {
    const stored = {
      audit: { items: 10, bytes: 10_000, indexItems: 0, indexBytes: 0 },
      claim: { items: 1, bytes: 1000, indexItems: 1, indexBytes: 1000 },
    };
    const s = storagePerMonth(stored, 4000, 0.25);
    expect(s.tableBytes).toBe(12_100);
    expect(s.indexBytes).toBe(1100);
    close(s.dynamo, (13_200 * 0.25 + 12_100 * 0.2) / GB);
    close(s.logs, (1000 * 0.03) / GB);
  });

  it("leaves out the items with a TTL once the retention horizon has passed", () => {
    const stored = {
      session: { items: 2, bytes: 1000, indexItems: 0, indexBytes: 0, expiringItems: 2, expiringBytes: 1000 },
      audit: { items: 7, bytes: 3000, indexItems: 0, indexBytes: 0 },
    };
    expect(storagePerMonth(stored, 0, 0).tableBytes).toBe(4900);
    expect(storagePerMonth(stored, 0, 0, true).tableBytes).toBe(3700);
  });
});

describe("Step Functions", () => {
  it("counts 6 transitions for a structured claim and 8 with extraction", () => {
    expect(transitions(stepFunctionsStates("structured"))).toBe(6);
    expect(transitions(stepFunctionsStates("free_text"))).toBe(8);
    expect(
      stepFunctionsStates("free_text")
        .slice(0, 2)
        .map((s) => s.state),
    ).toEqual(["Extract", "Extracted?"]);
  });

  it("costs $150 per million structured claims on Standard at $0.025 per 1,000 transitions", () => {
    close(transitions(stepFunctionsStates("structured")) * PRICES.stepFunctions.standardTransition * 1e6, 150);
  });

  it("bills an Express execution per request and per 100 ms at 64 MB, LLM waits included", () => {
    const profile = sample();
    // worker: all SDK time, 2 PutEvents × 20 ms = 40 ms of AWS estimate; 2 LLM calls
    profile.invocations.worker = {
      invocations: 2,
      records: 2,
      handlerMs: 5,
      sdkMs: 5,
      cpuMs: 0,
      calls: { "EventBridge.PutEvents": 2 },
      llmCalls: 2,
      logLines: 0,
      logBytes: 0,
    };
    const noWait = expressPerClaim(profile, "structured", 0);
    close(noWait.durationMs, 6 * 20 + 40); // 6 states × 20 ms + the worker
    close(noWait.perClaim, 1e-6 + 0.2 * (64 / 1024) * (0.06 / 3600)); // 160 ms → 200 ms billed
    const wait = expressPerClaim(profile, "structured", 3);
    close(wait.durationMs, 160 + 6000);
    close(wait.perClaim, 1e-6 + 6.2 * (64 / 1024) * (0.06 / 3600));
  });
});

/** A profile file around the sample (the same profile for every phase and kind). */
function sampleFile(overrides: Partial<AwsRequestsFile> = {}): AwsRequestsFile {
  const p = sample();
  return {
    recordedAt: "2026-11-22T00:00:00Z",
    commit: "abc1234",
    machine: "test",
    note: "hand-made",
    sequential: { structured: p, free_text: { ...p, kind: "free_text" } },
    concurrent: { structured: p, free_text: { ...p, kind: "free_text" } },
    poll: {
      ...sample(),
      sqsSends: {},
      dynamo: { claim: { reads: 1, writes: 0, rru: 0.5, wru: 0, gsiWru: 0, conditionalFailures: 0 } },
      events: { requests: 0, entries: 0, chunks: 0 },
      busDeliveries: {},
      invocations: {},
    },
    stored: { audit: { items: 10, bytes: 10_000, indexItems: 0, indexBytes: 0 } },
    logs: { level: "INFO", lines: 100, bytes: 20_000, gzipBytes: 5000, outsideLines: 0 },
    ...overrides,
  };
}

describe("costSummary", () => {
  const allIn = perMillion(costLines(sample()));

  it("gives the all-in figure, the parameters and the alternatives for one kind of claim", () => {
    const s = costSummary(sampleFile(), "structured");
    close(s.allIn, allIn); // no timer path in the file
    expect(s.timerPath).toBeUndefined();
    close(s.llmWait[1], 0); // the sample calls no LLM
    close(s.perGet, 1 + 0.0625 + logM(LOG_BYTES.accessLogGet));
    close(
      s.orchestration,
      0.4 +
        0.333335 +
        1.5 +
        1 +
        1 +
        2.5 +
        0.125 +
        logM(1000 + 4 * LOG_BYTES.lambdaFieldsPerLine) +
        logM(2 * LOG_BYTES.platformPerInvocation),
    );
    close(s.standard.total, allIn - s.orchestration + 150);
    close(s.express[0].total, allIn - s.orchestration + s.express[0].orchestration);
    close(s.logs.handler + s.logs.platform + s.logs.access, sampleLogsM);
    close(
      s.storage.logGzipBytes,
      0.25 * (1000 + 4 * LOG_BYTES.lambdaFieldsPerLine + 2 * LOG_BYTES.platformPerInvocation + LOG_BYTES.accessLogPost),
    );
  });

  it("adds the timer path to the all-in figure when it was measured", () => {
    const s = costSummary(sampleFile({ timerPath: sample() }), "structured");
    close(s.timerPath!, allIn);
    close(s.allIn, 2 * allIn);
  });

  it("bills the timer path its event source's receives and deletes, the timers the claim sent, once in the all-in", () => {
    const claim = sample();
    claim.sqsSends = { ...claim.sqsSends, timers: { requests: 1, chunks: 1, messages: 1 } };
    const timer = {
      ...claim.invocations.orchestrator!,
      invocations: 0.1,
      records: 1,
      calls: {},
      logLines: 0,
      logBytes: 0,
    };
    const path: ClaimProfile = {
      ...sample(),
      requests: {},
      dynamo: {},
      sqsSends: {},
      events: { requests: 0, entries: 0, chunks: 0 },
      busDeliveries: {},
      apiRequests: 0,
      invocations: { timer: { ...timer, eventSourceReceives: 0.9, eventSourceDeletes: 0.1 } },
    };
    const file = sampleFile({ timerPath: path });
    file.concurrent.structured = claim;
    const sqs = (lines: ReturnType<typeof costLines>) =>
      lines.filter((l) => l.item.startsWith("timers ")).map((l) => [l.item.split(" ")[1], l.units]);
    expect(sqs(costLines(path))).toEqual([
      ["ReceiveMessage", 0.9],
      ["DeleteMessageBatch", 0.1],
    ]);
    expect(sqs(costLines(claim))).toEqual([["sends", 1]]);
    const s = costSummary(file, "structured");
    close(s.allIn, perMillion([...costLines(claim), ...costLines(path)]));
    close(s.timerPath!, perMillion(costLines(path)));
    close(s.timerPath! - perMillion(costLines({ ...path, invocations: { timer } })), 0.8 * 0.4);
    // At low traffic each timer is alone in its window: its own invocation, receive and delete.
    const alone = { ...optionsFor(file), batchFill: 1 };
    expect(sqs(costLines(path, alone))).toEqual([
      ["ReceiveMessage", 1],
      ["DeleteMessageBatch", 1],
    ]);
    close(s.lowTraffic, perMillion([...costLines(file.sequential.structured, alone), ...costLines(path, alone)]));
  });
});

describe("costTable", () => {
  it("has a column per file and kind and says what each row assumes and which price it uses", () => {
    const rows = costTable([
      { file: sampleFile(), kind: "structured" },
      { file: sampleFile({ timerPath: sample() }), kind: "structured" },
    ]);
    const row = (start: string) => rows.find((r) => r.line.startsWith(start))!;
    expect(rows.every((r) => r.values.length === 2 && r.basis.length > 0)).toBe(true);
    close(row("**All-in per claim**").values[1]!, 2 * row("**All-in per claim**").values[0]!);
    expect(row("Step-timer path").basis).toMatch(/NOT measured/);
    expect(row("Lambda").price).toMatch(/lambda\/pricing/);
    expect(rows.map((r) => r.line)).toEqual(
      expect.arrayContaining([
        "+ LLM wait in Lambda, 1 s per call",
        "+ LLM wait in Lambda, 3 s per call",
        "+ each client GET /claims/{id}",
        "All-in with Step Functions Standard instead",
        "All-in with Step Functions Express instead, LLM wait 3 s",
      ]),
    );
  });
});

describe("the all-in figure", () => {
  it("adds the model's tokens per claim at a price per million tokens to AWS per million claims", () => {
    const tokens = { prompt: 1000, completion: 100 };
    const price = { input_per_million: 0.15, output_per_million: 0.6 };
    expect(modelPerMillion(tokens, price)).toBeCloseTo(210, 9);
    expect(allInPerMillion(30, tokens, price)).toBeCloseTo(240, 9);
  });
});
