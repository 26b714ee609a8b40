// `claims deploy-check --stage <stage> [--region R] [--json]` (infra/README.md#first-deploy): reads the account's
// quotas the deploy relies on — Lambda's concurrency (lambda:GetAccountSettings, lambda:GetFunctionConcurrency) and
// EventBridge's limits (servicequotas:ListServiceQuotas, ListAWSDefaultServiceQuotas) — and says, for the settings
// in this shell's environment (the same variables `sst deploy` reads), what the stage will get. Exit 0: deployable
// (warnings are limits it will run into); 1: something stops the deploy, named with what to do; 2: the account
// could not be read. Nothing is created or changed.
import { LambdaClient } from "@aws-sdk/client-lambda";
import { ServiceQuotasClient } from "@aws-sdk/client-service-quotas";
import { quotaNamed, readLambdaConcurrency, readServiceQuotas } from "../adapters/aws/account-quotas.ts";
import { AccountReadError } from "../adapters/aws/errors.ts";
import { assessAccount, capacitySettingsFrom, reservations } from "../app/capacity.ts";
import type { AccountQuotas, CapacityFinding } from "../app/capacity.ts";
import { deployedFunctionName } from "../app/manifest.ts";
import type { FunctionKey } from "../app/manifest.ts";
import { CliError } from "./errors.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The limits the app relies on that no API publishes: printed with every check, so the operator checks them once. */
export const UNREADABLE_LIMITS = [
  "SQS: fixed limits, not in Service Quotas — 120,000 in-flight messages per standard queue, 20,000 per FIFO queue, 256 KB per message; FIFO high-throughput mode must exist in the region (it does in every commercial region today)",
  "API Gateway: the account's 10,000 requests a second (burst 5,000) per region are shared by every API there",
  "the LLM provider's rate limit: LLM_MAX_CONCURRENCY × 2 queues is the most calls in flight",
];

/** What the check found, and the exit code it ends with. */
export interface DeployCheckResult {
  readonly quotas: AccountQuotas;
  readonly findings: CapacityFinding[];
  readonly exitCode: 0 | 1;
}

/** Reads the account with the given clients and assesses it for the settings of `env` on `stage`. */
export async function runDeployCheck(options: {
  stage: string;
  region: string;
  env: Env;
  lambda: Pick<LambdaClient, "send">;
  serviceQuotas: Pick<ServiceQuotasClient, "send">;
}): Promise<DeployCheckResult> {
  const settings = capacitySettingsFrom(options.env);
  const names = (Object.keys(reservations(settings.payments)) as FunctionKey[]).map((key) =>
    deployedFunctionName(options.stage, key),
  );
  const lambda = await readLambdaConcurrency(options.lambda, names);
  const events = await readServiceQuotas(options.serviceQuotas, "events");
  const quotas: AccountQuotas = {
    region: options.region,
    lambda,
    putEventsPerSecond: quotaNamed(events, /^PutEvents throttle limit/i),
    invocationsPerSecond: quotaNamed(events, /^Invocations throttle limit/i),
    rulesPerBus: quotaNamed(events, /^(number of )?rules( per event bus)?$/i),
  };
  const findings = assessAccount(settings, quotas);
  return { quotas, findings, exitCode: findings.some((f) => f.level === "stop") ? 1 : 0 };
}

/** The human-readable report of a check. */
export function formatDeployCheck(stage: string, result: DeployCheckResult): string {
  const { quotas } = result;
  const lines = [
    `claims deploy-check: stage ${stage} in ${quotas.region}: Lambda ${quotas.lambda.concurrentExecutions} concurrent executions (${quotas.lambda.unreservedConcurrentExecutions} unreserved; this stage reserves ${quotas.lambda.reservedByThisStage} today)`,
    ...result.findings.map((f) => `  ${f.level.padEnd(4)}  ${f.quota}: ${f.message}`),
    "  not readable by API, check once yourself:",
    ...UNREADABLE_LIMITS.map((l) => `    - ${l}`),
    result.exitCode === 0
      ? "deployable: nothing above stops `sst deploy`"
      : "NOT deployable as configured: fix what says `stop` first (nothing was created)",
  ];
  return lines.join("\n");
}

/** The region of the check: --region, else AWS_REGION / AWS_DEFAULT_REGION (as the deploy resolves it). */
function regionFrom(option: string | undefined, env: Env): string {
  const region = option ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (!region)
    throw new CliError(
      "no region: pass --region or set AWS_REGION (the region you deploy the stage to, infra/README.md#region)",
    );
  return region;
}

/** `claims deploy-check`'s action (cli/aws-commands.ts registers it; this module loads only when it runs). */
export async function deployCheckCommand(opts: { stage: string; region?: string; json?: boolean }): Promise<void> {
  const region = regionFrom(opts.region, process.env);
  const lambda = new LambdaClient({ region, maxAttempts: 2 });
  const serviceQuotas = new ServiceQuotasClient({ region, maxAttempts: 2 });
  try {
    const result = await runDeployCheck({ stage: opts.stage, region, env: process.env, lambda, serviceQuotas });
    console.log(opts.json ? JSON.stringify(result, null, 2) : formatDeployCheck(opts.stage, result));
    process.exitCode = result.exitCode;
  } catch (error) {
    if (!(error instanceof AccountReadError)) throw error;
    throw new CliError(
      `cannot read the account's quotas (${error.message}): run with the credentials you deploy with; they need lambda:GetAccountSettings, lambda:GetFunctionConcurrency and servicequotas:ListServiceQuotas`,
    );
  } finally {
    lambda.destroy();
    serviceQuotas.destroy();
  }
}
