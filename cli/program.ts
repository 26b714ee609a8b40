// The `claims` program (docs/cli.md): its commands (cli/registry.ts: only the module of the command that runs is
// imported) and how a failure ends (exit 2 and a message, never a stack trace unless CLAIMS_DEBUG asks). cli/main.ts
// runs it for bin/claims.mjs; tests run it in their own process (cli/cli-in-process.test-kit.ts).
import { readFileSync } from "node:fs";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { ClaimsError } from "../core/errors.ts";
import { SourceFileError } from "../core/claim/errors.ts";
import { registerCommands } from "./registry.ts";

/** The package's version, as `claims --version` prints it. */
const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string })
  .version;

/** Runs `claims ARGS` (the arguments after the command's name): its output written, its exit code set on process.exitCode. */
export async function runCli(args: readonly string[]): Promise<void> {
  const program = new Command()
    .name("claims")
    .description("Claims Crew: an LLM crew proposes refunds, a deterministic kernel decides.")
    .version(VERSION, "-V, --version", "print the version")
    .showHelpAfterError("(run claims --help for usage)")
    .exitOverride();
  /** With --json, errors are also printed on stdout as `{ error: { code, message, issues? } }` (the HTTP API's shape). */
  const printJsonError = (code: string, message: string, issues?: unknown[]) => {
    if (args.includes("--json"))
      process.stdout.write(`${JSON.stringify({ error: { code, message, ...(issues ? { issues } : {}) } }, null, 2)}\n`);
  };
  try {
    await registerCommands(program, args);
    await program.parseAsync([...args], { from: "user" });
  } catch (e) {
    process.exitCode = 2;
    if (e instanceof CommanderError) {
      // commander has printed the message (or the help); usage errors exit 2, help and version 0.
      process.exitCode = e.exitCode === 0 ? 0 : 2;
      if (e.exitCode !== 0) printJsonError("CLI_USAGE", e.message.replace(/^error: /, ""));
    } else if (e instanceof SourceFileError) {
      process.stderr.write(`${e.message}\n`);
      printJsonError(e.code, `${e.file} is invalid`, e.issues);
    } else if (e instanceof ClaimsError || e instanceof InvalidArgumentError) {
      // A known failure (bad usage, a refused agent, a stack that could not start): its message says it all.
      const cause = e.cause instanceof Error && !e.message.includes(e.cause.message) ? ` (${e.cause.message})` : "";
      process.stderr.write(`claims: ${e.message}${cause}\n`);
      printJsonError(e instanceof ClaimsError ? e.code : "CLI_USAGE", `${e.message}${cause}`);
    } else {
      // Not expected: still no stack trace unless asked for.
      const error = e instanceof Error ? e : new Error(String(e));
      process.stderr.write(
        `claims: ${error.message}${process.env.CLAIMS_DEBUG ? `\n${error.stack ?? ""}` : "\n  (set CLAIMS_DEBUG=1 to see where it happened)"}\n`,
      );
      printJsonError("INTERNAL", error.message);
    }
  }
}
