// `claims batch` (docs/cli.md): the scenarios through the full pipeline, every verdict compared with the expected one.
// Its registration only: the run (cli/batch-run.ts) is imported when the command runs, so its help loads nothing heavy.
import type { Command } from "commander";
import { DEFAULT_CONFIG, DEFAULT_SCENARIOS, parseNow, parseSeconds } from "./options.ts";
import type { BatchOptions } from "./batch-run.ts";

export function registerBatchCommand(program: Command): void {
  program
    .command("batch")
    .description("run the scenarios through the full pipeline and compare every verdict with the expected one")
    .argument("[scenarios]", "scenario file", DEFAULT_SCENARIOS)
    .option("--config <path>", "configuration file", DEFAULT_CONFIG)
    .option(
      "--now <iso>",
      "the instant the whole run is decided at (ISO timestamp; default: when the run starts)",
      parseNow,
    )
    .option("--json", "print one JSON array of verdicts on stdout (logs go to stderr)")
    .option("--data-dir <path>", "where runs, audit and reports are kept (default $CLAIMS_DATA_DIR or .claims)")
    .option("--in-process", "run the pipeline in this process over in-memory ports instead of the local stack")
    .option(
      "--claim-timeout <seconds>",
      "how long to wait for one claim before it goes to NEEDS_REVIEW (default: derived from LLM_TIMEOUT_MS)",
      parseSeconds,
    )
    .option(
      "--keep-going",
      "when the model's endpoint check fails, run every row anyway (they end NEEDS_REVIEW LLM_UNREACHABLE) instead of stopping",
    )
    .action(async (scenarios: string, o: BatchOptions) =>
      (await import("./batch-run.ts")).runBatchCommand(scenarios, o),
    );
}
