// `claims report` and `claims replay` (docs/cli.md): a recorded run's or the served claims' report, one decision replayed.
// Their registration only: the runs (cli/report-run.ts) are imported when one runs, so their help loads nothing heavy.
import type { Command } from "commander";
import type { ReplayOptions, ReportOptions } from "./report-run.ts";

export function registerReportCommands(program: Command): void {
  program
    .command("report")
    .description("regenerate the HTML audit report of a recorded run, or of the claims sent to claims serve")
    .option("--simulation-id <id>", "the run or the served simulation (default: the latest run)")
    .option("--served", "the claims sent to claims serve without a simulation_id")
    .option(
      "--out <path>",
      "where to write the report (default: the run's folder; served claims: <data-dir>/served/report.html)",
    )
    .option("--data-dir <path>", "where runs and the served store are kept (default $CLAIMS_DATA_DIR or .claims)")
    .action(async (o: ReportOptions) => (await import("./report-run.ts")).runReport(o));

  program
    .command("replay")
    .description(
      "re-run a recorded decision from its audit events (no model calls) and check it reproduces byte for byte; exit 0 IDENTICAL, 1 DIFFERENT, 3 INCOMPLETE",
    )
    .argument("<claim-id>", "the claim to replay")
    .option("--data-dir <path>", "where runs are kept (default $CLAIMS_DATA_DIR or .claims)")
    .option("--json", "print the replay result as JSON")
    .action(async (claimId: string, o: ReplayOptions) => (await import("./report-run.ts")).runReplay(claimId, o));
}
