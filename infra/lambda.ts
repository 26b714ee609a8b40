// Every Lambda function of the app with its memory and timeout, and the one helper that turns a row of
// that table into SST FunctionArgs (runtime, architecture, logging, links). The numbers are explained here.
//
// Prices behind the memory choices (arm64, on-demand): Lambda bills GB-seconds *including time spent
// waiting on I/O*. The LLM-calling functions wait seconds per call, so their memory is the largest
// Lambda cost line and is kept low; functions that answer users get more memory for faster cold starts.
import { settings, type LogRetention } from "./settings.ts";

/** One function of the app: the handler path, memory, timeout and a console description. */
interface FunctionSpec {
  readonly handler: string;
  readonly memory: `${number} MB`;
  readonly timeoutSeconds: number;
  readonly description: string;
}

/** The sizing table: every function the app deploys. */
export const FUNCTIONS = {
  intakeApi: {
    handler: "functions/intake-api.handler",
    // Answers users: 512 MB (about 1/3 vCPU) keeps cold starts (zod, SDK clients) and the HTML report quick.
    memory: "512 MB",
    // It answers 202 at once; only GET /reports reads the audit. Well inside the HTTP API's 30 s integration limit.
    timeoutSeconds: 15,
    description: "HTTP API: submit claims, read claims and reports",
  },
  authorizer: {
    handler: "functions/authorizer.handler",
    // Compares one header with a secret; on the request path when the 5-minute cache misses, so no 128 MB cold start.
    memory: "256 MB",
    timeoutSeconds: 5,
    description: "HTTP API authorizer: bearer token against the ApiToken secret",
  },
  intakeExtract: {
    handler: "functions/intake-extract.handler",
    // Waits on one LLM call: memory does not shorten the wait, it only multiplies the GB-seconds billed for it.
    memory: "256 MB",
    // One LLM call with the SDK's own retries: 30 s timeout x up to 3 attempts + backoff (scenarios/config.yaml).
    timeoutSeconds: 120,
    description: "Extracts a structured claim from free text with the LLM",
  },
  orchestrator: {
    handler: "functions/orchestrator.handler",
    // A pure crew step on a JSON snapshot between a few DynamoDB/SQS calls: CPU bursts are short.
    memory: "256 MB",
    // Up to 10 events per batch, each a load + step + conditional save + publish: well under a second each.
    timeoutSeconds: 30,
    description: "Crew orchestrator: delivers crew events and ticks to the session snapshot",
  },
  worker: {
    handler: "functions/worker.handler",
    // Same reasoning as intakeExtract: one agent step is one LLM call.
    memory: "256 MB",
    timeoutSeconds: 120,
    description: "Runs one agent step through the LLM",
  },
  kernel: {
    handler: "functions/kernel.handler",
    // Deterministic validation plus conditional writes and one EventBridge put per proposal.
    memory: "256 MB",
    timeoutSeconds: 30,
    description: "Decision kernel: validates proposals, records verdicts, executes refunds once",
  },
  timer: {
    handler: "functions/timer.handler",
    // Forwards due ticks into the crew-events queue: no parsing beyond a small JSON body, latency irrelevant.
    memory: "128 MB",
    timeoutSeconds: 10,
    description: "Forwards delayed step-deadline ticks into the crew-events queue",
  },
  sweep: {
    handler: "functions/sweep.handler",
    // Queries claims by status on gsi1 and ticks the overdue ones; must finish long before the next run (5 min).
    memory: "256 MB",
    timeoutSeconds: 60,
    description: "Every 5 minutes: ticks RUNNING claims past their deadline",
  },
  batch: {
    handler: "functions/batch.handler",
    // Parses the scenario YAML and submits every claim through the intake path: more CPU, runs once a day.
    memory: "512 MB",
    timeoutSeconds: 300,
    description: "Scheduled scenario batch under one simulation_id",
  },
} as const satisfies Record<string, FunctionSpec>;

/** Name of a function in the sizing table. */
export type FunctionKey = keyof typeof FUNCTIONS;

/** AWS guidance for SQS event sources: the queue's visibility timeout is at least 6x the function timeout. */
export const VISIBILITY_FACTOR = 6;

/** The visibility timeout for the queue that `consumer` reads. */
export function visibilityTimeoutFor(consumer: FunctionKey): `${number} seconds` {
  return `${VISIBILITY_FACTOR * FUNCTIONS[consumer].timeoutSeconds} seconds`;
}

/** What varies between functions beyond the sizing table. */
interface FunctionOptions {
  /** Exactly the resources the handler uses: SST grants IAM access and `Resource.*` for each. */
  readonly link: readonly unknown[];
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
  link: unknown[];
  environment: Record<string, string>;
  retries?: number;
  copyFiles?: { from: string; to?: string }[];
}

/** FunctionArgs for `key`: Node 22 on Graviton (arm64: ~20% cheaper per GB-second, as fast for this I/O-bound code). */
export function functionArgs(key: FunctionKey, options: FunctionOptions): LambdaArgs {
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
    link: [...options.link],
    environment: { POWERTOOLS_SERVICE_NAME: `claims-${key}`, ...options.environment },
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
