// `npm run chaos -- --emulators` restarts the whole durable local stack where a flow plans it: two small flows
// (seed 7) whose plans put the restart right after their 12th side-effecting call, so it happens whatever the
// timing. Across it every claim still ends final with every invariant kept; and a restart that keeps nothing on
// disk (the planted bug: the stack starts again on an empty state directory) is found — the accepted claims are lost.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runOnEmulators } from "./emulators.ts";
import type { FlowPlan } from "./plan.ts";

const CONFIG = fileURLToPath(new URL("../scenarios/config.yaml", import.meta.url));
const OPTS = { flows: 2, seed: 7, emulators: true, verbose: false };
const restartAt12 = (plan: FlowPlan): FlowPlan => ({ ...plan, faults: { ...plan.faults, restartAfterCall: 12 } });

describe("chaos on the emulators, whole-stack restart", () => {
  it("restarts the stack on the same state directory and the flows it hit keep every invariant", async () => {
    const lines: string[] = [];
    const result = await runOnEmulators(OPTS, (l) => lines.push(l), CONFIG, { adjustPlan: restartAt12 });
    expect(lines.filter((l) => l.startsWith("✗") || l.startsWith("    "))).toEqual([]);
    expect(result.violations).toBe(0);
    expect(result.restarts.length).toBeGreaterThanOrEqual(1);
    // The claim whose 12th call triggered the restart was open: the new stack re-drove it from the table.
    expect(result.restarts[0]!.restarted + result.restarts[0]!.ticked).toBeGreaterThanOrEqual(1);
    expect(result.tally.faults.restart).toBeGreaterThanOrEqual(1);
    expect(result.tally.claims).toBeGreaterThanOrEqual(3);
    expect(lines.join("\n")).toMatch(/restart [1-9]\d* \([12] flows\)/);
  }, 300_000);

  it("finds a restart that keeps nothing on disk: the claims accepted before it are lost", async () => {
    const lines: string[] = [];
    const result = await runOnEmulators(OPTS, (l) => lines.push(l), CONFIG, {
      adjustPlan: restartAt12,
      loseStateOnRestart: true,
      settleTimeoutMs: 5_000,
    });
    expect(result.restarts.length).toBeGreaterThanOrEqual(1);
    expect(result.violations).toBeGreaterThan(0);
    expect(lines.join("\n")).toMatch(/claim clm_f[01]_\w+ was accepted but is not stored: lost/);
  }, 300_000);
});
