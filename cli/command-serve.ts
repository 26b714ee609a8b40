// `claims serve` (docs/cli.md, docs/local-stack.md): the local stack and the HTTP API until interrupted.
// Its registration only: the run (cli/serve-run.ts) is imported when the command runs, so its help loads nothing heavy.
import type { Command } from "commander";
import { DEFAULT_CONFIG, parseMaxOpen, parseNow, parsePort } from "./options.ts";
import type { ServeOptions } from "./serve-run.ts";

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description(
      "start the local stack and the HTTP API (claims, reviews, reports, health) until interrupted; tokens from CLAIMS_API_TOKEN and CLAIMS_REVIEWER_TOKEN, or generated and printed",
    )
    .option("--port <port>", "port to listen on (0 = any free port)", parsePort, 3000)
    .option("--host <host>", "address to listen on (anything but loopback exposes the API to the network)", "127.0.0.1")
    .option("--config <path>", "configuration file", DEFAULT_CONFIG)
    .option(
      "--data-dir <path>",
      "where the claims, ledger, reviews and audit (store/) and events.jsonl are kept across restarts (default $CLAIMS_DATA_DIR or .claims)",
    )
    .option(
      "--max-open <n>",
      "answer 429 with Retry-After while this many claims are open (default $CLAIMS_MAX_OPEN or 200; 0 = no bound)",
      parseMaxOpen,
    )
    .option("--now <iso>", "freeze the clock (ISO timestamp); step timeouts never come due on a frozen clock", parseNow)
    .option(
      "--reviewers <file>",
      "the reviewers file: one token per named reviewer (default $CLAIMS_REVIEWERS_FILE; without one, CLAIMS_REVIEWER_TOKEN is the one reviewer `reviewer`)",
    )
    .action(async (o: ServeOptions) => (await import("./serve-run.ts")).runServe(o));
}
