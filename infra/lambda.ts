// The one helper that turns a function of infra/facts.ts (handler, memory, timeout, links) into SST
// FunctionArgs (runtime, architecture, logging, the linked resources).
import { FUNCTIONS, LOGGING } from "./facts.ts";
import type { FunctionKey } from "./facts.ts";
import { linksOf } from "./links.ts";
import { settings, type LogRetention } from "./settings.ts";

/** What varies between functions beyond the sizing table. */
interface FunctionOptions {
  readonly environment?: Readonly<Record<string, string>>;
  /** Retries of asynchronous invocations (schedules); queue-triggered functions retry through SQS. */
  readonly retries?: number;
  readonly copyFiles?: readonly { readonly from: string; readonly to?: string }[];
}

/** The SST FunctionArgs this app passes for every function (a structural subset, checked by check:infra). */
export interface LambdaArgs {
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
  return {
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
        args.loggingConfig = { ...(args.loggingConfig as Record<string, unknown> | undefined), systemLogLevel: LOGGING.systemLogLevel };
        return undefined;
      },
    },
    // Exactly the resources the handler reads (facts.ts): SST grants IAM access and `Resource.*` for each.
    link: linksOf(key),
    environment: { POWERTOOLS_SERVICE_NAME: `claims-${key}`, CLAIMS_SUCCESS_LOG_SAMPLE_RATE: String(LOGGING.successSampleRate), ...options.environment },
    ...(options.retries === undefined ? {} : { retries: options.retries }),
    ...(options.copyFiles === undefined ? {} : { copyFiles: options.copyFiles.map((f) => ({ ...f })) }),
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
