// `claims erase` and `claims export`'s runs (docs/customer-data.md). Imported only when one of them runs, so their help
// loads nothing heavy (cli/command-customer-data.ts registers them).
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { CliError } from "./errors.ts";
import { eraseInRuns, exportCustomer } from "./customer-data.ts";
import type { ErasureResult, ErasureTarget } from "./customer-data.ts";
import { writeReportFor } from "./report-run.ts";
import { eraseServed, exportServed } from "./customer-data-served.ts";
import { eraseInTable, exportFromTable } from "./customer-data-aws.ts";
import type { DeployedTable } from "./customer-data-aws.ts";
import type { ServedErasure } from "./customer-data-served.ts";
import type { DestroyOutcome } from "../pipeline/personal-data.ts";
import { dataDirFrom, listRuns } from "./run-store.ts";

function describe(result: ErasureResult, served: ServedErasure | undefined, who: string, where = "served"): string {
  const state = (o: DestroyOutcome) => (o === "already_erased" ? "erased before" : "erased");
  const lines = result.runs.flatMap((r) =>
    r.claims.map((c) => `  ${c.claim_id} (run ${r.simulationId}): ${state(c.outcome)}\n`),
  );
  for (const c of served?.claims ?? [])
    lines.push(
      `  ${c.claim_id} (${where}): ${state(c.outcome)}${c.in_flight && c.outcome !== "already_erased" ? "; in flight: it goes on to its decision, its words erased" : ""}\n`,
    );
  const erased = result.erased.length + (served?.claims.filter((c) => c.outcome !== "already_erased").length ?? 0);
  const already = result.already.length + (served?.claims.filter((c) => c.outcome === "already_erased").length ?? 0);
  const head =
    erased > 0
      ? `${who}: personal data of ${erased} claim(s) erased; their decisions stay provable (claims replay)\n`
      : `${who}: already erased (${already} claim(s)); nothing left to erase\n`;
  return head + lines.join("");
}

/** Runs `claims erase`. */
export async function runErase(o: EraseOptions): Promise<void> {
  if ((o.customer === undefined) === (o.claim === undefined))
    throw new CliError("give exactly one of --customer <id> or --claim <id>");
  const target: ErasureTarget = o.customer !== undefined ? { customerId: o.customer } : { claimId: o.claim! };
  const who = o.customer !== undefined ? `customer ${o.customer}` : `claim ${o.claim}`;
  const now = new Date();
  if (o.table !== undefined || o.region !== undefined || o.endpoint !== undefined)
    return eraseDeployed(checkedTable(o), target, who, now, o.json === true);
  const dataDir = dataDirFrom(o.dataDir);
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
}

/** Runs `claims export`. */
export async function runExport(o: ExportOptions): Promise<void> {
  const deployed =
    o.table !== undefined || o.kmsKey !== undefined || o.region !== undefined || o.endpoint !== undefined;
  if (deployed && o.kmsKey === undefined)
    throw new CliError(
      "--table needs --kms-key <id> (the stage's `personalDataKey` output) to open the customer's data",
    );
  const exported = deployed
    ? await exportDeployed(checkedTable(o), o.kmsKey!, o.customer)
    : await exportLocal(dataDirFrom(o.dataDir), o.customer);
  const json = `${JSON.stringify(exported, null, 2)}\n`;
  if (o.out) {
    writeFileSync(resolve(o.out), json, { mode: 0o600 });
    process.stderr.write(`${exported.claims.length} claim(s) of customer ${o.customer} written to ${resolve(o.out)}\n`);
  } else process.stdout.write(json);
  if (exported.claims.length === 0) {
    process.stderr.write(
      `no claim of customer ${o.customer} in ${deployed ? `table ${o.table}` : dataDirFrom(o.dataDir)}\n`,
    );
    process.exitCode = 1;
  }
}

export interface EraseOptions extends TableOptions {
  customer?: string;
  claim?: string;
  json?: boolean;
}

export interface ExportOptions extends TableOptions {
  customer: string;
  out?: string;
  kmsKey?: string;
}

export interface TableOptions {
  dataDir?: string;
  table?: string;
  region?: string;
  endpoint?: string;
}

/** The deployed table of `--table`, refused with a data directory or without a table. */
function checkedTable(o: TableOptions): DeployedTable {
  if (o.dataDir !== undefined) throw new CliError("give --data-dir or --table, not both");
  if (o.table === undefined) throw new CliError("--region, --endpoint and --kms-key go with --table <name>");
  return { table: o.table, region: o.region, endpoint: o.endpoint };
}

/** `claims erase --table`: the same answers as over a data directory (none found: exit 1; again: already erased). */
async function eraseDeployed(t: DeployedTable, target: ErasureTarget, who: string, now: Date, json: boolean) {
  const erased = await eraseInTable(t, target, now);
  const none: ErasureResult = { runs: [], erased: [], already: [] };
  if (json) process.stdout.write(`${JSON.stringify({ ...none, served: null, table: erased }, null, 2)}\n`);
  if (erased.claims.length === 0) {
    if (!json) process.stderr.write(`no claim of ${who} in table ${t.table}: nothing erased\n`);
    process.exitCode = 1;
    return;
  }
  if (!json) process.stdout.write(describe(none, erased, who, `table ${t.table}`));
}

async function exportLocal(dataDir: string, customer: string) {
  const fromRuns = await exportCustomer(dataDir, customer, new Date());
  return { ...fromRuns, claims: [...fromRuns.claims, ...(await exportServed(dataDir, customer))] };
}

async function exportDeployed(t: DeployedTable, kmsKey: string, customer: string) {
  const claims = await exportFromTable(t, kmsKey, customer);
  return { customer_id: customer, exported_at: new Date().toISOString(), table: t.table, claims };
}
