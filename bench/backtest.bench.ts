// Policy backtest benchmark: decisions per second of `backtest` over 100,000 recorded decisions (read from
// the recorded audit events, re-decided by the kernel, ledger simulated, totals and flips counted) beside
// the bare kernel (`decideClaim` on the same decisions' recorded inputs), taking turns in CPU time.
import { backtest, readHistories } from "../core/history/backtest/index.ts";
import type { RecordedHistory } from "../core/history/backtest/index.ts";
import { configWithLimit, policyOf, recordBundledRun } from "../core/history/backtest/backtest.test-kit.ts";
import type { DecideClaimInput } from "../core/kernel/kernel.ts";
import { decideClaim } from "../core/kernel/kernel.ts";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { nodeSha256 } from "../functions/composition/compose.ts";
import { compare, envIntReader, formatTable, interleave, ratioText, us } from "./lib/harness.ts";
import type { Contender } from "./lib/harness.ts";

/** The goal of issue 22: the backtest runs within this factor of the bare kernel, per decision. */
export const BACKTEST_GOAL_RATIO = 2;

/** The bundled run's recorded kernel inputs, exactly as PROPOSAL_SUBMITTED holds them (the last of each claim). */
export function recordedKernelInputs(events: readonly AuditEvent[]): DecideClaimInput[] {
  const last = new Map<string, DecideClaimInput>();
  for (const e of events)
    if (e.event_type === "PROPOSAL_SUBMITTED") {
      const k = e.details.kernel_inputs as DecideClaimInput & { order: unknown; ledgerEntry: unknown };
      last.set(String(e.details.claim_id), {
        ...k,
        order: (k.order ?? undefined) as DecideClaimInput["order"],
        ledgerEntry: (k.ledgerEntry ?? undefined) as DecideClaimInput["ledgerEntry"],
        sha256: nodeSha256,
      });
    }
  return [...last.values()];
}

/** `copies` histories holding the bundled run each: every copy runs on a ledger of its own. */
export function histories(events: readonly AuditEvent[], copies: number): RecordedHistory[] {
  return Array.from({ length: copies }, (_, i) => ({ id: `run_${i + 1}`, events }));
}

const perSecond = (ns: number) => Math.round(1e9 / ns);

/**
 * A full collection before every sample (untimed, when the bench runs with --expose-gc): no contender's sample is
 * billed for the garbage another one left (CPU time counts the collector's threads).
 */
const settle = () => (globalThis as { gc?: () => void }).gc?.();

/** Runs the backtest benchmark and returns its markdown section. */
export async function run(env: Readonly<Record<string, string | undefined>> = process.env): Promise<string> {
  const num = envIntReader("backtest", env);
  const target = num("BENCH_BACKTEST_DECISIONS", 100_000, 1);
  const rounds = num("BENCH_BACKTEST_ROUNDS", 9, 1);
  const bundled = await recordBundledRun();
  const inputs = recordedKernelInputs(bundled.events);
  const policy = policyOf(configWithLimit(100));
  // One copy decided once, outside the timing: how many decisions it re-decides, flips and leaves out.
  const one = backtest({ histories: histories(bundled.events, 1), policy, sha256: nodeSha256 });
  const copies = Math.ceil(target / one.evaluated);
  const decisions = copies * one.evaluated;
  const recorded = histories(bundled.events, copies);

  // The result checked once, outside the timing: every copy decides as the single one did.
  const probe = backtest({ histories: recorded, policy, sha256: nodeSha256 });
  if (
    probe.evaluated !== decisions ||
    probe.flips.length !== one.flips.length * copies ||
    probe.not_evaluable.length !== one.not_evaluable.length * copies
  )
    throw new Error(
      `backtest bench: ${probe.evaluated} of ${decisions} re-decided, ${probe.flips.length} flips, ${probe.not_evaluable.length} not evaluable`,
    );

  const read = readHistories(recorded);
  let i = 0;
  let last: ReturnType<typeof backtest> | undefined;
  let lastRead: ReturnType<typeof backtest> | undefined;
  let lastValidating: ReturnType<typeof backtest> | undefined;
  const contenders: Contender[] = [
    {
      name: "kernel",
      // As many decisions per sample as a backtest's: samples of like length, so neither is billed more of the
      // collector's background work.
      op: () => {
        for (let n = 0; n < decisions; n++) decideClaim(inputs[i++ % inputs.length]!);
      },
      unitsPerOp: decisions,
      opsPerSample: 1,
      before: settle,
    },
    {
      name: "backtest",
      unitsPerOp: decisions,
      opsPerSample: 1,
      before: settle,
      op: () => (last = backtest({ histories: recorded, policy, sha256: nodeSha256 })),
      after: () => {
        if (last?.evaluated !== decisions) throw new Error("backtest bench: a timed backtest re-decided too few");
      },
    },
    {
      name: "backtest on the validating ledger",
      unitsPerOp: decisions,
      opsPerSample: 1,
      before: settle,
      op: () => (lastValidating = backtest({ histories: recorded, policy, sha256: nodeSha256, ledger: "validating" })),
      after: () => {
        if (lastValidating?.evaluated !== decisions)
          throw new Error("backtest bench: a timed backtest re-decided too few");
      },
    },
    {
      name: "backtest, histories read once",
      unitsPerOp: decisions,
      opsPerSample: 1,
      before: settle,
      op: () => (lastRead = backtest({ histories: read, policy, sha256: nodeSha256 })),
      after: () => {
        if (lastRead?.evaluated !== decisions) throw new Error("backtest bench: a timed backtest re-decided too few");
      },
    },
  ];
  const [kernel, bt, validating, readOnce] = await interleave(contenders, {
    rounds,
    warmupRounds: 2,
    targetSampleMs: 30,
  });
  const c = compare(bt!, kernel!);
  const cRead = compare(readOnce!, kernel!);
  const cValidating = compare(validating!, kernel!);
  const row = {
    decisions,
    "kernel µs/decision (low)": us(kernel!.lowCpuNs),
    "kernel decisions/s": perSecond(kernel!.lowCpuNs),
    "backtest µs/decision (low)": us(bt!.lowCpuNs),
    "backtest decisions/s": perSecond(bt!.lowCpuNs),
    "backtest s for all": Number(((bt!.lowCpuNs * decisions) / 1e9).toFixed(2)),
    "backtest ÷ kernel (per-round range)": ratioText(c),
    [`within ${BACKTEST_GOAL_RATIO}×`]: c.quoted <= BACKTEST_GOAL_RATIO ? "met" : "MISSED",
    "validating ledger: µs/decision (low)": us(validating!.lowCpuNs),
    "validating ledger ÷ kernel": ratioText(cValidating),
    "read once: µs/decision (low)": us(readOnce!.lowCpuNs),
    "read once ÷ kernel": ratioText(cRead),
  };
  return [
    "## Policy backtest beside the bare kernel (bench/backtest.bench.ts)",
    "",
    "Definitions:",
    `- **backtest**: \`backtest()\` over ${decisions.toLocaleString("en")} recorded decisions: the bundled run (scenarios/scenarios.yaml with its reviews, the rules model, recorded in process) held ${copies} times as ${copies} histories, each on a ledger of its own, under a 100 EUR limit (${one.flips.length} flips and ${one.not_evaluable.length} not evaluable per copy). Per decision: the recorded details a backtest uses read through their audit schemas (a flip's recorded reason, layer and checks too), the kernel, the simulated ledger, the totals. node:crypto's SHA-256, as the CLI injects it. The copies share their event objects (nothing in the backtest caches by identity; a real history of this size is ~1 GB of distinct events, colder in memory).`,
    "- **validating ledger**: the same backtest simulating on production's validating ledger functions (`ledger: \"validating\"`: every change checked against the entry's schema and built anew), the reference the trusting ledger is checked against.",
    `- **kernel**: \`decideClaim\` alone on the same ${inputs.length} decisions' recorded inputs (PROPOSAL_SUBMITTED's kernel_inputs as recorded), in turn.`,
    `- **Timing**: all take turns, each sample as many decisions as a backtest's and after a full collection (untimed), ${rounds} rounds after 2 warm-up rounds, in CPU time of the process; **low** = the lowest round, the quoted figure; the ratio per decision, with the per-round range.`,
    "",
    formatTable([row]),
  ].join("\n");
}
