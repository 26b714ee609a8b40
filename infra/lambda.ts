// The one helper that turns a function of infra/facts.ts (handler, memory, timeout, links) into SST
// FunctionArgs (name, runtime, architecture, logging, metrics namespace, the linked resources, the policy).
import { metricsNamespace } from "../functions/lib/metrics-catalog.ts";
import { FUNCTIONS, LOGGING, POLICY_FUNCTIONS } from "./facts.ts";
import type { FunctionKey } from "./facts.ts";
import { linksOf } from "./links.ts";
import { policyCopyFile } from "./policy.ts";
import { settings, type LogRetention } from "./settings.ts";

/** The Lambda name of `key` in this stage (`claims-crew-<stage>-<key>`): fixed, so alarms and the dashboard can name it. */
export function functionName(key: FunctionKey): string {
  return `${$app.name}-${$app.stage}-${key}`;
}

/** What varies between functions beyond the sizing table. */
interface FunctionOptions {
  readonly environment?: Readonly<Record<string, string>>;
  /** Retries of asynchronous invocations (schedules); queue-triggered functions retry through SQS. */
  readonly retries?: number;
  readonly copyFiles?: readonly { readonly from: string; readonly to?: string }[];
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
  /** Adds Lambda's system log level to the log config SST builds (its `logging` has no such field). */
  transform: { function: (args: { loggingConfig?: unknown }) => undefined };
  link: unknown[];
  environment: Record<string, string>;
  retries?: number;
  copyFiles?: { from: string; to?: string }[];
}

/** FunctionArgs for `key`: Node 22 on Graviton (arm64: ~20% cheaper per GB-second, as fast for this I/O-bound code). */
export function functionArgs(key: FunctionKey, options: FunctionOptions = {}): LambdaArgs {
  const spec = FUNCTIONS[key];
  const copyFiles = [
    ...((POLICY_FUNCTIONS as readonly FunctionKey[]).includes(key) ? [policyCopyFile] : []),
    ...(options.copyFiles ?? []),
  ];
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
    // Lambda's START/REPORT lines off (LOGGING in facts.ts); SST builds loggingConfig as a plain object here.
    transform: {
      function: (args) => {
        args.loggingConfig = {
          ...(args.loggingConfig as Record<string, unknown> | undefined),
          systemLogLevel: LOGGING.systemLogLevel,
        };
        return undefined;
      },
    },
    // Exactly the resources the handler reads (facts.ts): SST grants IAM access and `Resource.*` for each.
    link: linksOf(key),
    // Logs name the function, success lines are sampled (LOGGING); metrics (EMF, functions/lib/metrics.ts) go to the stage's own namespace.
    environment: {
      POWERTOOLS_SERVICE_NAME: `claims-${key}`,
      CLAIMS_SUCCESS_LOG_SAMPLE_RATE: String(LOGGING.successSampleRate),
      POWERTOOLS_METRICS_NAMESPACE: metricsNamespace($app.stage),
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
  };
}
