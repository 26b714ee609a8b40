// The `claims` commands, one row each (issue 36: a CLI that starts at once): the line `claims --help` shows for
// it and the module that registers it. Only the module of the command that runs is imported; every other command
// is a stub with its name and line, so `claims --help`, `--version` and a typo's "did you mean" load nothing heavy.
// registry.test.ts checks each row against what its module registers, and docs/cli.md against the rows.
import { Help } from "commander";
import type { Command } from "commander";

/** A module's registration of its command(s) on the program. */
export type Registration = (program: Command) => void;

/** One command of `claims`. */
export interface CommandEntry {
  readonly name: string;
  /** The command as `claims --help` lists it: name, [options], arguments (commander's own term for it). */
  readonly term: string;
  /** Its description, as its module registers it. */
  readonly description: string;
  /** Imports its module and returns its registration (modules that register several share one loader). */
  readonly load: () => Promise<Registration>;
}

const aws = async (): Promise<Registration> => (await import("./aws-commands.ts")).registerAwsCommands;
const reports = async (): Promise<Registration> => (await import("./command-report.ts")).registerReportCommands;
const customerData = async (): Promise<Registration> =>
  (await import("./command-customer-data.ts")).registerCustomerDataCommands;
const configs = async (): Promise<Registration> => (await import("./command-config.ts")).registerConfigCommands;

/** Every command of `claims`, in the order `claims --help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "batch",
    term: "batch [options] [scenarios]",
    description: "run the scenarios through the full pipeline and compare every verdict with the expected one",
    load: async () => (await import("./command-batch.ts")).registerBatchCommand,
  },
  {
    name: "serve",
    term: "serve [options]",
    description:
      "start the local stack and the HTTP API (claims, reviews, reports, health) until interrupted; tokens from CLAIMS_API_TOKEN and CLAIMS_REVIEWER_TOKEN, or generated and printed",
    load: async () => (await import("./command-serve.ts")).registerServeCommand,
  },
  { name: "config", term: "config", description: "configuration and scenario files", load: configs },
  {
    name: "load-orders",
    term: "load-orders [options]",
    description:
      "write the orders of a file you name into a deployed table (the kernel's context store); uses your AWS credentials",
    load: configs,
  },
  {
    name: "report",
    term: "report [options]",
    description: "regenerate the HTML audit report of a recorded run, or of the claims sent to claims serve",
    load: reports,
  },
  {
    name: "replay",
    term: "replay [options] <claim-id>",
    description:
      "re-run a recorded decision from its audit events (no model calls) and check it reproduces byte for byte; exit 0 IDENTICAL, 1 DIFFERENT, 3 INCOMPLETE",
    load: reports,
  },
  {
    name: "review",
    term: "review",
    description:
      "list and decide human reviews through the API, as the reviewer whose token you use (CLAIMS_REVIEWER_TOKEN or --token-file)",
    load: async () => (await import("./review.ts")).registerReviewCommands,
  },
  {
    name: "reviewers",
    term: "reviewers",
    description: "name the people who decide reviews locally: the reviewers file claims serve reads (--reviewers)",
    load: async () => (await import("./reviewers.ts")).registerReviewersCommands,
  },
  {
    name: "list",
    term: "list [options]",
    description:
      "list claims newest first through the API (GET /claims), with the intake token (CLAIMS_API_TOKEN or --token-file)",
    load: async () => (await import("./list.ts")).registerListCommand,
  },
  {
    name: "backtest",
    term: "backtest [options]",
    description:
      "re-decide the served claims (or, with --simulation-id, a demo run) under a candidate policy and show what would change (flips, refunds, reviews); read-only, no model calls",
    load: async () => (await import("./backtest.ts")).registerBacktestCommand,
  },
  {
    name: "reconcile",
    term: "reconcile [options]",
    description:
      "every authorised refund with its settlement (settled, pending, failed); exit 1 when one failed or is pending too long",
    load: async () => (await import("./reconcile.ts")).registerReconcileCommand,
  },
  {
    name: "erase",
    term: "erase [options]",
    description:
      "erase a customer's personal data (GDPR Art. 17) in the data directory's runs and the claims of claims serve (running or stopped): destroy their claims' keys, record the erasure in the audit, rewrite the reports; decisions stay replayable",
    load: customerData,
  },
  {
    name: "export",
    term: "export [options]",
    description:
      "write everything the data directory holds about a customer (GDPR Art. 15) as JSON: their claims, personal data, audit and bus events",
    load: customerData,
  },
  {
    name: "deploy-check",
    term: "deploy-check [options]",
    description:
      "read the AWS account's quotas the deploy relies on (Lambda concurrency, EventBridge limits) and say what the stage gets; exit 1 if something would stop the deploy",
    load: aws,
  },
  {
    name: "teardown",
    term: "teardown [options]",
    description:
      "delete a deployed stage in the order that works (others' bus rules, the pool's deletion protection, sst remove, the retained table, the secrets), after printing what it deletes and asking",
    load: aws,
  },
  {
    name: "reviewer-login",
    term: "reviewer-login [options]",
    description:
      "sign a reviewer in to the app's Cognito pool (SRP and TOTP; first sign-in sets a password and the authenticator) and print the ID token",
    load: aws,
  },
];

/** The command the arguments after `claims` run (`claims help X` is X's help), if they name one. */
export function invokedCommand(args: readonly string[]): CommandEntry | undefined {
  const words = args.filter((a) => !a.startsWith("-"));
  const name = words[0] === "help" ? words[1] : words[0];
  return COMMANDS.find((c) => c.name === name);
}

/**
 * Registers every command on `program`: in full those of the module of the command `args` run, or of every
 * module with `all` (tests, docs); a stub (name and help line, no options, nothing imported) for each other.
 */
export async function registerCommands(program: Command, args: readonly string[], all = false): Promise<void> {
  const invoked = invokedCommand(args);
  const loaders = all ? [...new Set(COMMANDS.map((c) => c.load))] : invoked ? [invoked.load] : [];
  const registrations = new Map(await Promise.all(loaders.map(async (load) => [load, await load()] as const)));
  const stubs = new Map<Command, string>();
  for (const entry of COMMANDS) {
    if (program.commands.some((c) => c.name() === entry.name)) continue;
    const register = registrations.get(entry.load);
    if (register) {
      registrations.delete(entry.load);
      register(program);
    } else stubs.set(program.command(entry.name).description(entry.description), entry.term);
  }
  const help = new Help();
  program.configureHelp({ subcommandTerm: (cmd) => stubs.get(cmd) ?? help.subcommandTerm(cmd) });
}
