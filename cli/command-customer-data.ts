// `claims erase` and `claims export` (docs/customer-data.md): a customer's erasure and access over the data directory.
// Their registration only: the runs (cli/customer-data-run.ts) are imported when one runs, so their help loads nothing heavy.
import type { Command } from "commander";
import type { EraseOptions, ExportOptions } from "./customer-data-run.ts";

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
    .option(
      "--table <name>",
      "a deployed stage's table instead (its `table` output; your AWS credentials): needs no KMS call",
    )
    .option("--region <region>", "with --table: the AWS region (default: your AWS configuration)")
    .option("--endpoint <url>", "with --table: a DynamoDB endpoint (e.g. a local emulator)")
    .action(async (o: EraseOptions) => (await import("./customer-data-run.ts")).runErase(o));
  program
    .command("export")
    .description(
      "write everything the data directory holds about a customer (GDPR Art. 15) as JSON: their claims, personal data, audit and bus events",
    )
    .requiredOption("--customer <id>", "the customer (the orders' customer_id)")
    .option("--out <path>", "write the JSON to this file (default: stdout)")
    .option("--data-dir <path>", "the data directory (default $CLAIMS_DATA_DIR or .claims)")
    .option("--table <name>", "a deployed stage's table instead (its `table` output; your AWS credentials)")
    .option("--kms-key <id>", "with --table: the stage's KMS key of personal data (its `personalDataKey` output)")
    .option("--region <region>", "with --table: the AWS region (default: your AWS configuration)")
    .option("--endpoint <url>", "with --table: a DynamoDB endpoint (e.g. a local emulator)")
    .action(async (o: ExportOptions) => (await import("./customer-data-run.ts")).runExport(o));
}
