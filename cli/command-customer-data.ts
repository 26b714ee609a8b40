// `claims erase` and `claims export` (docs/customer-data.md): a customer's erasure and access over the data directory.
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { CliError } from "./errors.ts";
import { eraseInRuns, exportCustomer } from "./customer-data.ts";
import type { ErasureResult, ErasureTarget } from "./customer-data.ts";
import { writeReportFor } from "./command-report.ts";
import { dataDirFrom, listRuns } from "./run-store.ts";

/** What `claims erase` says of the claims served by `claims serve` (not sealed yet: docs/customer-data.md). */
const SERVED_NOTE =
  "note: the claims served by claims serve (store/) are not covered by claims erase yet (docs/customer-data.md)\n";

function describe(result: ErasureResult, who: string): string {
  const lines = result.runs.flatMap((r) =>
    r.claims.map(
      (c) =>
        `  ${c.claim_id} (run ${r.simulationId}): ${c.outcome === "already_erased" ? "erased before" : "erased"}\n`,
    ),
  );
  const head =
    result.erased.length > 0
      ? `${who}: personal data of ${result.erased.length} claim(s) erased; their decisions stay provable (claims replay)\n`
      : `${who}: already erased (${result.already.length} claim(s)); nothing left to erase\n`;
  return head + lines.join("");
}

/** Registers `claims erase` and `claims export`. */
export function registerCustomerDataCommands(program: Command): void {
  program
    .command("erase")
    .description(
      "erase a customer's personal data (GDPR Art. 17) in the data directory's runs: destroy their claims' keys, record the erasure in the audit, rewrite the reports; decisions stay replayable",
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
      const result = await eraseInRuns(dataDir, target, new Date(), (sim) => writeReportFor(dataDir, sim));
      if (existsSync(join(dataDir, "store"))) process.stderr.write(SERVED_NOTE);
      if (o.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      if (result.runs.length === 0) {
        if (!o.json)
          process.stderr.write(
            `no claim of ${who} in the ${listRuns(dataDir).length} recorded run(s) of ${dataDir}: nothing erased\n`,
          );
        process.exitCode = 1;
        return;
      }
      if (!o.json) process.stdout.write(describe(result, who));
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
      const exported = await exportCustomer(dataDir, o.customer, new Date());
      const json = `${JSON.stringify(exported, null, 2)}\n`;
      if (o.out) {
        writeFileSync(resolve(o.out), json, { mode: 0o600 });
        process.stderr.write(
          `${exported.claims.length} claim(s) of customer ${o.customer} written to ${resolve(o.out)}\n`,
        );
      } else process.stdout.write(json);
      if (existsSync(join(dataDir, "store")))
        process.stderr.write(SERVED_NOTE.replace("claims erase", "claims export"));
      if (exported.claims.length === 0) {
        process.stderr.write(`no claim of customer ${o.customer} in ${dataDir}\n`);
        process.exitCode = 1;
      }
    });
}
