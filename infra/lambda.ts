// The one helper that turns a function of app/manifest.ts (handler, memory, timeout, access) into SST
// FunctionArgs (name, runtime, architecture, logging, metrics namespace, the linked resources and their exact
// permissions, reserved concurrency where the account gives it, the policy).
import { ACTIONS, deployedFunctionName, FUNCTIONS, LOGGING, POLICY_FUNCTIONS } from "../app/manifest.ts";
import type { FunctionKey } from "../app/manifest.ts";
import { linksOf, permissionsOf, type Permission } from "./links.ts";
import { metricsNamespace } from "../app/metrics-catalog.ts";
import { ORDER_READERS, orderSourceEnvironment } from "../app/order-source.ts";
import { policyCopyFile } from "./policy.ts";
import { reservesConcurrency } from "./account.ts";
import { settings, type LogRetention } from "./settings.ts";

/** The Lambda name of `key` in this stage (`claims-crew-<stage>-<key>`): fixed, so alarms and the dashboard can name it. */
export function functionName(key: FunctionKey): string {
  return deployedFunctionName($app.stage, key);
}

/** What varies between functions beyond the sizing table. */
interface FunctionOptions {
  readonly environment?: Readonly<Record<string, string>>;
  /** Retries of asynchronous invocations (schedules); queue-triggered functions retry through SQS. */
  readonly retries?: number;
  readonly copyFiles?: readonly { readonly from: string; readonly to?: string }[];
}

/** The resource options a transform may set (a structural subset of Pulumi's CustomResourceOptions). */
interface ReplaceOptions {
  deleteBeforeReplace?: boolean;
}

/** The SST FunctionArgs this app passes for every function (a structural subset, checked by check:infra). */
export interface LambdaArgs {
  name: string;
  handler: string;
  description: string;
  runtime: "nodejs22.x";
  architecture: "arm64";
  memory: `${number} MB`;
  timeout: `${number} seconds`;
  logging: { retention: LogRetention; format: "json" };
  transform: {
    /** Adds Lambda's system log level to the log config SST builds (its `logging` has no such field). */
    function: (args: { loggingConfig?: unknown }, opts: ReplaceOptions) => undefined;
    logGroup: (args: object, opts: ReplaceOptions) => undefined;
    /** Drops AWSLambdaBasicExecutionRole (logs on every log group, and CreateLogGroup): `permissions` has its own group. */
    role: (args: { managedPolicyArns?: unknown }) => undefined;
  };
  link: unknown[];
  permissions: Permission[];
  concurrency?: { reserved: number };
  environment: Record<string, string>;
  retries?: number;
  copyFiles?: { from: string; to?: string }[];
}

/**
 * A function's fixed name, and its log group's, would collide if Pulumi created the replacement before deleting
 * the old one: replace them delete-first.
 */
const deleteFirst = (_args: object, opts: ReplaceOptions) => {
  opts.deleteBeforeReplace = true;
  return undefined;
};

const partition = aws.getPartitionOutput().apply((p: { partition: string }) => p.partition);
const region = aws.getRegionOutput().apply((r: { region: string }) => r.region);
const account = aws.getCallerIdentityOutput().apply((c: { accountId: string }) => c.accountId);

/**
 * Writing its own log group and nothing else. Without logs:CreateLogGroup, an invocation that runs while
 * `sst remove` deletes the stage cannot recreate the group, so the next deploy cannot collide with it.
 */
function logPermission(key: FunctionKey): Permission {
  return {
    actions: [...ACTIONS.ownLogs],
    resources: [$interpolate`arn:${partition}:logs:${region}:${account}:log-group:/aws/lambda/${functionName(key)}:*`],
  };
}

/** FunctionArgs for `key`: Node 22 on Graviton (arm64: ~20% cheaper per GB-second, as fast for this I/O-bound code). */
export function functionArgs(key: FunctionKey, options: FunctionOptions = {}): LambdaArgs {
  const spec: (typeof FUNCTIONS)[FunctionKey] = FUNCTIONS[key];
  const copyFiles = [
    ...((POLICY_FUNCTIONS as readonly FunctionKey[]).includes(key) ? [policyCopyFile] : []),
    ...(options.copyFiles ?? []),
  ];
  // Reserved only when the account can give it (infra/account.ts, CLAIMS_RESERVED_CONCURRENCY).
  const reserved = "reservedConcurrency" in spec && reservesConcurrency() ? spec.reservedConcurrency : undefined;
  return {
    name: functionName(key),
    handler: spec.handler,
    description: spec.description,
    runtime: "nodejs22.x",
    architecture: "arm64",
    memory: spec.memory,
    timeout: `${spec.timeoutSeconds} seconds`,
    // JSON log format: Lambda's own START/REPORT lines and Powertools' lines are all queryable in Logs Insights.
    logging: { retention: settings.logRetention, format: "json" },
    transform: {
      // Lambda's platform lines at the stage's system log level (infra/settings.ts, default app/functions.ts LOGGING:
      // WARN, none); SST builds loggingConfig as a plain object here.
      function: (args, opts) => {
        args.loggingConfig = {
          ...(args.loggingConfig as Record<string, unknown> | undefined),
          systemLogLevel: settings.systemLogLevel,
        };
        return deleteFirst(args, opts);
      },
      logGroup: deleteFirst,
      role: (args) => {
        args.managedPolicyArns = [];
        return undefined;
      },
    },
    // The resources the handler reads (app/manifest.ts): `Resource.*` for each; the links themselves grant nothing (links.ts).
    link: linksOf(key),
    permissions: [...permissionsOf(key), logPermission(key)],
    ...(reserved === undefined ? {} : { concurrency: { reserved } }),
    // Logs name the function, success lines are sampled (LOGGING); metrics (EMF, functions/observability/metrics.ts) go to the stage's own namespace.
    environment: {
      POWERTOOLS_SERVICE_NAME: `claims-${key}`,
      CLAIMS_SUCCESS_LOG_SAMPLE_RATE: String(LOGGING.successSampleRate),
      POWERTOOLS_METRICS_NAMESPACE: metricsNamespace($app.stage),
      // Every function that reads the claims' outage hold (worker, extraction, orchestrator, sweep) sees the same one.
      CLAIMS_LLM_OUTAGE_HOLD_S: String(settings.llm.outageHoldS),
      // And the same CLAIMS_STEP_TIMERS (the orchestrator arms the timers; every composed function validates it).
      CLAIMS_STEP_TIMERS: settings.stepTimers,
      // With an order source other than the table (the shop's order API), the functions that read orders get its
      // settings (app/order-source.ts; its secrets by link, links.ts).
      ...((ORDER_READERS as readonly FunctionKey[]).includes(key) ? orderSourceEnvironment(settings.orders) : {}),
      ...options.environment,
    },
    ...(options.retries === undefined ? {} : { retries: options.retries }),
    // The pre-parsed policy for the functions that read it (infra/policy.ts), then what the caller adds.
    ...(copyFiles.length === 0 ? {} : { copyFiles: copyFiles.map((f) => ({ ...f })) }),
  };
}

/** Plain environment for the functions that call the LLM (the key itself is the LlmApiKey secret). */
export function llmEnvironment(): Record<string, string> {
  return {
    LLM_PROVIDER: settings.llm.provider,
    LLM_BASE_URL: settings.llm.baseUrl,
    LLM_MODEL: settings.llm.model,
    LLM_BATCH_MODE: settings.llm.batchMode,
    LLM_BATCH_HOLD_S: String(settings.llm.batchHoldS),
  };
}
