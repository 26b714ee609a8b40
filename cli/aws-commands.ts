// The commands that talk to a deployed stage's AWS account (infra/README.md): `claims deploy-check`,
// `claims teardown`, `claims reviewer-login`. Registered here without their SDK clients, which load only when one
// of them runs, so every other command starts as fast as before.
import type { Command } from "commander";

/** Registers the AWS account commands. */
export function registerAwsCommands(program: Command): void {
  program
    .command("deploy-check")
    .description(
      "read the AWS account's quotas the deploy relies on (Lambda concurrency, EventBridge limits) and say what the stage gets; exit 1 if something would stop the deploy",
    )
    .requiredOption("--stage <stage>", "the stage you will deploy")
    .option("--region <region>", "the region (default: AWS_REGION)")
    .option("--json", "print the findings as JSON")
    .action(async (opts: { stage: string; region?: string; json?: boolean }) =>
      (await import("./deploy-check.ts")).deployCheckCommand(opts),
    );
  program
    .command("teardown")
    .description(
      "delete a deployed stage in the order that works (others' bus rules, the pool's deletion protection, sst remove, the retained table, the secrets), after printing what it deletes and asking",
    )
    .requiredOption("--stage <stage>", "the stage to delete")
    .option("--region <region>", "the stage's region (default: AWS_REGION)")
    .option("--yes", "do not ask (for scripts: the plan is still printed)")
    .option("--keep-table", "keep the table SST retains in production")
    .option("--no-backup", "delete the retained table without an on-demand backup first")
    .action(async (opts: { stage: string; region?: string; yes?: boolean; keepTable?: boolean; backup: boolean }) =>
      (await import("./teardown.ts")).teardownCommand(opts),
    );
  program
    .command("reviewer-login")
    .description(
      "sign a reviewer in to the app's Cognito pool (SRP and TOTP; first sign-in sets a password and the authenticator) and print the ID token",
    )
    .requiredOption("--pool <id>", "the user pool id (output reviewerUserPool)")
    .requiredOption("--client <id>", "the app client id (output reviewerClient)")
    .requiredOption("--username <email>", "the reviewer's email")
    .option("--region <region>", "the pool's region (default: from the pool id)")
    .option("--quiet", "print only the token")
    .action(async (opts: { pool: string; client: string; username: string; region?: string; quiet?: boolean }) =>
      (await import("./reviewer-login.ts")).reviewerLoginCommand(opts),
    );
}
