// The profile helpers: one-at-a-time CPU carried into a loaded phase, and reading a profile file.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FUNCTION_MEMORY_MB, LLM_FUNCTIONS, QUEUE_CONSUMERS, readAwsRequests, withOwnCpu } from "./profile.ts";
import type { ClaimProfile, InvocationUsage } from "./profile.ts";

const usage = (records: number, invocations: number, cpuMs: number): InvocationUsage => ({
  invocations,
  records,
  handlerMs: 0,
  sdkMs: 0,
  cpuMs,
  calls: {},
  llmCalls: 0,
  logLines: 0,
  logBytes: 0,
});
const profile = (invocations: ClaimProfile["invocations"]): ClaimProfile => ({
  kind: "structured",
  claims: 1,
  requests: {},
  dynamo: {},
  sqsSends: {},
  events: { requests: 0, entries: 0, chunks: 0 },
  busDeliveries: {},
  apiRequests: 1,
  invocations,
});

describe("deployment facts", () => {
  it("reads memory, queue consumers and the LLM callers from app/manifest.ts", () => {
    expect(FUNCTION_MEMORY_MB).toMatchObject({ intakeApi: 512, orchestrator: 256, timer: 128 });
    expect(QUEUE_CONSUMERS.crewEvents).toEqual({ fn: "orchestrator", fifo: true });
    expect([...LLM_FUNCTIONS].sort()).toEqual(["intakeExtract", "worker"]);
  });
});

describe("withOwnCpu", () => {
  it("gives each loaded function the one-at-a-time CPU per record times its records, and keeps the rest", () => {
    const loaded = profile({ orchestrator: usage(3, 1.2, 40), timer: usage(1, 1, 5) });
    const alone = profile({ orchestrator: usage(3, 3, 6) });
    const out = withOwnCpu(loaded, alone);
    expect(out.invocations.orchestrator).toEqual({ ...usage(3, 1.2, 6) });
    expect(out.invocations.timer).toEqual(usage(1, 1, 5)); // not measured alone: as it was
    expect(loaded.invocations.orchestrator!.cpuMs).toBe(40); // not changed in place
  });
});

describe("readAwsRequests", () => {
  it("names the file and the missing part of a profile an older bench wrote", async () => {
    const dir = await mkdtemp(join(tmpdir(), "profile-"));
    try {
      const file = join(dir, "old.json");
      await writeFile(file, JSON.stringify({ sequential: {}, concurrent: {}, storedBytesPerClaim: {} }));
      await expect(readAwsRequests(file)).rejects.toThrow(/old\.json has no "poll"/);
      await expect(readAwsRequests(join(dir, "missing.json"))).rejects.toThrow(
        /cannot read .*missing\.json \(run `npm run bench -- aws-requests` first\)/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
