// `npm run chaos -- --flows N [--seed S] [--flow K] [--emulators] [--verbose]`: runs N randomized, fault-injected
// flows (in process on the in-memory stores, or with --emulators on the local stack), checks the invariants after
// each, prints every failing flow with a one-line reproduction, the faults injected by kind, and ends with
// `N flows, M violations`. Exit 0 when M = 0, 1 otherwise, 2 for a usage error.
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
  emulators: boolean;
  verbose: boolean;
}

const USAGE = "usage: npm run chaos -- --flows N [--seed S] [--flow K] [--emulators] [--verbose]";

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
  const flows = int("flows", parsed.values.flows, 1) ?? (flow !== undefined ? 1 : 100);
  const seed = int("seed", parsed.values.seed, 0) ?? randomSeed();
  if (seed >= 2 ** 32) throw new ChaosError("USAGE", `--seed must be below 2^32\n${USAGE}`);
  return {
    flows,
    seed,
    ...(flow !== undefined ? { flow } : {}),
    emulators: parsed.values.emulators,
    verbose: parsed.values.verbose,
  };
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
  const flows = opts.flow !== undefined ? [opts.flow] : Array.from({ length: opts.flows }, (_, i) => i);
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
  console.log(
    `chaos: seed ${opts.seed}, ${opts.flow !== undefined ? `flow ${opts.flow}` : `${opts.flows} flows`}, ${opts.emulators ? "on the local stack (emulators)" : "in process (in-memory stores)"}`,
  );
  let result: { violations: number; flows: number };
  if (opts.emulators) {
    const { runOnEmulators } = await import("./emulators.ts");
    result = await runOnEmulators(opts, (line) => console.log(line), configPath);
  } else {
    result = await runInMemory(opts, (line) => console.log(line), configPath);
  }
  console.log(`${result.flows} flows, ${result.violations} violations`);
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
