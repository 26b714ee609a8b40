// The request counting end to end on a small run of the real local stack (emulators, production
// handlers, the real SDK), without the 2-minute timer wait; and the bench's options. No timing.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsRequestsOptions, countAwsRequests, report } from "./aws-requests.bench.ts";
import type { AwsRequestsRun } from "./aws-requests.bench.ts";
import { costTable } from "./cost.ts";
import type { FunctionKey } from "./lib/profile.ts";

describe("awsRequestsOptions", () => {
  it("reads its sizes from the environment and names a bad one", () => {
    expect(awsRequestsOptions({})).toEqual({ sequential: 20, concurrent: 60, inFlight: 10, polls: 20, timers: true });
    expect(awsRequestsOptions({ AWS_REQUESTS_CONCURRENT: "30", AWS_REQUESTS_TIMERS: "0" })).toMatchObject({
      concurrent: 30,
      timers: false,
    });
    expect(() => awsRequestsOptions({ AWS_REQUESTS_IN_FLIGHT: "1" })).toThrow(
      /AWS_REQUESTS_IN_FLIGHT must be an integer ≥ 2/,
    );
    expect(() => awsRequestsOptions({ AWS_REQUESTS_CONCURRENT: "5" })).toThrow(
      /AWS_REQUESTS_POLLS \(20\) must not exceed/,
    );
  });
});

describe("countAwsRequests on the local stack", () => {
  let dir: string;
  let run: AwsRequestsRun;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "aws-requests-"));
    run = await countAwsRequests(
      { sequential: 2, concurrent: 3, inFlight: 2, polls: 2, timers: false },
      join(dir, "aws-requests.json"),
    );
  }, 60_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("writes the profile it returns", async () => {
    expect(JSON.parse(await readFile(join(dir, "aws-requests.json"), "utf8"))).toEqual(
      JSON.parse(JSON.stringify(run.file)),
    );
  });

  it("counts each claim's requests and invocations, free text through the extraction function", () => {
    const { structured, free_text } = run.file.concurrent;
    expect(structured.apiRequests).toBe(1);
    expect(structured.requests.DynamoDB?.PutItem).toBeGreaterThan(0);
    expect(structured.events.entries).toBeGreaterThan(0);
    const fns = (p: typeof structured) => Object.keys(p.invocations).sort();
    expect(fns(structured)).toEqual(["intakeApi", "kernel", "orchestrator", "worker"]);
    expect(fns(free_text)).toEqual(["intakeApi", "intakeExtract", "kernel", "orchestrator", "worker"]);
    // The compact crew's one step (docs/llm.md, "Crew shape"). The extraction function's records count as calls
    // (an upper bound: this free text is one the patterns read alone, with no model call).
    expect(structured.invocations.worker?.llmCalls).toBeCloseTo(1, 9);
    expect(free_text.invocations.intakeExtract?.llmCalls).toBeCloseTo(1, 9);
  });

  it("captures every handler's INFO lines against its own invocations", () => {
    const { logs } = run.file;
    expect(logs).toMatchObject({ level: "INFO", outsideLines: 0 });
    expect(logs.gzipBytes).toBeLessThan(logs.bytes);
    for (const [fn, u] of Object.entries(run.file.sequential.free_text.invocations) as [
      FunctionKey,
      { logLines: number; logBytes: number },
    ][]) {
      expect({ fn, lines: u.logLines > 0 }).toEqual({ fn, lines: true });
      expect(u.logBytes / u.logLines).toBeGreaterThan(100); // a Powertools JSON line, not a fragment
    }
  });

  it("prices one GET apart: one API request, one intake-api invocation and the claim read", () => {
    const { poll } = run.file;
    expect(poll.apiRequests).toBe(1);
    expect(poll.invocations.intakeApi?.invocations).toBe(1);
    expect(poll.requests).toEqual({ DynamoDB: { GetItem: poll.requests.DynamoDB!.GetItem } });
    expect(poll.dynamo.claim?.reads).toBeGreaterThanOrEqual(1);
  });

  it("measures what stays stored per claim and leaves the timer path out when not waited for", () => {
    expect(Object.keys(run.file.stored)).toEqual(expect.arrayContaining(["claim", "audit", "verdict", "session"]));
    expect(run.file.stored.claim!.items).toBeGreaterThan(0.99);
    expect(run.file.timerPath).toBeUndefined();
  });

  it("gives the cost model and the report what they need", () => {
    const rows = costTable([
      { file: run.file, kind: "structured" },
      { file: run.file, kind: "free_text" },
    ]);
    expect(rows.every((r) => r.values.every(Number.isFinite))).toBe(true);
    expect(report(run)).toContain("## AWS requests per claim");
  });
});
