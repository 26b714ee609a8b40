// `claims teardown --stage <stage> [--region R] [--yes] [--keep-table] [--no-backup]` (infra/README.md#teardown):
// deletes a deployed stage in the order that works, after printing what it will delete and asking.
//   1. the rules others added to the stage's bus, with their targets (a bus with rules cannot be deleted; the
//      app's own rules are named claims-crew-<stage>-<rule> and go with the stage);
//   2. the reviewers' user pool's deletion protection (production: `sst remove` cannot delete a protected pool);
//   3. `sst remove --stage <stage>`, with the stage's `protect` lifted for that one command
//      (CLAIMS_TEARDOWN_STAGE=<stage>, read by sst.config.ts);
//   4. the table SST retains (production: removal "retain"): an on-demand backup first (unless --no-backup),
//      deletion protection off, deleted (unless --keep-table);
//   5. the stage's secrets (`sst secret remove`).
// What survives it, on purpose: that backup, SST's sourcemaps in its own asset bucket, and the custom metrics
// (CloudWatch keeps them 15 months and has no delete).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline/promises";
import {
  CognitoIdentityProviderClient,
  DescribeUserPoolCommand,
  ListUserPoolsCommand,
  UpdateUserPoolCommand,
} from "@aws-sdk/client-cognito-identity-provider";
import type { UpdateUserPoolCommandInput } from "@aws-sdk/client-cognito-identity-provider";
import {
  CreateBackupCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTableCommand,
} from "@aws-sdk/client-dynamodb";
import {
  DeleteRuleCommand,
  EventBridgeClient,
  ListRulesCommand,
  ListTargetsByRuleCommand,
  RemoveTargetsCommand,
} from "@aws-sdk/client-eventbridge";
import { APP_NAME, appRuleNames, LINKS, reviewerPoolName, stageBusName } from "../app/manifest.ts";
import { ORDER_SOURCE_SECRET_LINKS } from "../app/order-source.ts";
import { PROVIDER_SECRET_LINKS } from "../app/payment-provider.ts";
import { CliError } from "./errors.ts";

/** The SDK clients a teardown uses (anything with their `send`). */
export interface TeardownClients {
  readonly events: Pick<EventBridgeClient, "send">;
  readonly cognito: Pick<CognitoIdentityProviderClient, "send">;
  readonly dynamo: Pick<DynamoDBClient, "send">;
}

/** Runs `sst <args>` with extra environment; resolves its exit code. */
export type SstRunner = (args: readonly string[], env: Readonly<Record<string, string>>) => Promise<number>;

/** Every secret the app may declare on a stage (the ReviewerToken is local only). */
export const STAGE_SECRETS = [
  LINKS.apiToken,
  LINKS.llmApiKey,
  ...ORDER_SOURCE_SECRET_LINKS,
  ...PROVIDER_SECRET_LINKS,
] as const;

/** What a teardown of `stage` will delete, as found in the account. */
export interface TeardownPlan {
  readonly stage: string;
  readonly bus: string;
  /** Rules on the bus the app did not make: removed first, each with its targets. */
  readonly othersRules: readonly { readonly name: string; readonly targetIds: readonly string[] }[];
  /** The reviewers' pool (absent with your own issuer, or already gone). */
  readonly pool?: { readonly id: string; readonly name: string; readonly protected: boolean };
  /** The stage's table (SST retains it in production). */
  readonly table?: { readonly name: string; readonly protected: boolean };
  readonly production: boolean;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The table SST names for the stage's `Table` (`claims-crew-<stage>-TableTable-<random>`). */
export function stageTablePattern(stage: string): RegExp {
  return new RegExp(`^${escape(APP_NAME)}-${escape(stage)}-TableTable-[A-Za-z0-9]+$`);
}

/** Finds what a teardown of `stage` deletes: the bus's rules, the reviewers' pool, the table. */
export async function discoverTeardown(stage: string, clients: TeardownClients): Promise<TeardownPlan> {
  const bus = stageBusName(stage);
  const ours = new Set(appRuleNames(stage));
  const othersRules: { name: string; targetIds: string[] }[] = [];
  let token: string | undefined;
  do {
    const page = await clients.events
      .send(new ListRulesCommand({ EventBusName: bus, ...(token ? { NextToken: token } : {}) }))
      .catch((e: unknown) => {
        if ((e as { name?: string }).name === "ResourceNotFoundException") return { Rules: [], NextToken: undefined };
        throw e;
      });
    for (const rule of page.Rules ?? []) {
      if (!rule.Name || ours.has(rule.Name)) continue;
      const targets = await clients.events.send(new ListTargetsByRuleCommand({ Rule: rule.Name, EventBusName: bus }));
      othersRules.push({ name: rule.Name, targetIds: (targets.Targets ?? []).flatMap((t) => (t.Id ? [t.Id] : [])) });
    }
    token = page.NextToken;
  } while (token);

  let pool: TeardownPlan["pool"];
  const poolName = reviewerPoolName(stage);
  let next: string | undefined;
  do {
    const page = await clients.cognito.send(
      new ListUserPoolsCommand({ MaxResults: 60, ...(next ? { NextToken: next } : {}) }),
    );
    const found = (page.UserPools ?? []).find((p) => p.Name === poolName);
    if (found?.Id) {
      const described = await clients.cognito.send(new DescribeUserPoolCommand({ UserPoolId: found.Id }));
      pool = { id: found.Id, name: poolName, protected: described.UserPool?.DeletionProtection === "ACTIVE" };
    }
    next = pool ? undefined : page.NextToken;
  } while (next);

  let table: TeardownPlan["table"];
  const pattern = stageTablePattern(stage);
  let start: string | undefined;
  do {
    const page = await clients.dynamo.send(new ListTablesCommand(start ? { ExclusiveStartTableName: start } : {}));
    const name = (page.TableNames ?? []).find((n) => pattern.test(n));
    if (name) {
      const described = await clients.dynamo.send(new DescribeTableCommand({ TableName: name }));
      table = { name, protected: described.Table?.DeletionProtectionEnabled === true };
    }
    start = table ? undefined : page.LastEvaluatedTableName;
  } while (start);

  return { stage, bus, othersRules, pool, table, production: stage === "production" };
}

/** Options of a teardown. */
export interface TeardownOptions {
  /** Keep the retained table (and take no backup). */
  readonly keepTable: boolean;
  /** Take an on-demand backup of the table before deleting it (default true). */
  readonly backup: boolean;
}

/** The lines a teardown prints before it asks: everything it will delete, in order. */
export function describeTeardown(plan: TeardownPlan, options: TeardownOptions): string[] {
  const lines = [`claims teardown: stage ${plan.stage} — this deletes, in this order:`];
  let n = 0;
  const step = (text: string) => lines.push(`  ${++n}. ${text}`);
  if (plan.othersRules.length > 0)
    step(
      `the rules others added to the bus ${plan.bus}, with their targets: ${plan.othersRules.map((r) => `${r.name} (${r.targetIds.length} target${r.targetIds.length === 1 ? "" : "s"})`).join(", ")}`,
    );
  if (plan.pool?.protected)
    step(`deletion protection of the reviewers' user pool ${plan.pool.name} (${plan.pool.id}): turned off`);
  step(
    `\`sst remove --stage ${plan.stage}\`${plan.production ? " (its protect lifted for this command)" : ""}: the API, functions and their logs, queues and their messages (DLQs too), the bus ${plan.bus} and its rules, alarms, dashboard, topic${plan.pool ? `, the reviewers' pool and every reviewer in it` : ""}${plan.table && !plan.production ? `, the table ${plan.table.name}` : ""}`,
  );
  if (plan.table && plan.production) {
    if (options.keepTable)
      lines.push(`     the table ${plan.table.name} is KEPT (--keep-table): delete it yourself later`);
    else
      step(
        `the retained table ${plan.table.name}: ${options.backup ? "an on-demand backup first (it survives the table), then " : "NO backup (--no-backup), "}deletion protection off, deleted`,
      );
  }
  step(`the stage's secrets: ${STAGE_SECRETS.join(", ")} (those that are set)`);
  lines.push(
    "  Survives on purpose: the table's backup, SST's sourcemaps in its asset bucket, and custom metrics (CloudWatch keeps them 15 months).",
  );
  return lines;
}

/** The pool's settings as UpdateUserPool needs them back (it resets every setting it is not given). */
function keepPoolSettings(pool: Record<string, unknown> | undefined): Partial<UpdateUserPoolCommandInput> {
  const keep = [
    "Policies",
    "LambdaConfig",
    "AutoVerifiedAttributes",
    "VerificationMessageTemplate",
    "MfaConfiguration",
    "DeviceConfiguration",
    "EmailConfiguration",
    "AdminCreateUserConfig",
    "UserPoolAddOns",
    "AccountRecoverySetting",
    "UserPoolTier",
  ];
  return Object.fromEntries(keep.filter((k) => pool?.[k] !== undefined).map((k) => [k, pool?.[k]]));
}

/** Carries out `plan` in order; stops at the first step that fails, saying which. `log` gets one line per step. */
export async function executeTeardown(
  plan: TeardownPlan,
  clients: TeardownClients,
  runSst: SstRunner,
  options: TeardownOptions,
  log: (line: string) => void,
  now: () => Date = () => new Date(),
): Promise<void> {
  for (const rule of plan.othersRules) {
    if (rule.targetIds.length > 0)
      await clients.events.send(
        new RemoveTargetsCommand({ Rule: rule.name, EventBusName: plan.bus, Ids: [...rule.targetIds] }),
      );
    await clients.events.send(new DeleteRuleCommand({ Name: rule.name, EventBusName: plan.bus }));
    log(`removed rule ${rule.name} from ${plan.bus}`);
  }
  if (plan.pool?.protected) {
    const described = await clients.cognito.send(new DescribeUserPoolCommand({ UserPoolId: plan.pool.id }));
    await clients.cognito.send(
      new UpdateUserPoolCommand({
        ...keepPoolSettings(described.UserPool as Record<string, unknown> | undefined),
        UserPoolId: plan.pool.id,
        DeletionProtection: "INACTIVE",
      }),
    );
    log(`turned off deletion protection of ${plan.pool.name}`);
  }
  const removed = await runSst(["remove", "--stage", plan.stage], { CLAIMS_TEARDOWN_STAGE: plan.stage });
  if (removed !== 0)
    throw new CliError(
      `\`sst remove --stage ${plan.stage}\` failed (exit ${removed}); nothing after it was done: fix what it says and run the teardown again`,
    );
  log(`sst remove --stage ${plan.stage}: done`);
  if (plan.table && plan.production && !options.keepTable) {
    if (options.backup) {
      const name = `${plan.table.name.slice(0, 40)}-teardown-${now().toISOString().slice(0, 10)}`;
      const out = await clients.dynamo.send(new CreateBackupCommand({ TableName: plan.table.name, BackupName: name }));
      log(`backup ${name}: ${out.BackupDetails?.BackupArn ?? "created"}`);
    }
    if (plan.table.protected)
      await clients.dynamo.send(
        new UpdateTableCommand({ TableName: plan.table.name, DeletionProtectionEnabled: false }),
      );
    await clients.dynamo.send(new DeleteTableCommand({ TableName: plan.table.name }));
    log(`deleted table ${plan.table.name}`);
  }
  for (const secret of STAGE_SECRETS) {
    // A secret that was never set is "not found": nothing to remove.
    const code = await runSst(["secret", "remove", secret, "--stage", plan.stage], {});
    log(`secret ${secret}: ${code === 0 ? "removed" : "not set"}`);
  }
}

/** `sst` through the repository's own binary, its output on this terminal. */
const runSstCli: SstRunner = (args, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["node_modules/sst/bin/sst.mjs", ...args], {
      stdio: "inherit",
      env: { ...process.env, ...env },
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve(code ?? 1));
  });

/** `claims teardown`'s action (cli/aws-commands.ts registers it; this module loads only when it runs). */
export async function teardownCommand(opts: {
  stage: string;
  region?: string;
  yes?: boolean;
  keepTable?: boolean;
  backup: boolean;
}): Promise<void> {
  const region = opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) throw new CliError("no region: pass --region or set AWS_REGION (the stage's region)");
  const clients = {
    events: new EventBridgeClient({ region }),
    cognito: new CognitoIdentityProviderClient({ region }),
    dynamo: new DynamoDBClient({ region }),
  };
  try {
    const plan = await discoverTeardown(opts.stage, clients);
    const options = { keepTable: opts.keepTable === true, backup: opts.backup };
    console.log(describeTeardown(plan, options).join("\n"));
    if (!opts.yes) {
      if (!process.stdin.isTTY)
        throw new CliError("not a terminal: nothing was deleted; run it in a terminal to confirm, or pass --yes");
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      const answer = (await rl.question(`Type the stage name (${opts.stage}) to delete it: `)).trim();
      rl.close();
      if (answer !== opts.stage) throw new CliError("not confirmed: nothing was deleted");
    }
    await executeTeardown(
      plan,
      clients,
      (args, env) => runSstCli(args, { ...env, AWS_REGION: region }),
      options,
      (l) => console.log(`claims teardown: ${l}`),
    );
    console.log(`claims teardown: stage ${opts.stage} is gone`);
  } finally {
    clients.events.destroy();
    clients.cognito.destroy();
    clients.dynamo.destroy();
  }
}
