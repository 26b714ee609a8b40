// `claims erase` and `claims export` (docs/customer-data.md): a customer's erasure and access over the data directory.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { CliError } from "./errors.ts";
import { eraseInRuns, exportCustomer } from "./customer-data.ts";
import type { ErasureResult, ErasureTarget } from "./customer-data.ts";
import { writeReportFor } from "./command-report.ts";
import { eraseServed, exportServed } from "./customer-data-served.ts";
import type { ServedErasure } from "./customer-data-served.ts";
import type { DestroyOutcome } from "../pipeline/personal-data.ts";
import { dataDirFrom, listRuns } from "./run-store.ts";

function describe(result: ErasureResult, served: ServedErasure | undefined, who: string): string {
  const state = (o: DestroyOutcome) => (o === "already_erased" ? "erased before" : "erased");
  const lines = result.runs.flatMap((r) =>
    r.claims.map((c) => `  ${c.claim_id} (run ${r.simulationId}): ${state(c.outcome)}\n`),
  );
  for (const c of served?.claims ?? [])
    lines.push(
      `  ${c.claim_id} (served): ${state(c.outcome)}${c.in_flight && c.outcome !== "already_erased" ? "; in flight: it goes on to its decision, its words erased" : ""}\n`,
    );
  const erased = result.erased.length + (served?.claims.filter((c) => c.outcome !== "already_erased").length ?? 0);
  const already = result.already.length + (served?.claims.filter((c) => c.outcome === "already_erased").length ?? 0);
  const head =
    erased > 0
      ? `${who}: personal data of ${erased} claim(s) erased; their decisions stay provable (claims replay)\n`
      : `${who}: already erased (${already} claim(s)); nothing left to erase\n`;
  return head + lines.join("");
}

/** Registers `claims erase` and `claims export`. */
export function registerCustomerDataCommands(program: Command): void {
  program
    .command("erase")
    .description(
      "erase a customer's personal data (GDPR Art. 17) in the data directory's runs and the claims of claims serve (running or stopped): destroy their claims' keys, record the erasure in the audit, rewrite the reports; decisions stay replayable",
    )
    .option("--customer <id>", "the customer (the orders' customer_id) whose claims to erase")
    .option("--claim <id>", "one claim to erase (a claim whose order names no customer)")
    .option("--json", "print { erased, already, runs } as JSON")
    .option("--data-dir <path>", "the data directory (default $CLAIMS_DATA_DIR or .claims)")
    .action(async (o: { customer?: string; claim?: string; json?: boolean; dataDir?: string }) => {
      if ((o.customer === undefined) === (o.claim === undefined))
        throw new CliError("give exactly one of --customer <id> or --claim <id>");
      const target: ErasureTarget = o.customer !== undefined ? { customerId: o.customer } : { claimId: o.claim! };
      const who = o.customer !== undefined ? `customer ${o.customer}` : `claim ${o.claim}`;
      const dataDir = dataDirFrom(o.dataDir);
      const now = new Date();
      const result = await eraseInRuns(dataDir, target, now, (sim) => writeReportFor(dataDir, sim));
      // The claims of claims serve: through the running server's table, or its files when it is stopped.
      const served = await eraseServed(dataDir, target, now);
      if (o.json) process.stdout.write(`${JSON.stringify({ ...result, served: served ?? null }, null, 2)}\n`);
      if (result.runs.length === 0 && (served?.claims.length ?? 0) === 0) {
        if (!o.json)
          process.stderr.write(
            `no claim of ${who} in the ${listRuns(dataDir).length} recorded run(s) of ${dataDir}${served ? " nor among the claims of claims serve" : ""}: nothing erased\n`,
          );
        process.exitCode = 1;
        return;
      }
      if (!o.json) process.stdout.write(describe(result, served, who));
    });
  program
    .command("export")
    .description(
      "write everything the data directory holds about a customer (GDPR Art. 15) as JSON: their claims, personal data, audit and bus events",
    )
    .requiredOption("--customer <id>", "the customer (the orders' customer_id)")
    .option("--out <path>", "write the JSON to this file (default: stdout)")
    .option("--data-dir <path>", "the data directory (default $CLAIMS_DATA_DIR or .claims)")
    .action(async (o: { customer: string; out?: string; dataDir?: string }) => {
      const dataDir = dataDirFrom(o.dataDir);
      const fromRuns = await exportCustomer(dataDir, o.customer, new Date());
      const exported = { ...fromRuns, claims: [...fromRuns.claims, ...(await exportServed(dataDir, o.customer))] };
      const json = `${JSON.stringify(exported, null, 2)}\n`;
      if (o.out) {
        writeFileSync(resolve(o.out), json, { mode: 0o600 });
        process.stderr.write(
          `${exported.claims.length} claim(s) of customer ${o.customer} written to ${resolve(o.out)}\n`,
        );
      } else process.stdout.write(json);
      if (exported.claims.length === 0) {
        process.stderr.write(`no claim of customer ${o.customer} in ${dataDir}\n`);
        process.exitCode = 1;
      }
    });
}
