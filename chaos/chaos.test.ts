// CI's short chaos run: a few hundred randomized, fault-injected flows in process, a new seed every run (printed;
// CHAOS_SEED=S repeats one, CHAOS_FLOWS=N changes how many), and not one invariant violated. A failure names each
// failing flow with the one line that reproduces it.
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { chaosEnv, runChaosFlow } from "./flow.ts";
import { reproduction } from "./run.ts";
import { addToTally, createTally, formatTally } from "./tally.ts";

const SEED = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : randomInt(0, 2 ** 31);
const FLOWS = process.env.CHAOS_FLOWS ? Number(process.env.CHAOS_FLOWS) : 200;

describe("npm run chaos, short", () => {
  it(`${FLOWS} flows keep every invariant`, async () => {
    console.log(`chaos: seed ${SEED}, ${FLOWS} flows (CHAOS_SEED=${SEED} repeats this run)`);
    const env = chaosEnv(readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"), "config.yaml");
    const tally = createTally();
    const failures: string[] = [];
    const started = performance.now();
    for (let k = 0; k < FLOWS; k++) {
      const result = await runChaosFlow(env, SEED, k);
      addToTally(tally, result);
      if (result.violations.length > 0)
        failures.push(
          `flow ${k}: ${result.violations.slice(0, 3).join("; ")}\n  reproduce: ${reproduction(SEED, k, false)}`,
        );
    }
    console.log(formatTally(tally, (performance.now() - started) / 1000));
    expect(failures, `seed ${SEED}`).toEqual([]);
    // The run exercised what it claims to: every kind of fault, and reviews, refunds and free text.
    for (const kind of Object.keys(tally.faults) as (keyof typeof tally.faults)[])
      expect({ kind, injected: tally.faults[kind] > 0 }).toEqual({ kind, injected: true });
    expect(tally.refunds).toBeGreaterThan(0);
    expect(tally.reviewDecisions).toBeGreaterThan(0);
    // The payment provider failed, settled late and timed out, and reviewers retried and closed failed refunds.
    const p = tally.payments;
    expect([p.refundsFailed, p.late, p.timeoutsBefore + p.timeoutsAfter, p.retried, p.closed].every((n) => n > 0)).toBe(
      true,
    );
    // Returns were asked, their events posted, and they ended paid, released or with a person (chaos/returns.ts).
    const r = tally.returns;
    expect([r.asked, r.posted, r.paid + r.released + r.reviewed].every((n) => n > 0)).toBe(true);
  }, 600_000);
});
