// `npm run chaos -- --flows N [--seed S] [--from K | --flow K] [--emulators [--concurrent C] [--settle-s T]] [--verbose]`: runs N
// randomized, fault-injected flows (in process on the in-memory stores, or with --emulators on the local stack),
// checks the invariants after each, prints every failing flow with a one-line reproduction, the faults injected by
// kind, and ends with `N flows, M violations` and one `chaos summary: {json}` line (seed, flows, violations, wall
// time) for runs made in parts: `--from K` runs flows K..K+N-1 of the seed, so a large run is split across processes
// or sessions without running a flow twice (docs/testing.md). Exit 0 when M = 0, 1 otherwise, 2 for a usage error.
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ChaosError } from "./errors.ts";
import { chaosEnv, runChaosFlow } from "./flow.ts";
import type { FlowResult } from "./flow.ts";
import { createTally, formatTally, addToTally } from "./tally.ts";

/** The options of a chaos run. */
export interface ChaosOptions {
  flows: number;
  seed: number;
  /** Run only this flow of the seed (a reproduction). */
  flow?: number;
  /** The first flow of the seed to run (a part of a larger run); default 0. */
  from?: number;
  /** Emulators: flows worked on at once on the one stack (default 8). */
  concurrent?: number;
  /** Emulators: seconds a flow's claims get to become final before it counts as stuck (default 120; a loaded machine). */
  settleS?: number;
  emulators: boolean;
  verbose: boolean;
}

const USAGE =
  "usage: npm run chaos -- --flows N [--seed S] [--from K | --flow K] [--emulators [--concurrent C] [--settle-s T]] [--verbose]";

/** Reads the command line; throws ChaosError naming the bad option. */
export function parseChaosArgs(
  argv: readonly string[],
  randomSeed: () => number = () => randomInt(0, 2 ** 31),
): ChaosOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        flows: { type: "string" },
        seed: { type: "string" },
        flow: { type: "string" },
        from: { type: "string" },
        concurrent: { type: "string" },
        "settle-s": { type: "string" },
        emulators: { type: "boolean", default: false },
        verbose: { type: "boolean", default: false },
      },
      strict: true,
    });
  } catch (error) {
    throw new ChaosError("USAGE", `${(error as Error).message}\n${USAGE}`);
  }
  const int = (name: string, value: string | undefined, min: number): number | undefined => {
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value)))
      throw new ChaosError("USAGE", `--${name} must be an integer ≥ ${min}, got ${JSON.stringify(value)}\n${USAGE}`);
    return Number(value);
  };
  const flow = int("flow", parsed.values.flow, 0);
  const from = int("from", parsed.values.from, 0);
  const concurrent = int("concurrent", parsed.values.concurrent, 1);
  const settleS = int("settle-s", parsed.values["settle-s"], 1);
  if (flow !== undefined && from !== undefined)
    throw new ChaosError("USAGE", `give --flow (one flow) or --from (a part), not both\n${USAGE}`);
  if (concurrent !== undefined && !parsed.values.emulators)
    throw new ChaosError("USAGE", `--concurrent is for --emulators (flows worked on at once on one stack)\n${USAGE}`);
  if (settleS !== undefined && !parsed.values.emulators)
    throw new ChaosError(
      "USAGE",
      `--settle-s is for --emulators (an in-process flow runs on simulated time)\n${USAGE}`,
    );
  const flows = int("flows", parsed.values.flows, 1) ?? (flow !== undefined ? 1 : 100);
  const seed = int("seed", parsed.values.seed, 0) ?? randomSeed();
  if (seed >= 2 ** 32) throw new ChaosError("USAGE", `--seed must be below 2^32\n${USAGE}`);
  return {
    flows,
    seed,
    ...(flow !== undefined ? { flow } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(concurrent !== undefined ? { concurrent } : {}),
    ...(settleS !== undefined ? { settleS } : {}),
    emulators: parsed.values.emulators,
    verbose: parsed.values.verbose,
  };
}

/** The flows of the seed a run covers: the one asked for, or N from --from (default 0). */
export function flowNumbers(opts: Pick<ChaosOptions, "flows" | "flow" | "from">): number[] {
  if (opts.flow !== undefined) return [opts.flow];
  const from = opts.from ?? 0;
  return Array.from({ length: opts.flows }, (_, i) => from + i);
}

/** The one line that reproduces a failing flow. */
export function reproduction(seed: number, flow: number, emulators: boolean): string {
  return `npm run chaos -- --flows 1 --seed ${seed} --flow ${flow}${emulators ? " --emulators" : ""}`;
}

/** Runs the in-memory flows of `opts`, reporting through `out`; returns the number of violations. */
async function runInMemory(
  opts: ChaosOptions,
  out: (line: string) => void,
  configPath: string,
): Promise<{ violations: number; flows: number; results: FlowResult[] }> {
  const env = chaosEnv(readFileSync(configPath, "utf8"), configPath);
  const tally = createTally();
  const flows = flowNumbers(opts);
  const failed: FlowResult[] = [];
  let violations = 0;
  const started = performance.now();
  for (const [i, k] of flows.entries()) {
    const result = await runChaosFlow(env, opts.seed, k);
    addToTally(tally, result);
    if (opts.verbose)
      out(
        `flow ${k}: ${JSON.stringify({ plan: { orders: result.plan.orders, claims: result.plan.claims.map((c) => ({ form: c.form, claim: c.claim, resend: c.resend })), faults: result.plan.faults, llm: result.plan.llm.name, concurrency: result.plan.concurrency }, counts: result.counts, simulatedMs: result.simulatedMs })}`,
      );
    if (result.violations.length > 0) {
      violations += result.violations.length;
      failed.push(result);
      out(`✗ flow ${k} (seed ${opts.seed}): ${result.violations.length} violation(s)`);
      for (const v of result.violations.slice(0, opts.verbose ? 100 : 5)) out(`    ${v}`);
      out(`    reproduce: ${reproduction(opts.seed, k, false)}`);
    }
    if (!opts.verbose && (i + 1) % 1000 === 0)
      process.stderr.write(`chaos: ${i + 1} flows in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  out(formatTally(tally, (performance.now() - started) / 1000));
  return { violations, flows: flows.length, results: failed };
}

async function main(): Promise<number> {
  let opts: ChaosOptions;
  try {
    opts = parseChaosArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`chaos: ${(error as Error).message}`);
    return 2;
  }
  const configPath = fileURLToPath(new URL("../scenarios/config.yaml", import.meta.url));
  const numbers = flowNumbers(opts);
  console.log(
    `chaos: seed ${opts.seed}, ${opts.flow !== undefined ? `flow ${opts.flow}` : `${opts.flows} flows (${numbers[0]}–${numbers.at(-1)})`}, ${opts.emulators ? "on the local stack (emulators)" : "in process (in-memory stores)"}`,
  );
  const started = performance.now();
  let result: { violations: number; flows: number };
  if (opts.emulators) {
    const { runOnEmulators } = await import("./emulators.ts");
    result = await runOnEmulators(
      opts,
      (line) => console.log(line),
      configPath,
      opts.settleS !== undefined ? { settleTimeoutMs: opts.settleS * 1000 } : {},
    );
  } else {
    result = await runInMemory(opts, (line) => console.log(line), configPath);
  }
  console.log(`${result.flows} flows, ${result.violations} violations`);
  console.log(
    `chaos summary: ${JSON.stringify({ mode: opts.emulators ? "emulators" : "in-process", seed: opts.seed, from: numbers[0], flows: result.flows, violations: result.violations, wall_s: Math.round((performance.now() - started) / 100) / 10 })}`,
  );
  return result.violations > 0 ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      // No stack trace unless asked for (CLAIMS_DEBUG=1), as everywhere else.
      console.error(
        `chaos: ${process.env.CLAIMS_DEBUG === "1" && !(error instanceof ChaosError) ? ((error as Error).stack ?? String(error)) : ((error as Error).message ?? String(error))}`,
      );
      process.exit(2);
    },
  );
}
