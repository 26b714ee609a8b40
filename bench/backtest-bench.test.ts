// The backtest bench's inputs, without timing: the bare kernel's inputs are the bundled run's recorded ones
// (each decides as recorded), and the copies of the run are histories of their own that each flip alike.
import { beforeAll, describe, expect, it } from "vitest";
import { backtest } from "../core/history/backtest/index.ts";
import { configWithLimit, policyOf, recordBundledRun } from "../core/history/backtest/backtest.test-kit.ts";
import type { BundledRun } from "../core/history/backtest/backtest.test-kit.ts";
import { decideClaim } from "../core/kernel/kernel.ts";
import { histories, recordedKernelInputs } from "./backtest.bench.ts";

let run: BundledRun;
beforeAll(async () => {
  run = await recordBundledRun();
}, 60_000);

describe("backtest bench inputs", () => {
  it("gives the bare kernel every recorded decision's inputs, each deciding as recorded", () => {
    const inputs = recordedKernelInputs(run.events);
    // 52 decided claims, 8 of them decided by triage before any proposal (C, D, G, L, M, N, T1, ML3): 44 kernel inputs.
    expect(inputs).toHaveLength(44);
    const recorded = new Map(
      run.events
        .filter((e) => e.event_type === "KERNEL_VERDICT")
        .map((e) => [e.details.claim_id, `${String(e.details.verdict)} ${String(e.details.reason_code)}`]),
    );
    for (const input of inputs) {
      const v = decideClaim(input);
      expect(`${v.verdict} ${v.reason_code}`).toBe(recorded.get(input.claimId));
    }
  });

  it("holds the run as copies that are histories of their own", () => {
    const r = backtest({ histories: histories(run.events, 3), policy: policyOf(configWithLimit(100)) });
    // Each copy as the run alone under 100 EUR: 51 of 52 decisions evaluated (G's triage goes to the crew), 8 flips.
    expect(r.histories.map((h) => [h.id, h.evaluated, h.flips])).toEqual([
      ["run_1", 51, 8],
      ["run_2", 51, 8],
      ["run_3", 51, 8],
    ]);
  });
});
