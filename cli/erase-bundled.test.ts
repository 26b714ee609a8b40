// Every claim of the bundled run erased at once (the retention policy past every claim): each still replays
// IDENTICAL with the outcome it had, and the backtest of the run is unchanged — the resubmissions, four-eyes
// approvals, customer-limit races and people's decisions included.
import { describe, expect, it } from "vitest";
import { backtest } from "../core/history/backtest/index.ts";
import {
  BUNDLED_CONFIG_TEXT,
  BUNDLED_NOW,
  policyOf,
  recordBundledRun,
} from "../core/history/backtest/backtest.test-kit.ts";
import { auditClaimId } from "../core/history/audit-events.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { sweepRetention } from "./customer-data.ts";
import { loadRunAudit } from "./run-store.ts";

describe("the bundled run, every claim erased", () => {
  it("replays every claim IDENTICAL with its outcome, and backtests as before", async () => {
    const run = await recordBundledRun();
    const claims = [...new Set(run.events.map(auditClaimId).filter((id): id is string => id !== undefined))];
    expect(claims.length).toBeGreaterThan(30);
    const swept = await sweepRetention(run.dataDir, 1, new Date(BUNDLED_NOW + 2 * 86_400_000), async () => {});
    expect(swept.erased.sort()).toEqual([...claims].sort());
    const after = await loadRunAudit(run.dataDir, run.simulationId);
    expect(JSON.stringify(after)).not.toContain("Screen is dead on arrival");
    const differing = claims.flatMap((id) => {
      const before = replayClaim(id, run.events);
      const now = replayClaim(id, after);
      return now.status === before.status && now.outcome === before.outcome && now.reasonCode === before.reasonCode
        ? []
        : [{ id, before: before.status, now: now.status, steps: now.steps.filter((s) => s.status !== "IDENTICAL") }];
    });
    expect(differing).toEqual([]);
    expect(claims.every((id) => replayClaim(id, run.events).status === "IDENTICAL")).toBe(true);
    const policy = policyOf(BUNDLED_CONFIG_TEXT);
    const a = backtest({ histories: [{ id: run.simulationId, events: run.events }], policy });
    const b = backtest({ histories: [{ id: run.simulationId, events: after }], policy });
    expect({ evaluated: b.evaluated, flips: b.flips, totals: b.totals, not: b.not_evaluable.length }).toEqual({
      evaluated: a.evaluated,
      flips: a.flips,
      totals: a.totals,
      not: a.not_evaluable.length,
    });
  });
});
