// `npm run chaos -- --emulators` restarts the whole durable local stack where a flow plans it: two small flows
// (seed 7) whose plans put the restart right after their 12th side-effecting call, so it happens whatever the
// timing. Across it every claim still ends final with every invariant kept; and a restart that keeps nothing on
// disk (the planted bug: the stack starts again on an empty state directory) is found — the accepted claims are lost.
// Refunds are paid there through each flow's faulty provider (issue 39): a restart right after the provider paid a
// refund, before its settlement knew, is recovered by the journaled delivery (the executor asks again under the same
// idempotency key), and a restart that loses that journal (the planted bug) leaves the refund unknown.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runOnEmulators } from "./emulators.ts";
import type { EmulatorRunHooks } from "./emulators.ts";
import type { FlowPlan, PaymentPlan } from "./plan.ts";
import type { EffectCall } from "../local/testing/fault-injection.ts";

const CONFIG = fileURLToPath(new URL("../scenarios/config.yaml", import.meta.url));
const OPTS = { flows: 2, seed: 7, emulators: true, verbose: false };
const restartAt12 = (plan: FlowPlan): FlowPlan => ({ ...plan, faults: { ...plan.faults, restartAfterCall: 12 } });
/**
 * No time limit on settling: a run waits until every claim is final, or until nothing moves any more over the stack's
 * sweeps (a lost claim, an unknown refund) — counts, not the machine's speed (chaos/emulator-settle.ts).
 */
const UNTIL_SETTLED = Number.POSITIVE_INFINITY;
/** Long enough for a machine at load 30 (about 5 minutes a run there); a run that hangs still ends. */
const TIMEOUT_MS = 900_000;

/** The flows with a whole-stack restart at a claim's 12th call, settled by counts (`more`: e.g. the state lost). */
const restartAtTwelve = (lines: string[], more: EmulatorRunHooks = {}) =>
  runOnEmulators(OPTS, (l) => lines.push(l), CONFIG, {
    adjustPlan: restartAt12,
    settleTimeoutMs: UNTIL_SETTLED,
    ...more,
  });

describe("chaos on the emulators, whole-stack restart", () => {
  it(
    "restarts the stack on the same state directory and the flows it hit keep every invariant",
    async () => {
      const lines: string[] = [];
      const result = await restartAtTwelve(lines);
      expect(lines.filter((l) => l.startsWith("✗") || l.startsWith("    "))).toEqual([]);
      expect(result.violations).toBe(0);
      expect(result.restarts.length).toBeGreaterThanOrEqual(1);
      // The claim whose 12th call triggered the restart was open: the new stack re-drove it from the table.
      expect(result.restarts[0]!.restarted + result.restarts[0]!.ticked).toBeGreaterThanOrEqual(1);
      expect(result.tally.faults.restart).toBeGreaterThanOrEqual(1);
      expect(result.tally.claims).toBeGreaterThanOrEqual(3);
      expect(lines.join("\n")).toMatch(/restart [1-9]\d* \([12] flows\)/);
    },
    TIMEOUT_MS,
  );

  it(
    "finds a restart that keeps nothing on disk: the claims accepted before it are lost",
    async () => {
      const lines: string[] = [];
      const result = await restartAtTwelve(lines, { loseStateOnRestart: true });
      expect(result.restarts.length).toBeGreaterThanOrEqual(1);
      expect(result.violations).toBeGreaterThan(0);
      expect(lines.join("\n")).toMatch(/claim clm_f[01]_\w+ was accepted but is not stored: lost/);
    },
    TIMEOUT_MS,
  );
});

/**
 * A provider that pays every refund at once and never tells it by webhook (its answers never lost): the restart is the
 * only fault on the refund's way, and only the executor's next delivery can learn the refund was paid.
 */
const PAYS: PaymentPlan = {
  fail: 0,
  pending: 0,
  lateFail: 0,
  maxSettleMs: 60_000,
  timeout: 0,
  timeoutAfterWork: 0.5,
  duplicateWebhook: 0,
  staleWebhook: 0,
  forgedWebhook: 0,
  noPaymentRef: 0,
  paidWebhook: 0,
  reviewer: { decide: 1, retry: 1, concurrent: 0, repeat: 0 },
};
/** Once: right after the refund executor's first provider call (the provider paid; the settlement does not know yet). */
const afterFirstRefund = () => {
  let fired = false;
  return (call: EffectCall) => {
    if (fired || call.fn !== "refundExecutor" || call.op !== "payments.refund") return false;
    fired = true;
    return true;
  };
};
const PAY_OPTS = { flows: 3, seed: 11, emulators: true, verbose: false };
/**
 * The flows without their other faults (no duplicate, delayed, raced or lost message, no crash, a healthy model):
 * nothing but the restart publishes a refund again, so only the executor's journaled delivery can recover it.
 */
const onlyTheRestart = (plan: FlowPlan): FlowPlan => ({
  ...plan,
  faults: { duplicate: 0, delay: 0, maxDelayMs: 0, crashAfterCalls: [], race: 0, lostTimer: 0 },
  llm: { name: "healthy", slow: 0, hang: 0, fail: 0, garble: 0 },
});

/** A flow with only a restart, right after its first refund, each refund paid once every claim is final (no re-drive of an open claim publishes it again after the restart). */
const restartOnTheRefundsWay = (lines: string[], more: EmulatorRunHooks = {}) =>
  runOnEmulators(PAY_OPTS, (l) => lines.push(l), CONFIG, {
    adjustPlan: onlyTheRestart,
    payments: PAYS,
    restartWhen: afterFirstRefund(),
    holdRefundsUntilClaimsFinal: true,
    settleTimeoutMs: UNTIL_SETTLED,
    ...more,
  });

describe("chaos on the emulators, a restart on the refund's way (issue 39)", () => {
  it(
    "delivers the refund the restart cut off again: paid once, settled, every invariant kept",
    async () => {
      const lines: string[] = [];
      const result = await restartOnTheRefundsWay(lines);
      expect(lines.filter((l) => l.startsWith("✗") || l.startsWith("    "))).toEqual([]);
      expect(result.violations).toBe(0);
      expect(result.restarts.length).toBe(1);
      expect(result.restarts[0]!.refunds).toBeGreaterThanOrEqual(1);
      expect(result.tally.payments.payouts).toBeGreaterThanOrEqual(1);
      expect(result.tally.payments.replays).toBeGreaterThanOrEqual(1);
    },
    TIMEOUT_MS,
  );

  it(
    "finds a restart that loses the journaled deliveries: the refund the provider paid stays unknown",
    async () => {
      const lines: string[] = [];
      const result = await restartOnTheRefundsWay(lines, { dropRefundDeliveriesOnRestart: true });
      expect(result.restarts.length).toBe(1);
      expect(result.violations).toBeGreaterThan(0);
      expect(lines.join("\n")).toMatch(/is still PENDING after the flow drained|refund PENDING/);
    },
    TIMEOUT_MS,
  );
});
