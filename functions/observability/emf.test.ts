// Packing EMF records into lines: what CloudWatch would extract from the packed lines — every (metric, dimension
// set, dimension values, value) — is exactly what it extracts from the records one per line.
import { describe, expect, it } from "vitest";
import { packEmf } from "./emf.ts";
import type { EmfDocument } from "./emf.ts";

const NS = "ClaimsCrew/test";

/** A record as Powertools serializes it: one directive, every metric under every set, `service` in each set. */
function doc(
  metrics: Record<string, number>,
  sets: Record<string, string>[],
  metadata: Record<string, string> = {},
  units: Record<string, string> = {},
): EmfDocument {
  const root: Record<string, unknown> = { ...metadata, service: "claims-crew" };
  for (const set of sets) Object.assign(root, set);
  return {
    _aws: {
      Timestamp: 1,
      CloudWatchMetrics: [
        {
          Namespace: NS,
          Dimensions: sets.map((set) => ["service", ...Object.keys(set)]),
          Metrics: Object.keys(metrics).map((Name) => ({ Name, Unit: units[Name] ?? "Count" })),
        },
      ],
    },
    ...root,
    ...metrics,
  };
}

/** What CloudWatch extracts from lines: one entry per metric, dimension set and line, with the values it reads. */
function extracted(lines: readonly EmfDocument[]): string[] {
  return lines
    .flatMap((line) =>
      line._aws.CloudWatchMetrics.flatMap((d) =>
        d.Metrics.flatMap((m) =>
          d.Dimensions.map(
            (set) =>
              `${d.Namespace} ${m.Name} ${m.Unit ?? "None"} ${set.map((k) => `${k}=${String(line[k])}`).join(",")} = ${String(line[m.Name])}`,
          ),
        ),
      ),
    )
    .sort();
}

const claim = { function: "kernel", claim_id: "clm_1" };
const decided = doc(
  { ClaimsDecided: 1 },
  [
    { Flow: "live", Verdict: "ACCEPT" },
    { Flow: "live", Verdict: "ACCEPT", ReasonCode: "VALIDATION_PASSED" },
  ],
  claim,
);
const refund = doc(
  { RefundsExecuted: 1, RefundedAmountEur: 299.99 },
  [{ Flow: "live", AuthorisedBy: "kernel" }],
  claim,
  { RefundedAmountEur: "None" },
);
const latency = doc({ DecisionLatency: 1234 }, [{ Flow: "live" }, { Flow: "live", Outcome: "ACCEPT" }], claim, {
  DecisionLatency: "Milliseconds",
});

describe("packEmf", () => {
  it("writes a claim's records of one invocation as one line, each metric under its own dimension sets only", () => {
    const lines = packEmf([decided, refund, latency]);
    expect(lines).toHaveLength(1);
    expect(lines[0]!._aws.CloudWatchMetrics).toHaveLength(3);
    expect(extracted(lines)).toEqual(extracted([decided, refund, latency]));
    // Shared members once, and the line shorter than the three.
    expect(JSON.stringify(lines[0]).length).toBeLessThan(
      [decided, refund, latency].reduce((n, d) => n + JSON.stringify(d).length, 0) * 0.8,
    );
  });

  it("leaves out a unit that is EMF's default (None), and keeps every other", () => {
    const [line] = packEmf([refund]);
    expect(line!._aws.CloudWatchMetrics[0]!.Metrics).toEqual([
      { Name: "RefundsExecuted", Unit: "Count" },
      { Name: "RefundedAmountEur" },
    ]);
  });

  it("shares a metric's value between directives when it is the same (a failed call under Task and Task, Code)", () => {
    const call = doc({ LlmCalls: 1, LlmCallFailures: 1 }, [{ Task: "decide_refund" }], { function: "worker" });
    const byCode = doc({ LlmCallFailures: 1 }, [{ Task: "decide_refund", Code: "LLM_TIMEOUT" }], {
      function: "worker",
    });
    const lines = packEmf([call, byCode]);
    expect(lines).toHaveLength(1);
    expect(extracted(lines)).toEqual(extracted([call, byCode]));
  });

  it.each([
    ["another claim (its claim_id)", { ...claim, claim_id: "clm_2" }, [{ Flow: "live", Outcome: "ACCEPT" }]],
    ["another flow", claim, [{ Flow: "simulation", Outcome: "ACCEPT" }]],
  ])("starts a new line for a record whose values differ: %s", (_name, metadata, sets) => {
    const other = doc({ DecisionLatency: 99 }, sets, metadata);
    const lines = packEmf([latency, other]);
    expect(lines).toHaveLength(2);
    expect(extracted(lines)).toEqual(extracted([latency, other]));
  });

  it("never publishes one metric twice under one dimension set in a line: two equal counts stay two", () => {
    const call = doc({ LlmCalls: 1 }, [{ Task: "analyze_claim" }], { function: "worker" });
    const lines = packEmf([call, call]);
    expect(lines).toHaveLength(2);
    expect(extracted(lines)).toEqual(extracted([call, call]));
  });

  it("fills the first line a record fits, in order", () => {
    const live = doc({ PendingReviews: 2 }, [{ Flow: "live" }], { function: "sweep" });
    const sim = doc({ PendingReviews: 0 }, [{ Flow: "simulation" }], { function: "sweep" });
    const age = doc(
      { OldestPendingReviewAge: 5 },
      [{ Flow: "live" }],
      { function: "sweep" },
      { OldestPendingReviewAge: "Seconds" },
    );
    const lines = packEmf([live, sim, age]);
    expect(lines).toHaveLength(2);
    expect(lines[0]!._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: NS,
        Dimensions: [["service", "Flow"]],
        Metrics: [
          { Name: "PendingReviews", Unit: "Count" },
          { Name: "OldestPendingReviewAge", Unit: "Seconds" },
        ],
      },
    ]);
    expect(extracted(lines)).toEqual(extracted([live, sim, age]));
  });
});
