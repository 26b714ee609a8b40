// The cost section: one column set per profile file, before and now, and the goal marked on the all-in row.
import { describe, expect, it } from "vitest";
import { report } from "./cost.bench.ts";
import type { AwsRequestsFile, ClaimProfile } from "./lib/profile.ts";

const profile = (kind: ClaimProfile["kind"], wru: number): ClaimProfile => ({
  kind,
  claims: 1,
  requests: {},
  dynamo: { audit: { reads: 0, writes: 1, rru: 0, wru, gsiWru: 0, conditionalFailures: 0 } },
  sqsSends: {},
  events: { requests: 0, entries: 0, chunks: 0 },
  busDeliveries: {},
  apiRequests: 1,
  invocations: {},
});
const file = (recordedAt: string, wru: number): AwsRequestsFile => ({
  recordedAt,
  commit: "abc1234",
  machine: "test",
  note: "hand-made",
  sequential: { structured: profile("structured", wru), free_text: profile("free_text", wru) },
  concurrent: { structured: profile("structured", wru), free_text: profile("free_text", wru) },
  poll: profile("structured", 0),
  stored: {},
  logs: { level: "INFO", lines: 0, bytes: 0, gzipBytes: 0, outsideLines: 0 },
});

describe("cost report", () => {
  it("prices the baseline and the fresh profile side by side and marks the goal on the all-in row", () => {
    const text = report(file("2026-11-24T02:00:00Z", 8), file("2026-11-22T02:00:00Z", 48));
    expect(text).toContain("structured, before $/M | structured, now $/M | free text, before $/M | free text, now $/M");
    const allIn = text.split("\n").find((l) => l.startsWith("| **All-in per claim**"))!;
    // before: $1 API + 48 WRU × $0.625 + access log; now: $1 + 8 × $0.625 + access log
    expect(allIn).toMatch(/\| 31\.\d\d MISSED +\| 6\.\d+ met +\| 31\.\d\d MISSED +\| 6\.\d+ met/);
  });

  it("shows one column set when the baseline is the fresh profile itself", () => {
    const f = file("2026-11-24T02:00:00Z", 8);
    expect(report(f, f)).toContain("structured, before (= now) $/M | free text, before (= now) $/M");
    expect(report(f)).toContain("structured, now $/M | free text, now $/M");
  });
});
