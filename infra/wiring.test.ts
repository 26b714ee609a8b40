// Evaluates sst.config.ts with recording stand-ins for SST (no Pulumi, no AWS) and checks the wiring: queues,
// DLQs, subscriptions, bus rules, routes, links, runtimes, logs and stages; the policy and batch inputs; the
// alarms, their SNS topic and its subscriber; the dashboard. "AWS hardening" holds the rules on policies,
// permissions, concurrency, retention and replacement; each is also run on infra/fixtures/unhardened.config.ts,
// SST's defaults without that hardening, where it must find its fault.
import { readFileSync } from "node:fs";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startAccountStandIn } from "../adapters/aws/testing/account-standin.ts";
import type { AccountStandIn } from "../adapters/aws/testing/account-standin.ts";
import { parseConfig } from "../core/claim/config.ts";
import { accessLogFormat } from "../app/access-log.ts";
import { METRICS, METRICS_SERVICE } from "../app/metrics-catalog.ts";
import { ClaimsPolicySchema, POLICY_FILE_NAME } from "../app/policy-format.ts";
import {
  ACTIONS,
  FUNCTIONS,
  LOCAL_ONLY_FUNCTIONS,
  awsFunctionKeys,
  LLM_CALL_BUDGET_SECONDS,
  POLICY_FUNCTIONS,
  PAYMENT_RULE,
  PAYMENTS_QUEUE,
  QUEUES,
  ROUTES,
  RULE_PATTERNS,
  eventSourceBatch,
  eventSourceBatchOf,
  linksOf,
  servedRouteKeys,
  visibilityTimeoutSeconds,
} from "../app/manifest.ts";
import { EventSourceSettingError } from "../app/errors.ts";
import {
  concurrencyNeededToReserve,
  consumerPeakConcurrency,
  NEW_ACCOUNT_CONCURRENCY,
  totalReserved,
} from "../app/capacity.ts";
import { IDEMPOTENCY_PK_PREFIX, PERSONAL_DATA_KMS_PURPOSE } from "../app/manifest.ts";
import { keys } from "../adapters/aws/table.ts";
import type { FunctionKey } from "../app/manifest.ts";
import { evaluateSstConfig, roleOf, unwrap, type Recorded, type Recording } from "./testing/sst-recorder.ts";
import { ORDER_READERS } from "../app/order-source.ts";
import { REVIEWERS_GROUP } from "../functions/http/reviewer-identity.ts";

// Each evaluation bundles and runs the whole config: seconds on a loaded 2-core machine. Generous bounds, not speed goals.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** Every deploy-time variable infra/settings.ts reads, unset so the developer's shell cannot leak in. */
const CLEAN_ENV = {
  LLM_PROVIDER: undefined,
  LLM_BASE_URL: undefined,
  LLM_MODEL: undefined,
  LLM_MAX_CONCURRENCY: undefined,
  CLAIMS_API_RATE_LIMIT: undefined,
  CLAIMS_API_BURST_LIMIT: undefined,
  CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL: undefined,
  CLAIMS_API_SUBMIT_RATE_LIMIT: undefined,
  CLAIMS_API_SUBMIT_BURST_LIMIT: undefined,
  CLAIMS_BATCH_ENABLED: undefined,
  CLAIMS_BATCH_SCHEDULE: undefined,
  CLAIMS_BATCH_FILE: undefined,
  CLAIMS_BATCH_LIVE: undefined,
  CLAIMS_POLICY_FILE: undefined,
  CLAIMS_ALARM_ENDPOINT: undefined,
  CLAIMS_ALARM_REVIEW_BACKLOG: undefined,
  CLAIMS_ALARM_REVIEW_AGE_HOURS: undefined,
  ORDER_SOURCE: undefined,
  ORDER_API_URL: undefined,
  ORDER_SOURCE_MAX_WAIT_S: undefined,
  ORDER_API_TIMEOUT_MS: undefined,
  PAYMENT_PROVIDER: undefined,
  CLAIMS_REVIEWER_OIDC_ISSUER: undefined,
  CLAIMS_REVIEWER_OIDC_AUDIENCE: undefined,
  CLAIMS_REVIEWER_MFA: undefined,
  CLAIMS_REVIEWER_THREAT_PROTECTION: undefined,
  CLAIMS_RESERVED_CONCURRENCY: undefined,
  CLAIMS_ALARM_UNREAD_HOURS: undefined,
  CLAIMS_STEP_TIMERS: undefined,
  CLAIMS_TEARDOWN_STAGE: undefined,
  AWS_PROFILE: undefined,
  AWS_SESSION_TOKEN: undefined,
} as const;

/**
 * The account every evaluation deploys to: a stand-in speaking Lambda's wire protocol to the deploy's own SDK call
 * (infra/account.ts), a new account with the quota of 10 concurrent executions unless a test changes it.
 */
let account: AccountStandIn;
beforeAll(async () => {
  account = await startAccountStandIn({ concurrentExecutions: 10 });
});
afterAll(async () => {
  await account.stop();
});

/** The operator's policy file the tests deploy (the template the guide points to). */
const POLICY_FILE = "infra/policy.example.yaml";

/** What every stage but `demo` must be given: a policy file; production also someone to notify. */
const REQUIRED_ENV = (stage: string): Record<string, string> => ({
  // The whole app: the refund executor and the Stripe webhook deploy only with a payment provider.
  PAYMENT_PROVIDER: "stripe",
  ...(stage === "demo" ? {} : { CLAIMS_POLICY_FILE: POLICY_FILE }),
  ...(stage === "production" ? { CLAIMS_ALARM_ENDPOINT: "ops@example.com" } : {}),
});

function evaluate(stage: string, env: Record<string, string | undefined> = {}): Promise<Recording> {
  return evaluateSstConfig({ stage, env: { ...CLEAN_ENV, ...account.env(), ...REQUIRED_ENV(stage), ...env } });
}

/** Evaluates with the stand-in account's Lambda quota set to `concurrency` (and back to 10 afterwards). */
async function onAccount<T>(concurrency: number, run: () => Promise<T>): Promise<T> {
  account.account.concurrentExecutions = concurrency;
  try {
    return await run();
  } finally {
    account.account.concurrentExecutions = 10;
  }
}

/** The least-privilege table: what each handler is linked to, what triggers it, whether it calls the LLM. */
const EXPECTED_FUNCTIONS = {
  "functions/intake-api.handler": {
    trigger: "function IntakeApi",
    llm: false,
    // ApiToken: the report routes check the intake token themselves (a browser without one gets the token page).
    links: ["Table", "PersonalDataKey", "ExtractionQueue", "CrewEventsQueue", "ApiToken"],
  },
  "functions/intake-extract.handler": {
    trigger: "queue ExtractionQueue",
    llm: true,
    // ExtractionQueue: an extraction waiting for an unreachable model goes back to it, delayed.
    links: ["Table", "PersonalDataKey", "CrewEventsQueue", "ExtractionQueue", "LlmApiKey", "Bus"],
  },
  "functions/orchestrator.handler": {
    trigger: "queue CrewEventsQueue",
    llm: false,
    links: ["Table", "PersonalDataKey", "AgentStepsQueue", "ProposalsQueue", "TimersQueue", "Bus"],
  },
  "functions/worker.handler": {
    trigger: "queue AgentStepsQueue",
    llm: true,
    // AgentStepsQueue: a step waiting for an unreachable model goes back to it, delayed.
    links: ["Table", "PersonalDataKey", "CrewEventsQueue", "AgentStepsQueue", "LlmApiKey"],
  },
  "functions/kernel.handler": {
    trigger: "queue ProposalsQueue",
    llm: false,
    links: ["Table", "PersonalDataKey", "Bus"],
  },
  "functions/timer.handler": {
    trigger: "queue TimersQueue",
    llm: false,
    links: ["Table", "CrewEventsQueue", "TimersQueue"],
  },
  "functions/sweep.handler": {
    trigger: "schedule Sweep",
    llm: false,
    links: ["Table", "PersonalDataKey", "CrewEventsQueue", "ExtractionQueue", "ProposalsQueue", "Bus"],
  },
  "functions/batch.handler": {
    trigger: "schedule Batch",
    llm: false,
    links: ["Table", "PersonalDataKey", "ExtractionQueue", "CrewEventsQueue"],
  },
  "functions/authorizer.handler": { trigger: "authorizer IntakeToken", llm: false, links: ["ApiToken"] },
  "functions/review-api.handler": {
    trigger: "function ReviewApi",
    llm: false,
    links: ["Table", "PersonalDataKey", "Bus", "ExtractionQueue", "CrewEventsQueue"],
  },
  "functions/refund-executor.handler": {
    trigger: "queue PaymentsQueue",
    llm: false,
    links: ["Table", "PersonalDataKey", "Bus", "StripeApiKey"],
  },
  "functions/payment-webhook.handler": {
    trigger: "function PaymentWebhook",
    llm: false,
    links: ["Table", "PersonalDataKey", "Bus", "StripeWebhookSecret"],
  },
} as const;
type Handler = keyof typeof EXPECTED_FUNCTIONS;

/** The functions of app/manifest.ts deployed on AWS (with PAYMENT_PROVIDER=stripe, as these tests deploy): all but the local-only ones. */
const AWS_FUNCTIONS = Object.fromEntries(awsFunctionKeys("stripe").map((key) => [key, FUNCTIONS[key]])) as Partial<
  typeof FUNCTIONS
>;

/** Queues our own functions consume, and the queues downstream systems read (fed by bus rules). */
const CONSUMED_QUEUES = ["CrewEventsQueue", "AgentStepsQueue", "ProposalsQueue", "ExtractionQueue", "TimersQueue"];
const BUS_TARGET_QUEUES = ["VerdictsQueue", "ReviewQueue", "RefundsQueue"];
/** The refund executor's queue (with PAYMENT_PROVIDER): fed by its own bus rule, consumed by our executor. */
const PAYMENTS_QUEUE_NAME = "PaymentsQueue";

type Args = Record<string, unknown>;

interface DeployedFunction {
  readonly trigger: string;
  readonly args: Args;
  /** The component whose constructor or method received the function definition. */
  readonly owner: Recorded;
}

const asArgs = (value: unknown): Args => (typeof value === "string" ? { handler: value } : ((value ?? {}) as Args));

/** Every function definition the config hands to SST, wherever it is declared. */
function deployedFunctions(r: Recording): DeployedFunction[] {
  const found: DeployedFunction[] = [];
  for (const fn of r.ofType("sst.aws.Function"))
    found.push({ trigger: `function ${fn.name}`, args: fn.args, owner: fn });
  for (const queue of r.ofType("sst.aws.Queue")) {
    for (const call of queue.calls.filter((c) => c.method === "subscribe")) {
      found.push({ trigger: `queue ${queue.name}`, args: asArgs(call.args[0]), owner: queue });
    }
  }
  for (const api of r.ofType("sst.aws.ApiGatewayV2")) {
    for (const call of api.calls.filter((c) => c.method === "addAuthorizer")) {
      const auth = call.args[0] as { name: string; lambda?: { function?: unknown } };
      // A JWT authorizer runs no function of ours.
      if (auth.lambda === undefined) continue;
      found.push({ trigger: `authorizer ${auth.name}`, args: asArgs(auth.lambda?.function), owner: api });
    }
  }
  for (const cron of [...r.ofType("sst.aws.CronV2"), ...r.ofType("sst.aws.Cron")]) {
    found.push({ trigger: `schedule ${cron.name}`, args: asArgs(cron.args.function ?? cron.args.job), owner: cron });
  }
  for (const bus of r.ofType("sst.aws.Bus")) {
    for (const call of bus.calls.filter((c) => c.method === "subscribe")) {
      found.push({ trigger: `bus ${bus.name}`, args: asArgs(call.args[1]), owner: bus });
    }
  }
  return found;
}

function functionFor(r: Recording, handler: Handler): DeployedFunction {
  const matches = deployedFunctions(r).filter((f) => f.args.handler === handler);
  expect(matches, `${handler} is deployed exactly once`).toHaveLength(1);
  return matches[0] as DeployedFunction;
}

/** Seconds in an SST duration such as "30 seconds" or "5 minutes". */
function seconds(duration: unknown): number {
  const match = /^(\d+) (second|minute|hour)s?$/.exec(String(duration));
  if (match === null) throw new Error(`not an SST duration: ${String(duration)}`);
  const unit = { second: 1, minute: 60, hour: 3600 }[match[2] as "second" | "minute" | "hour"];
  return Number(match[1]) * unit;
}

interface Dlq {
  queue: unknown;
  retry: number;
}

const dlqOf = (queue: Recorded) => queue.args.dlq as Dlq | undefined;
const isFifo = (queue: Recorded) => Boolean(unwrap(queue.args.fifo));

/** Queues some other queue, bus target or schedule names as its dead-letter queue. */
function deadLetterQueues(r: Recording): Set<string> {
  const names = new Set<string>();
  for (const queue of r.ofType("sst.aws.Queue")) {
    const dlq = dlqOf(queue);
    if (dlq !== undefined) names.add(r.resolve(dlq.queue).name);
  }
  for (const cron of r.ofType("sst.aws.CronV2"))
    if (cron.args.dlq !== undefined) names.add(r.resolve(cron.args.dlq).name);
  return names;
}

function subscriptionsOf(queue: Recorded) {
  return queue.calls.filter((c) => c.method === "subscribe");
}

/** Every rule on a bus with its target: the rule's args and ARN, the target's args and options, the target queue. */
function busRules(r: Recording) {
  return r.ofType("aws.cloudwatch.EventTarget").map((target) => {
    const rule = r.ofType("aws.cloudwatch.EventRule").find((c) => c.name === unwrap(target.args.rule));
    if (rule === undefined) throw new Error(`target ${target.name} names no rule`);
    return {
      name: rule.name,
      arn: rule.arn,
      queue: r.resolve(target.args.arn),
      rule: rule.args,
      target: target.args,
      targetOpts: target.opts,
    };
  });
}

/** What a function transform (or an object transform) of `component` does to empty args and options. */
function transformed(args: Args, key: string): { args: Args; opts: Args } {
  const transform = (args.transform as Record<string, unknown> | undefined)?.[key];
  const out = { args: {} as Args, opts: {} as Args };
  if (typeof transform === "function") transform(out.args, out.opts, key);
  else Object.assign(out.args, transform);
  return out;
}

interface PolicyDocument {
  Statement: Args[];
}

/** The queue policies attached to the queue `name`, parsed. */
function policiesOf(r: Recording, name: string): PolicyDocument[] {
  return r
    .ofType("aws.sqs.QueuePolicy")
    .filter((p) => String(unwrap(p.args.queueUrl)).endsWith(`/${name}`))
    .map((p) => JSON.parse(String(unwrap(p.args.policy))) as PolicyDocument);
}

describe("sst.config.ts wiring (stage test)", () => {
  let r: Recording;
  beforeAll(async () => {
    r = await evaluate("test");
  });

  describe("functions", () => {
    it("deploys exactly the expected handlers", () => {
      const handlers = deployedFunctions(r)
        .map((f) => f.args.handler)
        .sort();
      expect(handlers).toEqual(Object.keys(EXPECTED_FUNCTIONS).sort());
    });

    it.each(Object.entries(EXPECTED_FUNCTIONS))(
      "%s has its trigger and links exactly what it uses",
      (handler, expected) => {
        const fn = functionFor(r, handler as Handler);
        expect(fn.trigger).toBe(expected.trigger);
        const links = ((fn.args.link ?? []) as unknown[]).map((l) => r.resolve(l).name);
        expect(links.sort()).toEqual([...expected.links].sort());
      },
    );

    it.each(Object.keys(EXPECTED_FUNCTIONS))(
      "%s runs Node 22 on arm64 with memory, timeout and log retention set",
      (handler) => {
        const { args } = functionFor(r, handler as Handler);
        expect(args.runtime).toBe("nodejs22.x");
        expect(args.architecture).toBe("arm64");
        expect(String(args.memory)).toMatch(/^\d+ MB$/);
        expect(seconds(args.timeout)).toBeGreaterThan(0);
        expect(seconds(args.timeout)).toBeLessThanOrEqual(900);
        expect(args.logging).toMatchObject({ retention: "1 month" });
      },
    );

    it.each(Object.keys(EXPECTED_FUNCTIONS))(
      "%s gets CLAIMS_STEP_TIMERS, lazy unless the deploy says eager (the orchestrator arms the timers)",
      (handler) => {
        expect((functionFor(r, handler as Handler).args.environment as Record<string, string>).CLAIMS_STEP_TIMERS).toBe(
          "lazy",
        );
      },
    );

    it.each(Object.keys(EXPECTED_FUNCTIONS))(
      "%s samples its success log lines and leaves Lambda's platform lines out (system level WARN)",
      (handler) => {
        const { args } = functionFor(r, handler as Handler);
        expect((args.environment as Record<string, string>).CLAIMS_SUCCESS_LOG_SAMPLE_RATE).toBe("0.01");
        // SST's function transform receives the log config SST built; ours adds the system level and keeps the rest.
        const fnArgs = { loggingConfig: { logFormat: "JSON", logGroup: "/aws/lambda/x" } };
        (args.transform as { function: (a: typeof fnArgs, o: object) => void }).function(fnArgs, {});
        expect(fnArgs.loggingConfig).toEqual({ logFormat: "JSON", logGroup: "/aws/lambda/x", systemLogLevel: "WARN" });
      },
    );

    it("writes Lambda's platform lines again (platform.report: memory and init) with CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL=INFO", async () => {
      const sizing = await evaluate("test", { CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL: "info" });
      for (const handler of Object.keys(EXPECTED_FUNCTIONS)) {
        const { args } = functionFor(sizing, handler as Handler);
        const fnArgs = { loggingConfig: { logFormat: "JSON" } };
        (args.transform as { function: (a: typeof fnArgs, o: object) => void }).function(fnArgs, {});
        expect(fnArgs.loggingConfig).toEqual({ logFormat: "JSON", systemLogLevel: "INFO" });
      }
    });

    it.each(Object.entries(EXPECTED_FUNCTIONS))(
      "%s gets the LLM settings only if it calls the LLM (or records them, like the batch)",
      (handler, expected) => {
        const env = (functionFor(r, handler as Handler).args.environment ?? {}) as Record<string, string>;
        const llmKeys = Object.keys(env)
          .filter((k) => k.startsWith("LLM_"))
          .sort();
        const needs = expected.llm || handler === "functions/batch.handler";
        expect(llmKeys).toEqual(
          needs ? ["LLM_BASE_URL", "LLM_BATCH_HOLD_S", "LLM_BATCH_MODE", "LLM_MODEL", "LLM_PROVIDER"] : [],
        );
      },
    );

    it("gives the LLM functions working defaults for an OpenAI-compatible endpoint", () => {
      expect(functionFor(r, "functions/worker.handler").args.environment).toMatchObject({
        LLM_PROVIDER: "openai",
        LLM_BASE_URL: "https://api.openai.com/v1",
        LLM_MODEL: expect.any(String),
        // The Batch API is off unless the deploy says LLM_BATCH_MODE=batch (docs/llm.md, "Batch mode").
        LLM_BATCH_MODE: "off",
        LLM_BATCH_HOLD_S: "90000",
      });
    });

    it("serves the claim routes from IntakeApi and the review routes from ReviewApi, never from a per-route copy", () => {
      const api = r.get("sst.aws.ApiGatewayV2", "Api");
      const targets = Object.fromEntries(
        api.calls.filter((c) => c.method === "route").map((c) => [String(c.args[0]), r.resolve(c.args[1]).name]),
      );
      expect(targets).toEqual({
        "POST /claims": "IntakeApi",
        "GET /claims/{id}": "IntakeApi",
        "GET /claims": "IntakeApi",
        "GET /reports/{simulation_id}": "IntakeApi",
        "GET /reports": "IntakeApi",
        "GET /health": "IntakeApi",
        "GET /openapi.json": "IntakeApi",
        "GET /reviews": "ReviewApi",
        "POST /claims/{id}/review": "ReviewApi",
        "POST /claims/{id}/review/take": "ReviewApi",
        "GET /review": "ReviewApi",
        "POST /claims/{id}/return-events": "ReviewApi",
        "POST /webhooks/stripe": "PaymentWebhook",
      });
    });
  });

  describe("queues", () => {
    it("gives every queue that is not itself a DLQ a dead-letter queue with a bounded maxReceiveCount", () => {
      const dlqs = deadLetterQueues(r);
      const sources = r.ofType("sst.aws.Queue").filter((q) => !dlqs.has(q.name));
      expect(sources.map((q) => q.name).sort()).toEqual(
        [...CONSUMED_QUEUES, ...BUS_TARGET_QUEUES, PAYMENTS_QUEUE_NAME].sort(),
      );
      for (const queue of sources) {
        const dlq = dlqOf(queue);
        expect(dlq, `${queue.name} has a DLQ`).toBeDefined();
        const target = r.resolve(dlq?.queue);
        expect(target.type).toBe("sst.aws.Queue");
        expect(target.name).not.toBe(queue.name);
        expect(isFifo(target), `${queue.name}'s DLQ matches its FIFO-ness`).toBe(isFifo(queue));
        expect(dlq?.retry).toBeLessThanOrEqual(10);
      }
    });

    it("gives each source queue its own DLQ, which keeps messages 14 days and has no consumer", () => {
      const dlqNames = r.ofType("sst.aws.Queue").flatMap((q) => {
        const dlq = dlqOf(q);
        return dlq === undefined ? [] : [r.resolve(dlq.queue).name];
      });
      expect(new Set(dlqNames).size).toBe(dlqNames.length);
      for (const name of dlqNames) {
        const dlq = r.get("sst.aws.Queue", name);
        expect(dlqOf(dlq), `${name} is not chained to another DLQ`).toBeUndefined();
        expect(subscriptionsOf(dlq), `${name} has no consumer`).toHaveLength(0);
        expect(dlq.args.transform).toMatchObject({ queue: { messageRetentionSeconds: 14 * 24 * 3600 } });
      }
    });

    it.each(CONSUMED_QUEUES)(
      "%s is subscribed once, with partial batch responses and a batch Lambda allows (above 10 only with a window, never on FIFO)",
      (name) => {
        const queue = r.get("sst.aws.Queue", name);
        const subs = subscriptionsOf(queue);
        expect(subs).toHaveLength(1);
        const options = (subs[0]?.args[1] ?? {}) as {
          batch?: { partialResponses?: boolean; size?: number; window?: string };
        };
        expect(options.batch?.partialResponses).toBe(true);
        const window = options.batch?.window === undefined ? 0 : seconds(options.batch.window);
        expect(window).toBeLessThanOrEqual(300);
        if (isFifo(queue)) expect(window).toBe(0);
        expect(options.batch?.size).toBeGreaterThanOrEqual(1);
        expect(options.batch?.size).toBeLessThanOrEqual(window > 0 ? 10_000 : 10);
      },
    );

    it("gathers the timers for a minute, in batches of up to 100, and every other queue without a window", () => {
      const windows = Object.fromEntries(
        r
          .ofType("aws.lambda.EventSourceMapping")
          .map((m) => [
            r.resolve(m.args.eventSourceArn).name,
            [unwrap(m.args.batchSize), unwrap(m.args.maximumBatchingWindowInSeconds)],
          ]),
      );
      expect(windows).toMatchObject({
        TimersQueue: [100, 60],
        CrewEventsQueue: [10, 0],
        ProposalsQueue: [10, 0],
        AgentStepsQueue: [1, 0],
        ExtractionQueue: [1, 0],
      });
    });

    it.each(CONSUMED_QUEUES)(
      "%s has a visibility timeout of at least 6x its consumer's timeout plus its batching window",
      (name) => {
        const queue = r.get("sst.aws.Queue", name);
        const [subscription] = subscriptionsOf(queue);
        const consumer = asArgs(subscription?.args[0]);
        const window = (subscription?.args[1] as { batch?: { window?: string } }).batch?.window;
        expect(seconds(queue.args.visibilityTimeout)).toBeGreaterThanOrEqual(
          6 * seconds(consumer.timeout) + (window === undefined ? 0 : seconds(window)),
        );
      },
    );

    it.each(BUS_TARGET_QUEUES)("%s is read downstream: fed by a bus rule, consumed by no function of ours", (name) => {
      expect(subscriptionsOf(r.get("sst.aws.Queue", name))).toHaveLength(0);
      expect(busRules(r).filter((rule) => rule.queue.name === name)).toHaveLength(1);
    });

    it("makes crew-events FIFO with content-based deduplication off, and keeps timers standard for DelaySeconds", () => {
      const crewEvents = r.get("sst.aws.Queue", "CrewEventsQueue");
      expect(crewEvents.args.fifo).toEqual({ contentBasedDeduplication: false });
      expect(crewEvents.args.transform).toMatchObject({
        queue: { deduplicationScope: "messageGroup", fifoThroughputLimit: "perMessageGroupId" },
      });
      for (const name of ["AgentStepsQueue", "ProposalsQueue", "ExtractionQueue", "TimersQueue"]) {
        expect(isFifo(r.get("sst.aws.Queue", name)), name).toBe(false);
      }
    });

    it("caps the LLM consumers at LLM_MAX_CONCURRENCY and every other consumer at its app/manifest.ts cap", () => {
      const caps = Object.fromEntries(
        r
          .ofType("aws.lambda.EventSourceMapping")
          .map((m) => [r.resolve(m.args.eventSourceArn).name, unwrap(m.args.scalingConfig)]),
      );
      expect(caps).toEqual({
        ExtractionQueue: { maximumConcurrency: 10 },
        AgentStepsQueue: { maximumConcurrency: 10 },
        CrewEventsQueue: { maximumConcurrency: QUEUES.crewEvents.maxConcurrency },
        ProposalsQueue: { maximumConcurrency: QUEUES.proposals.maxConcurrency },
        TimersQueue: { maximumConcurrency: QUEUES.timers.maxConcurrency },
        PaymentsQueue: { maximumConcurrency: PAYMENTS_QUEUE.maxConcurrency },
      });
    });
  });

  describe("bus", () => {
    it("names the bus per stage (claims in production), replaced delete-first", () => {
      expect(transformed(r.get("sst.aws.Bus", "Bus").args, "bus")).toEqual({
        args: { name: "claims-test" },
        opts: { deleteBeforeReplace: true },
      });
    });

    it("has exactly one rule per shared pattern, each equal to RULE_PATTERNS, and none made by SST's subscribeQueue", () => {
      expect(r.get("sst.aws.Bus", "Bus").calls).toEqual([]);
      const patterns = busRules(r).map((rule) => JSON.parse(String(rule.rule.eventPattern)) as unknown);
      expect(patterns).toHaveLength(Object.keys(RULE_PATTERNS).length + 1);
      expect(patterns).toEqual(expect.arrayContaining([...Object.values(RULE_PATTERNS), PAYMENT_RULE.pattern]));
    });

    it("delivers RefundExecuted that is not a simulation's to the refund executor's own queue", () => {
      const rules = busRules(r).filter(
        (rule) => JSON.stringify(JSON.parse(String(rule.rule.eventPattern))) === JSON.stringify(PAYMENT_RULE.pattern),
      );
      expect(rules.map((rule) => rule.queue.name)).toEqual(["PaymentsQueue"]);
      expect(PAYMENT_RULE.pattern.detail).toEqual({ simulation_id: [{ exists: false }] });
    });

    it.each(Object.entries(RULE_PATTERNS))("delivers %s to its own queue, on the bus", (name, pattern) => {
      const rules = busRules(r).filter(
        (rule) => JSON.stringify(JSON.parse(String(rule.rule.eventPattern))) === JSON.stringify(pattern),
      );
      expect(rules).toHaveLength(1);
      const expectedQueue = { verdicts: "VerdictsQueue", escalations: "ReviewQueue", refunds: "RefundsQueue" }[name];
      expect(rules[0]?.queue.name).toBe(expectedQueue);
      expect(unwrap(rules[0]?.rule.eventBusName)).toBe("Bus");
      expect(unwrap(rules[0]?.target.eventBusName)).toBe("Bus");
    });

    it("gives every rule target a DLQ, 24 hours of retries, and queue policies that admit only its own rule", () => {
      for (const rule of busRules(r)) {
        const deadLetter = unwrap(rule.target.deadLetterConfig) as { arn?: string } | undefined;
        const dlq = r.resolve(deadLetter?.arn);
        expect(deadLetterQueues(r).has(dlq.name), `${rule.name}'s target DLQ is a dead-letter queue`).toBe(true);
        expect(unwrap(rule.target.retryPolicy)).toEqual({
          maximumEventAgeInSeconds: 86_400,
          maximumRetryAttempts: 185,
        });
        for (const queue of [rule.queue, dlq]) {
          const policies = policiesOf(r, queue.name);
          expect(policies, `${queue.name} has one queue policy`).toHaveLength(1);
          expect(policies[0]?.Statement).toEqual([
            {
              Sid: "OnlyItsBusRule",
              Effect: "Allow",
              Principal: { Service: "events.amazonaws.com" },
              Action: "sqs:SendMessage",
              Resource: queue.arn,
              Condition: { ArnEquals: { "aws:SourceArn": rule.arn } },
            },
          ]);
        }
        // The target is created after the policies, so its first deliveries are not refused.
        expect((rule.targetOpts.dependsOn as unknown[]).map((p) => r.resolve(p).type)).toEqual([
          "aws.sqs.QueuePolicy",
          "aws.sqs.QueuePolicy",
        ]);
      }
    });
  });

  describe("api", () => {
    // The intake token opens the claim routes only, a reviewer's JWT the review routes only.
    const ROUTES = {
      "POST /claims": "IntakeToken",
      "GET /claims/{id}": "IntakeToken",
      "GET /claims": "IntakeToken",
      // The reports check the intake token in IntakeApi: a browser without one gets the page that asks for it.
      "GET /reports/{simulation_id}": null,
      "GET /reports": null,
      "GET /reviews": "Reviewers",
      "POST /claims/{id}/review": "Reviewers",
      "POST /claims/{id}/review/take": "Reviewers",
      // A shop or warehouse posts return events with the intake token (docs/returns.md).
      "POST /claims/{id}/return-events": "IntakeToken",
      // The reviewers' page holds no secret: it asks for the reviewer token, which its API calls carry.
      "GET /review": null,
      "GET /health": null,
      "GET /openapi.json": null,
      // Stripe signs its webhooks: the function verifies the signature with the StripeWebhookSecret.
      "POST /webhooks/stripe": null,
    } as const;

    it("declares exactly the routes of the HTTP API, each with its authorizer (health open)", () => {
      const api = r.get("sst.aws.ApiGatewayV2", "Api");
      // The stand-in hands out `authorizer/<name>` as each authorizer's id.
      const authorizerIds = new Map<string, string>(
        api.calls
          .filter((c) => c.method === "addAuthorizer")
          .map((c) => (c.args[0] as { name: string }).name)
          .map((name) => [`authorizer/${name}`, name]),
      );
      const routes = Object.fromEntries(
        api.calls
          .filter((c) => c.method === "route")
          .map((c) => {
            const auth = unwrap((c.args[2] as { auth?: unknown } | undefined)?.auth) as
              | false
              | { lambda?: string; jwt?: { authorizer?: string } }
              | undefined;
            // A Lambda authorizer is named by `lambda`, a JWT authorizer by `jwt.authorizer`.
            const id = auth ? String(auth.lambda ?? auth.jwt?.authorizer) : undefined;
            const authorizer = id ? (authorizerIds.get(id) ?? `unknown ${id}`) : null;
            return [String(c.args[0]), authorizer] as const;
          }),
      );
      expect(routes).toEqual(ROUTES);
    });

    it("checks the intake token in a Lambda authorizer and reviewers' JWTs in a JWT authorizer, each from the Authorization header", () => {
      const calls = r.get("sst.aws.ApiGatewayV2", "Api").calls.filter((c) => c.method === "addAuthorizer");
      expect(calls.map((c) => (c.args[0] as { name: string }).name)).toEqual(["IntakeToken", "Reviewers"]);
      expect(calls[0]?.args[0]).toMatchObject({
        lambda: { response: "simple", identitySources: ["$request.header.Authorization"] },
      });
      expect(calls[0]?.args[0]).not.toHaveProperty("jwt");
      expect(calls[1]?.args[0]).not.toHaveProperty("lambda");
      expect(unwrap((calls[1]?.args[0] as { jwt?: unknown }).jwt)).toMatchObject({
        identitySource: "$request.header.Authorization",
      });
    });

    it("runs no reviewer-token function and links no ReviewerToken on AWS (the review routes use the JWT authorizer)", () => {
      for (const key of LOCAL_ONLY_FUNCTIONS) {
        expect(deployedFunctions(r).map((f) => f.args.handler)).not.toContain(FUNCTIONS[key].handler);
      }
      for (const fn of deployedFunctions(r)) {
        const links = ((fn.args.link ?? []) as unknown[]).map((l) => r.resolve(l).name);
        expect(links, String(fn.args.handler)).not.toContain("ReviewerToken");
      }
    });

    it("turns CORS off, throttles every route and POST /claims tighter, and keeps access logs", async () => {
      const args = r.get("sst.aws.ApiGatewayV2", "Api").args;
      expect(args.cors).toBe(false);
      expect(args.accessLog).toEqual({ retention: "1 month" });
      const stage = transformed(args, "stage");
      const { accessLogSettings: _format, ...throttles } = stage.args;
      expect(throttles).toEqual({
        defaultRouteSettings: { throttlingRateLimit: 50, throttlingBurstLimit: 100 },
        routeSettings: [{ routeKey: "POST /claims", throttlingRateLimit: 10, throttlingBurstLimit: 20 }],
      });
      // The route settings name POST /claims: the stage waits for every route's API Gateway Route, not for the
      // route components (SST creates a Route inside an apply: the component alone may not hold it yet).
      const routes = (await stage.opts.dependsOn) as { routeKey: string }[];
      expect(routes.map((x) => x.routeKey).sort()).toEqual(Object.keys(ROUTES).sort());
    });

    it("writes the access log to SST's log group in our line (app/access-log.ts), not SST's", () => {
      // The stage's arguments as SST's ApiGatewayV2 passes them to the transform (its createStage).
      const logGroup = "arn:aws:logs:us-east-1:123456789012:log-group:/aws/vendedlogs/apis/claims-crew-test-Api";
      const stage: Args = {
        apiId: "api-id",
        autoDeploy: true,
        name: "$default",
        accessLogSettings: { destinationArn: logGroup, format: '{"requestTime":"\\"$context.requestTime\\""}' },
      };
      const transform = (r.get("sst.aws.ApiGatewayV2", "Api").args.transform as Args).stage as (
        a: Args,
        o: Args,
      ) => void;
      transform(stage, {});
      const settings = stage.accessLogSettings as { destinationArn: string; format: string };
      expect(settings.destinationArn).toBe(logGroup);
      expect(settings.format).toBe(accessLogFormat());
      expect(settings.format).toContain("$context.requestId");
      expect(settings.format).toContain("$context.integrationErrorMessage");
      expect(settings.format).not.toContain("$context.requestTime");
      // API Gateway fills each variable in as text: with any value, the line is one JSON object.
      const line = JSON.parse(settings.format.replace(/\$context\.[A-Za-z.]+/g, "0")) as Args;
      expect(line).toMatchObject({ requestId: "0", status: 0, responseLatency: 0, error: "0" });
      expect(stage).toMatchObject({ apiId: "api-id", autoDeploy: true, name: "$default" });
    });
  });

  describe("table, schedules, secrets, outputs", () => {
    it("declares one on-demand table with pk/sk, gsi1, TTL on expires_at and point-in-time recovery", () => {
      const tables = r.ofType("sst.aws.Dynamo");
      expect(tables.map((t) => t.name)).toEqual(["Table"]);
      expect(tables[0]?.args).toMatchObject({
        fields: { pk: "string", sk: "string", gsi1pk: "string", gsi1sk: "string" },
        primaryIndex: { hashKey: "pk", rangeKey: "sk" },
        globalIndexes: { gsi1: { hashKey: "gsi1pk", rangeKey: "gsi1sk" } },
        ttl: "expires_at",
        deletionProtection: false,
        transform: { table: { billingMode: "PAY_PER_REQUEST", pointInTimeRecovery: { enabled: true } } },
      });
    });

    it("sweeps every 5 minutes and leaves the scenario batch disabled by default", () => {
      expect(r.get("sst.aws.CronV2", "Sweep").args).toMatchObject({ schedule: "rate(5 minutes)" });
      expect(r.get("sst.aws.CronV2", "Sweep").args.enabled ?? true).toBe(true);
      expect(r.get("sst.aws.CronV2", "Batch").args).toMatchObject({
        enabled: false,
        schedule: "cron(0 6 * * ? *)",
        timezone: "UTC",
      });
    });

    it("never re-runs a scheduled function after an error (a retried batch would submit twice)", () => {
      for (const handler of ["functions/sweep.handler", "functions/batch.handler"] as const) {
        expect(functionFor(r, handler).args.retries, handler).toBe(0);
      }
    });

    it("ships the policy and the batch's claims file (the demo scenarios by default) with the batch, which runs them as a simulation", () => {
      const batch = functionFor(r, "functions/batch.handler").args;
      expect(batch.copyFiles).toEqual([
        { from: ".sst/claims-policy/test.json", to: POLICY_FILE_NAME },
        { from: "scenarios/scenarios.yaml", to: "claims-batch.yaml" },
      ]);
      expect(batch.environment).toMatchObject({
        CLAIMS_SCENARIOS_PATH: "claims-batch.yaml",
        CLAIMS_BATCH_MODE: "simulation",
      });
    });

    it("ships the pre-parsed policy with exactly the functions that read it, and no YAML config with any", () => {
      for (const [key, fact] of Object.entries(AWS_FUNCTIONS) as [FunctionKey, (typeof FUNCTIONS)[FunctionKey]][]) {
        const files = (functionFor(r, fact.handler as Handler).args.copyFiles ?? []) as { from: string; to?: string }[];
        const policy = files.filter((f) => f.to === POLICY_FILE_NAME);
        expect(policy, key).toEqual(
          (POLICY_FUNCTIONS as readonly string[]).includes(key)
            ? [{ from: ".sst/claims-policy/test.json", to: POLICY_FILE_NAME }]
            : [],
        );
        expect(
          files.some((f) => f.from.endsWith("config.yaml")),
          key,
        ).toBe(false);
      }
    });

    it("declares the three secrets without placeholders, so a missing one stops the deploy", () => {
      expect(r.ofType("sst.Secret").map((s) => [s.name, s.args.placeholder])).toEqual([
        ["LlmApiKey", undefined],
        ["ApiToken", undefined],
        ["StripeApiKey", undefined],
        ["StripeWebhookSecret", undefined],
      ]);
    });

    it("deploys the refund executor but no webhook function, route, output or secret with PAYMENT_PROVIDER=simulated (it has no webhook)", async () => {
      const simulated = await evaluate("test", { PAYMENT_PROVIDER: "simulated" });
      const handlers = deployedFunctions(simulated).map((f) => String(f.args.handler));
      expect(handlers).toContain(FUNCTIONS.refundExecutor.handler);
      expect(handlers).not.toContain(FUNCTIONS.paymentWebhook.handler);
      expect(awsFunctionKeys("simulated")).not.toContain("paymentWebhook");
      expect(simulated.ofType("sst.Secret").map((x) => x.name)).toEqual(["LlmApiKey", "ApiToken"]);
      expect(simulated.ofType("sst.aws.Queue").map((q) => q.name)).toContain(PAYMENTS_QUEUE_NAME);
      const routes = simulated
        .get("sst.aws.ApiGatewayV2", "Api")
        .calls.filter((c) => c.method === "route")
        .map((c) => String(c.args[0]));
      expect(routes.sort()).toEqual(servedRouteKeys("simulated").sort());
      expect(routes).not.toContain("POST /webhooks/stripe");
      expect(simulated.outputs).not.toHaveProperty("stripeWebhook");
      const executor = functionFor(simulated, FUNCTIONS.refundExecutor.handler as Handler);
      expect(((executor.args.link ?? []) as unknown[]).map((l) => simulated.resolve(l).name).sort()).toEqual(
        linksOf("refundExecutor", { paymentProvider: "simulated" }).sort(),
      );
      expect((executor.args.environment as Record<string, string>).PAYMENT_PROVIDER).toBe("simulated");
    });

    it("deploys no refund executor, webhook, payments rule or Stripe secret without PAYMENT_PROVIDER", async () => {
      const bare = await evaluate("test", { PAYMENT_PROVIDER: "" });
      const handlers = deployedFunctions(bare).map((f) => String(f.args.handler));
      expect(handlers).not.toContain(FUNCTIONS.refundExecutor.handler);
      expect(handlers).not.toContain(FUNCTIONS.paymentWebhook.handler);
      expect(bare.ofType("sst.Secret").map((x) => x.name)).toEqual(["LlmApiKey", "ApiToken"]);
      expect(bare.ofType("sst.aws.Queue").map((q) => q.name)).not.toContain(PAYMENTS_QUEUE_NAME);
      const routes = bare
        .get("sst.aws.ApiGatewayV2", "Api")
        .calls.filter((c) => c.method === "route")
        .map((c) => String(c.args[0]));
      expect(routes).not.toContain("POST /webhooks/stripe");
      expect(bare.outputs).not.toHaveProperty("stripeWebhook");
    });

    it("outputs the API URL, the table, the personal-data key, the bus, the downstream queue URLs, the alarm topic, the dashboard and the policy deployed", () => {
      expect(r.outputs).toEqual({
        api: "https://Api.execute-api.eu-west-1.amazonaws.com",
        table: "Table",
        personalDataKey: "alias/claims-crew-test-personal-data",
        bus: "Bus",
        verdictsQueue: "https://sqs.eu-west-1.amazonaws.com/111122223333/VerdictsQueue",
        reviewQueue: "https://sqs.eu-west-1.amazonaws.com/111122223333/ReviewQueue",
        refundsQueue: "https://sqs.eu-west-1.amazonaws.com/111122223333/RefundsQueue",
        stripeWebhook: "https://Api.execute-api.eu-west-1.amazonaws.com/webhooks/stripe",
        reviewerUserPool: "eu-west-1_Reviewers",
        reviewerClient: "client-ReviewerClient",
        alarmTopic: "arn:aws:sns:eu-west-1:111122223333:Alarms",
        dashboard:
          "https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#dashboards/dashboard/claims-crew-test",
        policy: expect.stringMatching(/^infra\/policy\.example\.yaml \(sha256 [0-9a-f]{12}\)$/),
      });
    });

    it("removes the non-production stage's resources on sst remove", () => {
      expect(r.app).toMatchObject({ name: "claims-crew", home: "aws", removal: "remove", protect: false });
    });
  });
});

describe("sst.config.ts wiring (stage production)", () => {
  let r: Recording;
  beforeAll(async () => {
    r = await evaluate("production");
  });

  it("retains data on removal and protects the stage", () => {
    expect(r.app).toMatchObject({ removal: "retain", protect: true });
  });

  it("keeps function and access logs a year", () => {
    for (const fn of deployedFunctions(r))
      expect(fn.args.logging, String(fn.args.handler)).toMatchObject({ retention: "1 year" });
    expect(r.get("sst.aws.ApiGatewayV2", "Api").args.accessLog).toEqual({ retention: "1 year" });
  });

  it("protects the table from deletion and names the bus claims", () => {
    expect(r.get("sst.aws.Dynamo", "Table").args.deletionProtection).toBe(true);
    expect(transformed(r.get("sst.aws.Bus", "Bus").args, "bus").args).toEqual({ name: "claims" });
  });
});

describe("deploy-time settings", () => {
  it("points the LLM functions at another endpoint and model from the deploy environment", async () => {
    const r = await evaluate("test", {
      LLM_BASE_URL: "http://ollama.internal:11434/v1",
      LLM_MODEL: "gemma3:4b",
      LLM_MAX_CONCURRENCY: "4",
    });
    for (const handler of ["functions/worker.handler", "functions/intake-extract.handler"] as const) {
      expect(functionFor(r, handler).args.environment).toMatchObject({
        LLM_BASE_URL: "http://ollama.internal:11434/v1",
        LLM_MODEL: "gemma3:4b",
      });
    }
    const mapping = r
      .ofType("aws.lambda.EventSourceMapping")
      .find((m) => r.resolve(m.args.eventSourceArn).name === "AgentStepsQueue");
    expect(unwrap(mapping?.args.scalingConfig)).toEqual({ maximumConcurrency: 4 });
  });

  it("gives every function CLAIMS_STEP_TIMERS=eager when the deploy says so", async () => {
    const eager = await evaluate("test", { CLAIMS_STEP_TIMERS: "eager" });
    expect(functionFor(eager, "functions/orchestrator.handler").args.environment).toMatchObject({
      CLAIMS_STEP_TIMERS: "eager",
    });
  });

  it("enables the batch and its schedule from the deploy environment", async () => {
    const r = await evaluate("test", { CLAIMS_BATCH_ENABLED: "true", CLAIMS_BATCH_SCHEDULE: "rate(1 hour)" });
    expect(r.get("sst.aws.CronV2", "Batch").args).toMatchObject({ enabled: true, schedule: "rate(1 hour)" });
  });

  it.each([
    ["LLM_PROVIDER", "ollama", /LLM_PROVIDER="ollama" is invalid: expected openai \| rules/],
    ["LLM_MAX_CONCURRENCY", "1", /LLM_MAX_CONCURRENCY="1" is invalid: expected an integer from 2 to 1000/],
    ["CLAIMS_BATCH_ENABLED", "yes", /CLAIMS_BATCH_ENABLED="yes" is invalid/],
    ["CLAIMS_BATCH_SCHEDULE", "daily", /CLAIMS_BATCH_SCHEDULE="daily" is invalid/],
    ["CLAIMS_API_RATE_LIMIT", "fast", /CLAIMS_API_RATE_LIMIT="fast" is invalid/],
    [
      "CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL",
      "verbose",
      /CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL="verbose" is invalid: expected DEBUG \| INFO \| WARN/,
    ],
    ["CLAIMS_STEP_TIMERS", "always", /CLAIMS_STEP_TIMERS="always" is invalid: expected lazy \| eager/],
    [
      "CLAIMS_API_SUBMIT_RATE_LIMIT",
      "60",
      /CLAIMS_API_SUBMIT_RATE_LIMIT="60" is invalid: expected an integer from 1 to 50/,
    ],
  ])("rejects %s=%s with a message naming the variable", async (variable, value, message) => {
    await expect(evaluate("test", { [variable]: value })).rejects.toThrow(message);
  });
});

describe("the shop's order API (ORDER_SOURCE=http): its URL and token go to the functions that read orders only", () => {
  const readers: readonly string[] = ORDER_READERS.map((key) => FUNCTIONS[key].handler);
  const linked = (r: Recording, fn: DeployedFunction) =>
    ((fn.args.link ?? []) as unknown[]).map((l) => r.resolve(l).name);

  it("by default (the table) declares no OrderApiToken secret and gives no function an order setting", async () => {
    const r = await evaluate("test");
    expect(r.ofType("sst.Secret").map((s) => s.name)).not.toContain("OrderApiToken");
    for (const fn of deployedFunctions(r)) {
      expect(linked(r, fn)).not.toContain("OrderApiToken");
      expect(Object.keys((fn.args.environment ?? {}) as object).filter((k) => k.startsWith("ORDER_"))).toEqual([]);
    }
  });

  it("with http, declares the secret and links it, with the URL and the wait, to exactly the order readers", async () => {
    const r = await evaluate("test", {
      ORDER_SOURCE: "http",
      ORDER_API_URL: "https://shop.example.com/api",
      ORDER_SOURCE_MAX_WAIT_S: "300",
    });
    expect(r.ofType("sst.Secret").map((s) => s.name)).toContain("OrderApiToken");
    const functions = deployedFunctions(r);
    expect(readers.length).toBeGreaterThan(0);
    for (const fn of functions) {
      const handler = String(fn.args.handler);
      const reads = readers.includes(handler);
      expect(linked(r, fn).includes("OrderApiToken"), handler).toBe(reads);
      const env = (fn.args.environment ?? {}) as Record<string, string>;
      if (reads)
        expect(env, handler).toMatchObject({
          ORDER_SOURCE: "http",
          ORDER_API_URL: "https://shop.example.com/api",
          ORDER_SOURCE_MAX_WAIT_S: "300",
          ORDER_API_TIMEOUT_MS: "4000",
        });
      else
        expect(
          Object.keys(env).filter((k) => k.startsWith("ORDER_")),
          handler,
        ).toEqual([]);
    }
    expect(readers.every((h) => functions.some((f) => f.args.handler === h))).toBe(true);
  });

  it.each([
    [{ ORDER_SOURCE: "shopify" }, /ORDER_SOURCE="shopify" is invalid: expected table or http/],
    [{ ORDER_SOURCE: "http" }, /ORDER_API_URL is not set/],
    [{ ORDER_SOURCE: "http", ORDER_API_URL: "shop.example.com" }, /ORDER_API_URL="shop.example.com" is invalid/],
    [
      { ORDER_SOURCE: "http", ORDER_API_URL: "https://shop.example.com", ORDER_SOURCE_MAX_WAIT_S: "900" },
      /ORDER_SOURCE_MAX_WAIT_S="900" is invalid: expected an integer from 1 to 840/,
    ],
  ])("stops the deploy on %o with a message naming the variable", async (env, message) => {
    await expect(evaluate("test", env)).rejects.toThrow(message);
  });
});

describe("app/manifest.ts is what deploys (the one source functions/ and local/ read too)", () => {
  let r: Recording;
  beforeAll(async () => {
    r = await evaluate("test");
  });

  it.each(Object.entries(QUEUES))(
    "queue %s has the consumer, FIFO-ness, batch size, visibility and receives of app/manifest.ts",
    (role, fact) => {
      const queue = r.get("sst.aws.Queue", fact.link);
      expect(isFifo(queue)).toBe(fact.fifo);
      expect(seconds(queue.args.visibilityTimeout)).toBe(visibilityTimeoutSeconds(role as keyof typeof QUEUES));
      expect(dlqOf(queue)?.retry).toBe(fact.maxReceives);
      const [subscription] = subscriptionsOf(queue);
      expect(asArgs(subscription?.args[0]).handler).toBe(FUNCTIONS[fact.consumer].handler);
      const batch = (subscription?.args[1] as { batch?: { size?: number; window?: string } }).batch;
      expect(batch?.size).toBe(eventSourceBatch(role as keyof typeof QUEUES).size);
      expect(batch?.size).toBe(fact.batchSize);
      expect(batch?.window === undefined ? 0 : seconds(batch.window)).toBe(
        eventSourceBatch(role as keyof typeof QUEUES).windowSeconds,
      );
    },
  );

  it("refuses event-source settings Lambda would refuse, naming the queue and the limit", () => {
    const with_ = (patch: object) => ({ ...QUEUES.timers, ...patch });
    const check = (patch: object) => eventSourceBatchOf("timers", with_(patch));
    expect(check({ batchSize: 100, batchingWindowSeconds: 60 })).toEqual({ size: 100, windowSeconds: 60 });
    expect(() => check({ batchSize: 11, batchingWindowSeconds: 0 })).toThrow(
      "queue timers: a batch is 1–10 records without a batching window, got 11",
    );
    expect(() => check({ batchSize: 10_001, batchingWindowSeconds: 1 })).toThrow("a batch is 1–10000 records");
    expect(() => check({ batchingWindowSeconds: 301 })).toThrow("a batching window is 0–300 whole seconds, got 301");
    expect(() => check({ fifo: true, batchSize: 10 })).toThrow(EventSourceSettingError);
  });

  it.each(Object.entries(AWS_FUNCTIONS))(
    "function %s has the memory, timeout and exactly the links of app/manifest.ts",
    (_key, fact) => {
      const fn = functionFor(r, fact.handler as Handler);
      expect(fn.args.memory).toBe(fact.memory);
      expect(seconds(fn.args.timeout)).toBe(fact.timeoutSeconds);
      expect(((fn.args.link ?? []) as unknown[]).map((l) => r.resolve(l).name).sort()).toEqual(
        linksOf(_key as FunctionKey, { paymentProvider: "stripe" }).sort(),
      );
    },
  );

  it("routes exactly the route keys of app/manifest.ts served with its payment provider (stripe: every route)", () => {
    const routes = r
      .get("sst.aws.ApiGatewayV2", "Api")
      .calls.filter((c) => c.method === "route")
      .map((c) => String(c.args[0]))
      .sort();
    expect(routes).toEqual(servedRouteKeys("stripe").sort());
    expect(routes).toEqual(Object.keys(ROUTES).sort());
  });
});

describe("the refund policy: a deploy-time input the operator owns, shipped pre-parsed", () => {
  const written = (stage: string) =>
    ClaimsPolicySchema.parse(JSON.parse(readFileSync(`.sst/claims-policy/${stage}.json`, "utf8")));

  it("deploys the operator's CLAIMS_POLICY_FILE as JSON: its contract, agent and LLM defaults, with the file's name and hash", async () => {
    await evaluate("test");
    const policy = written("test");
    const config = parseConfig(readFileSync(POLICY_FILE, "utf8"), POLICY_FILE, Date.now());
    expect(policy).toMatchObject({
      source: POLICY_FILE,
      demo: false,
      run_id: config.simulationId,
      agent: config.agent,
      llm: config.llm,
    });
    expect(policy.source_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("deploys the demo's scenarios/config.yaml to the demo stage only, where it is the default", async () => {
    await evaluate("demo");
    expect(written("demo")).toMatchObject({ source: "scenarios/config.yaml", demo: true });
    await expect(evaluate("test", { CLAIMS_POLICY_FILE: undefined })).rejects.toThrow(
      /CLAIMS_POLICY_FILE is not set: stage test needs your refund policy file/,
    );
    await expect(evaluate("production", { CLAIMS_POLICY_FILE: "scenarios/config.yaml" })).rejects.toThrow(
      /CLAIMS_POLICY_FILE=scenarios\/config.yaml cannot be deployed: it is the demo's policy, which deploys only to the stage "demo"/,
    );
  });

  it.each([
    [
      "a file that does not exist",
      "policy/nope.yaml",
      /CLAIMS_POLICY_FILE=policy\/nope.yaml cannot be deployed: the file does not exist/,
    ],
    [
      "a file with a mistake (named at its line)",
      "infra/fixtures/policy-bad-limit.yaml",
      /cannot be deployed: .*policy-bad-limit\.yaml:\d+ .*max_refund_without_escalation/s,
    ],
    [
      "an agent the registry refuses",
      "infra/fixtures/policy-agent-v2.yaml",
      /cannot be deployed: the agent registry refuses its agent/,
    ],
  ])("stops the deploy for %s", async (_case, file, message) => {
    await expect(evaluate("test", { CLAIMS_POLICY_FILE: file })).rejects.toThrow(message);
  });
});

describe("the scheduled batch: a simulation unless the operator says otherwise", () => {
  it("runs an operator's claims file as real claims only with CLAIMS_BATCH_LIVE=true", async () => {
    const r = await evaluate("test", {
      CLAIMS_BATCH_FILE: "scenarios/fixtures/roa-dir-v1.scenarios.yaml",
      CLAIMS_BATCH_LIVE: "true",
    });
    const batch = functionFor(r, "functions/batch.handler").args;
    expect(batch.environment).toMatchObject({ CLAIMS_BATCH_MODE: "live" });
    expect(batch.copyFiles).toContainEqual({
      from: "scenarios/fixtures/roa-dir-v1.scenarios.yaml",
      to: "claims-batch.yaml",
    });
    const simulated = await evaluate("test", { CLAIMS_BATCH_FILE: "scenarios/fixtures/roa-dir-v1.scenarios.yaml" });
    expect(functionFor(simulated, "functions/batch.handler").args.environment).toMatchObject({
      CLAIMS_BATCH_MODE: "simulation",
    });
  });

  it("refuses to run the demo scenarios as real claims, and a claims file with a mistake", async () => {
    await expect(evaluate("test", { CLAIMS_BATCH_LIVE: "true" })).rejects.toThrow(
      /CLAIMS_BATCH_FILE=scenarios\/scenarios.yaml cannot be deployed: the demo scenarios only ever run as a simulation/,
    );
    await expect(evaluate("test", { CLAIMS_BATCH_FILE: POLICY_FILE })).rejects.toThrow(
      /CLAIMS_BATCH_FILE=infra\/policy.example.yaml cannot be deployed: .*scenarios/s,
    );
  });
});

describe("alarms, their topic and the dashboard", () => {
  let r: Recording;
  beforeAll(async () => {
    r = await evaluate("test", { CLAIMS_ALARM_ENDPOINT: "https://hooks.example.com/claims" });
  });

  const alarms = () =>
    r
      .ofType("aws.cloudwatch.MetricAlarm")
      .map((a) => ({ id: a.name, ...(unwrap(a.args) as Args) }) as Args & { id: string });
  const alarmOn = (metricName: string, dimension: string, value: string) =>
    alarms().filter(
      (a) => a.metricName === metricName && (a.dimensions as Record<string, string>)[dimension] === value,
    );

  it("notifies one SNS topic, subscribed to the deploy parameter CLAIMS_ALARM_ENDPOINT, on ALARM and back to OK", () => {
    expect(r.ofType("sst.aws.SnsTopic").map((t) => t.name)).toEqual(["Alarms"]);
    const subscriptions = r.ofType("aws.sns.TopicSubscription").map((s) => unwrap(s.args));
    expect(subscriptions).toEqual([
      {
        topic: "arn:aws:sns:eu-west-1:111122223333:Alarms",
        protocol: "https",
        endpoint: "https://hooks.example.com/claims",
      },
    ]);
    expect(alarms().length).toBeGreaterThan(0);
    for (const alarm of alarms()) {
      expect(alarm.alarmActions, alarm.id).toEqual(["arn:aws:sns:eu-west-1:111122223333:Alarms"]);
      expect(alarm.okActions, alarm.id).toEqual(["arn:aws:sns:eu-west-1:111122223333:Alarms"]);
      expect(alarm.comparisonOperator, alarm.id).toBe("GreaterThanOrEqualToThreshold");
      expect(alarm.treatMissingData, alarm.id).toBe("notBreaching");
      expect(String(alarm.alarmDescription).length, alarm.id).toBeGreaterThan(20);
      expect(alarm.name, alarm.id).toBe(`claims-crew-test-${alarm.id}`);
    }
  });

  it("alarms on any message in every dead-letter queue, the schedules' included", () => {
    const dlqs = [...deadLetterQueues(r)].sort();
    expect(dlqs).toHaveLength(10);
    for (const dlq of dlqs) {
      expect(alarmOn("ApproximateNumberOfMessagesVisible", "QueueName", dlq), dlq).toEqual([
        expect.objectContaining({
          namespace: "AWS/SQS",
          statistic: "Maximum",
          threshold: 1,
          period: 300,
          evaluationPeriods: 1,
        }),
      ]);
    }
  });

  it("alarms on the age of the oldest message of every queue that is not a DLQ: work queues in minutes, downstream ones after a day unread", () => {
    const expected: Record<string, [number, number]> = {
      CrewEventsQueue: [600, 2],
      ProposalsQueue: [600, 2],
      AgentStepsQueue: [1800, 2],
      ExtractionQueue: [1800, 2],
      TimersQueue: [1800, 2],
      PaymentsQueue: [1800, 2],
      VerdictsQueue: [24 * 3600, 1],
      ReviewQueue: [24 * 3600, 1],
      RefundsQueue: [24 * 3600, 1],
    };
    const dlqs = deadLetterQueues(r);
    const queues = r
      .ofType("sst.aws.Queue")
      .map((q) => q.name)
      .filter((name) => !dlqs.has(name));
    expect(queues.sort()).toEqual(Object.keys(expected).sort());
    for (const [queue, [threshold, periods]] of Object.entries(expected)) {
      expect(alarmOn("ApproximateAgeOfOldestMessage", "QueueName", queue), queue).toEqual([
        expect.objectContaining({
          namespace: "AWS/SQS",
          statistic: "Maximum",
          threshold,
          period: 300,
          evaluationPeriods: periods,
        }),
      ]);
    }
    expect(alarms().filter((a) => a.metricName === "ApproximateAgeOfOldestMessage")).toHaveLength(9);
  });

  it("pages after CLAIMS_ALARM_UNREAD_HOURS unread on the downstream queues, and refuses a value past their 14-day retention", async () => {
    const tuned = await evaluate("test", { CLAIMS_ALARM_UNREAD_HOURS: "6" });
    const refunds = tuned
      .ofType("aws.cloudwatch.MetricAlarm")
      .map((a) => unwrap(a.args) as Args)
      .filter(
        (a) =>
          (a.dimensions as Record<string, string>).QueueName === "RefundsQueue" &&
          a.metricName === "ApproximateAgeOfOldestMessage",
      );
    expect(refunds.map((a) => a.threshold)).toEqual([6 * 3600]);
    await expect(evaluate("test", { CLAIMS_ALARM_UNREAD_HOURS: "400" })).rejects.toThrow(
      /CLAIMS_ALARM_UNREAD_HOURS="400" is invalid: expected an integer from 1 to 312/,
    );
  });

  it("alarms on every HTTP route's RequestFailures (the shell's 500s), every consumer's MessageFailures and the API's 5xx", () => {
    const routes = Object.entries(ROUTES)
      .filter(([key]) => key !== "GET /health")
      .map(([key]) => key);
    for (const key of routes)
      expect(alarmOn("RequestFailures", "Route", key), key).toEqual([
        expect.objectContaining({
          namespace: "ClaimsCrew/test",
          dimensions: { service: METRICS_SERVICE, Route: key },
          statistic: "Sum",
          threshold: 1,
          period: 300,
          evaluationPeriods: 1,
        }),
      ]);
    expect(alarms().filter((a) => a.metricName === "RequestFailures")).toHaveLength(routes.length);
    const consumers = [...Object.values(QUEUES).map((q) => q.consumer), "refundExecutor"];
    for (const key of consumers)
      expect(alarmOn("MessageFailures", "Consumer", key), key).toEqual([
        expect.objectContaining({
          namespace: "ClaimsCrew/test",
          dimensions: { service: METRICS_SERVICE, Consumer: key },
          statistic: "Sum",
          threshold: 1,
        }),
      ]);
    expect(alarms().filter((a) => a.metricName === "MessageFailures")).toHaveLength(consumers.length);
    expect(alarms().filter((a) => a.namespace === "AWS/ApiGateway")).toEqual([
      expect.objectContaining({
        metricName: "5xx",
        dimensions: { ApiId: "apiid-Api" },
        statistic: "Sum",
        threshold: 5,
      }),
    ]);
  });

  it("names every function claims-crew-<stage>-<key> and alarms on each one's errors and throttles", () => {
    for (const [key, fact] of Object.entries(AWS_FUNCTIONS)) {
      const name = `claims-crew-test-${key}`;
      expect(functionFor(r, fact.handler as Handler).args.name).toBe(name);
      for (const metric of ["Errors", "Throttles"]) {
        expect(alarmOn(metric, "FunctionName", name), `${key} ${metric}`).toEqual([
          expect.objectContaining({
            namespace: "AWS/Lambda",
            statistic: "Sum",
            threshold: 1,
            period: 300,
            evaluationPeriods: 1,
          }),
        ]);
      }
    }
  });

  it("alarms on the live review backlog (count for 15 minutes, oldest wait, any overdue), thresholds from the deploy environment", async () => {
    const backlog = (rec: Recording) =>
      rec
        .ofType("aws.cloudwatch.MetricAlarm")
        .map((a) => unwrap(a.args) as Args)
        .filter((a) => String(a.metricName).includes("Review"));
    const expected = (count: number, seconds: number) => [
      expect.objectContaining({
        namespace: "ClaimsCrew/test",
        metricName: "PendingReviews",
        dimensions: { service: METRICS_SERVICE, Flow: "live" },
        statistic: "Maximum",
        threshold: count,
        period: 300,
        evaluationPeriods: 3,
      }),
      expect.objectContaining({
        namespace: "ClaimsCrew/test",
        metricName: "OldestPendingReviewAge",
        dimensions: { service: METRICS_SERVICE, Flow: "live" },
        statistic: "Maximum",
        threshold: seconds,
        period: 300,
        evaluationPeriods: 1,
      }),
      // Any live review past its due time (the policy's review_due_days / review_due_hours).
      expect.objectContaining({
        namespace: "ClaimsCrew/test",
        metricName: "OverdueReviews",
        dimensions: { service: METRICS_SERVICE, Flow: "live" },
        statistic: "Maximum",
        threshold: 1,
        period: 300,
        evaluationPeriods: 1,
      }),
    ];
    expect(backlog(r)).toEqual(expected(20, 24 * 3600));
    const tuned = await evaluate("test", { CLAIMS_ALARM_REVIEW_BACKLOG: "5", CLAIMS_ALARM_REVIEW_AGE_HOURS: "4" });
    expect(backlog(tuned)).toEqual(expected(5, 4 * 3600));
  });

  it("alarms on any live refund not settled refund_due_days − 4 days after its clock started", () => {
    expect(alarmOn("RefundsDueSoon", "Flow", "live")).toEqual([
      expect.objectContaining({
        namespace: "ClaimsCrew/test",
        dimensions: { service: METRICS_SERVICE, Flow: "live" },
        statistic: "Maximum",
        threshold: 1,
        period: 300,
        evaluationPeriods: 1,
      }),
    ]);
  });

  it("has exactly these alarms: 10 DLQs, 9 queue ages, errors and throttles of every deployed function, 12 routes, the API, 6 consumers, 3 on reviews, 1 on refunds due", () => {
    expect(alarms()).toHaveLength(10 + 9 + 2 * Object.keys(AWS_FUNCTIONS).length + 12 + 1 + 6 + 3 + 1);
  });

  it("sends every function's metrics to the stage's namespace", () => {
    for (const fact of Object.values(AWS_FUNCTIONS)) {
      expect(functionFor(r, fact.handler as Handler).args.environment).toMatchObject({
        POWERTOOLS_METRICS_NAMESPACE: "ClaimsCrew/test",
      });
    }
  });

  it("graphs every custom metric, every DLQ, both queue ages and every function on one dashboard, with the alarms", () => {
    const dashboards = r.ofType("aws.cloudwatch.Dashboard");
    expect(dashboards.map((d) => unwrap(d.args.dashboardName))).toEqual(["claims-crew-test"]);
    const body = String(unwrap(dashboards[0]?.args.dashboardBody));
    const parsed = JSON.parse(body) as {
      widgets: { type: string; properties: { region?: string; alarms?: string[] } }[];
    };
    for (const name of Object.keys(METRICS))
      expect(body.includes(`"ClaimsCrew/test","${name}"`) || body.includes(`MetricName=\\"${name}\\"`), name).toBe(
        true,
      );
    for (const dlq of deadLetterQueues(r)) expect(body, dlq).toContain(`"QueueName","${dlq}"`);
    for (const key of Object.keys(AWS_FUNCTIONS))
      expect(body, key).toContain(`"FunctionName","claims-crew-test-${key}"`);
    expect(parsed.widgets.filter((w) => w.type === "metric").every((w) => w.properties.region === "eu-west-1")).toBe(
      true,
    );
    expect(parsed.widgets.find((w) => w.type === "alarm")?.properties.alarms).toHaveLength(alarms().length);
  });

  it("subscribes an email address by the email protocol, refuses anything else, and demands an endpoint in production", async () => {
    const email = await evaluate("test", { CLAIMS_ALARM_ENDPOINT: "oncall@example.com" });
    expect(email.ofType("aws.sns.TopicSubscription").map((s) => unwrap(s.args))).toEqual([
      expect.objectContaining({ protocol: "email", endpoint: "oncall@example.com" }),
    ]);
    const none = await evaluate("test");
    expect(none.ofType("aws.sns.TopicSubscription")).toEqual([]);
    await expect(evaluate("test", { CLAIMS_ALARM_ENDPOINT: "http://insecure.example.com" })).rejects.toThrow(
      /CLAIMS_ALARM_ENDPOINT="http:\/\/insecure.example.com" is invalid: expected an email address or an https:\/\/ URL/,
    );
    await expect(evaluate("production", { CLAIMS_ALARM_ENDPOINT: undefined })).rejects.toThrow(
      /CLAIMS_ALARM_ENDPOINT is not set: the production stage must notify someone/,
    );
  });
});

// --- AWS hardening: each rule is a checker that lists its violations, run on the app and on a counter-example ---

/** Every Allow statement of a queue policy must name its sender: no statement without an aws:SourceArn condition. */
function queuePoliciesWithoutSourceArn(r: Recording): string[] {
  return r.ofType("aws.sqs.QueuePolicy").flatMap((p) => {
    const doc = JSON.parse(String(unwrap(p.args.policy))) as PolicyDocument;
    return doc.Statement.filter((s) => {
      const condition = (s.Condition ?? {}) as Record<string, Record<string, unknown>>;
      return !Object.values(condition).some((c) => typeof c?.["aws:SourceArn"] === "string");
    }).map(() => `${p.name}: a statement without an aws:SourceArn condition`);
  });
}

/** The queue a function consumes, if any (its event-source mapping). */
function consumedQueueArn(r: Recording, fn: DeployedFunction): string | undefined {
  return fn.trigger.startsWith("queue ") ? r.get("sst.aws.Queue", fn.trigger.slice(6)).arn : undefined;
}

/** A statement's resource by name: a component's name, `<table>/index`, or `own log group`. */
function resourceName(r: Recording, arn: unknown): string {
  const text = String(unwrap(arn));
  if (/^arn:aws:logs:.*:log-group:\/aws\/lambda\/[^*]+:\*$/.test(text)) return "own log group";
  if (text.endsWith("/index/*")) return `${r.resolve(text.slice(0, -"/index/*".length)).name}/index`;
  return r.resolve(text).name;
}

/** No role with a wildcard action or resource, and none with a managed policy (the basic role writes every log group). */
function wildcardGrants(r: Recording): string[] {
  return deployedFunctions(r).flatMap((fn) => {
    const role = roleOf(fn.args, consumedQueueArn(r, fn));
    const handler = String(fn.args.handler);
    return [
      ...role.statements.flatMap((s) => [
        ...s.actions.filter((a) => a.includes("*")).map((a) => `${handler}: action ${a}`),
        ...s.resources.filter((x) => String(x) === "*").map(() => `${handler}: resource *`),
      ]),
      ...role.managedPolicyArns.map((arn) => `${handler}: managed policy ${arn}`),
    ];
  });
}

/** A function's rights as resource name → sorted actions. */
function grantsOf(r: Recording, fn: DeployedFunction): Record<string, string[]> {
  const grants: Record<string, Set<string>> = {};
  for (const s of roleOf(fn.args, consumedQueueArn(r, fn)).statements)
    for (const resource of s.resources) {
      const name = resourceName(r, resource);
      grants[name] ??= new Set();
      for (const action of s.actions) grants[name].add(action);
    }
  return Object.fromEntries(Object.entries(grants).map(([k, v]) => [k, [...v].sort()]));
}

/** Every event-source mapping has a maximum concurrency of 2 to 1000 (AWS's range). */
function uncappedEventSources(r: Recording): string[] {
  return r
    .ofType("aws.lambda.EventSourceMapping")
    .filter((m) => {
      const cap = (unwrap(m.args.scalingConfig) as { maximumConcurrency?: number } | undefined)?.maximumConcurrency;
      return cap === undefined || cap < 2 || cap > 1000;
    })
    .map((m) => `${m.name}: no maximumConcurrency`);
}

/**
 * No reserved concurrency that a new account (10 concurrent executions: Lambda keeps 100 unreserved) cannot give:
 * the default deploy on such an account reserves nothing (CLAIMS_RESERVED_CONCURRENCY=on is the operator's choice).
 */
function reservationOnNewAccount(r: Recording): string[] {
  return deployedFunctions(r)
    .filter((fn) => ((fn.args.concurrency as { reserved?: number } | undefined)?.reserved ?? 0) > 0)
    .map(
      (fn) =>
        `${String(fn.args.handler)}: reserves ${(fn.args.concurrency as { reserved: number }).reserved} on an account of ${NEW_ACCOUNT_CONCURRENCY}`,
    );
}

/** The alarms of a recording, flattened: metric, namespace and dimensions. */
function alarmsOf(r: Recording) {
  return r
    .ofType("aws.cloudwatch.MetricAlarm")
    .map((a) => unwrap(a.args) as Args & { dimensions?: Record<string, string> });
}

/**
 * Every function and every queue has an alarm covering it: a function its Errors and Throttles (by FunctionName),
 * a DLQ its depth, any other queue the age of its oldest message (by QueueName).
 */
function unalarmed(r: Recording): string[] {
  const alarms = alarmsOf(r);
  const has = (metric: string, dim: string, value: string) =>
    alarms.some((a) => a.metricName === metric && a.dimensions?.[dim] === value);
  const dlqs = deadLetterQueues(r);
  const functions = deployedFunctions(r).flatMap((fn) => {
    const name = String(fn.args.name ?? fn.args.handler);
    return ["Errors", "Throttles"]
      .filter((m) => !has(m, "FunctionName", name))
      .map((m) => `function ${name}: no ${m} alarm`);
  });
  const queues = r.ofType("sst.aws.Queue").flatMap((q) => {
    const metric = dlqs.has(q.name) ? "ApproximateNumberOfMessagesVisible" : "ApproximateAgeOfOldestMessage";
    return has(metric, "QueueName", q.name) ? [] : [`queue ${q.name}: no ${metric} alarm`];
  });
  return [...functions, ...queues];
}

/** Every queue keeps messages 14 days; every DLQ redrive allows at least 5 receives (throttling is not a failure). */
function shortRetentionOrRedrive(r: Recording): string[] {
  return r.ofType("sst.aws.Queue").flatMap((q) => {
    const retention = (q.args.transform as { queue?: { messageRetentionSeconds?: number } } | undefined)?.queue
      ?.messageRetentionSeconds;
    const retry = dlqOf(q)?.retry;
    return [
      ...(retention === 14 * 24 * 3600 ? [] : [`${q.name}: retention ${retention ?? "4 days (default)"}`]),
      ...(retry !== undefined && retry < 5 ? [`${q.name}: ${retry} receives before its DLQ`] : []),
    ];
  });
}

/** A FIFO queue runs in high-throughput mode. */
function lowThroughputFifo(r: Recording): string[] {
  return r
    .ofType("sst.aws.Queue")
    .filter((q) => isFifo(q) && dlqOf(q) !== undefined)
    .filter((q) => {
      const queue = (q.args.transform as { queue?: Args } | undefined)?.queue ?? {};
      return queue.deduplicationScope !== "messageGroup" || queue.fifoThroughputLimit !== "perMessageGroupId";
    })
    .map((q) => `${q.name}: not in high-throughput mode`);
}

/** Fixed physical names (functions and their log groups, the bus, alarms, the dashboard) are replaced delete-first. */
function createFirstFixedNames(r: Recording): string[] {
  const functions = deployedFunctions(r)
    .filter((fn) => fn.args.name !== undefined)
    .flatMap((fn) =>
      ["function", "logGroup"]
        .filter((key) => transformed(fn.args, key).opts.deleteBeforeReplace !== true)
        .map((key) => `${String(fn.args.handler)}: ${key} named ${String(fn.args.name)} replaced create-first`),
    );
  const bus = r
    .ofType("sst.aws.Bus")
    .filter((b) => transformed(b.args, "bus").opts.deleteBeforeReplace !== true)
    .map((b) => `${b.name}: replaced create-first`);
  const named = [
    ...r.ofType("aws.cloudwatch.MetricAlarm"),
    ...r.ofType("aws.cloudwatch.Dashboard"),
    ...r.ofType("aws.kms.Alias"),
  ]
    .filter((c) => c.opts.deleteBeforeReplace !== true)
    .map((c) => `${c.name}: replaced create-first`);
  return [...functions, ...bus, ...named];
}

/** Every schedule has a dead-letter queue. */
function schedulesWithoutDlq(r: Recording): string[] {
  return r
    .ofType("sst.aws.CronV2")
    .filter((c) => c.args.dlq === undefined)
    .map((c) => `${c.name}: no DLQ`);
}

/** POST /claims has a throttle of its own, below every route's default. */
function submitRouteUnthrottled(r: Recording): string[] {
  return r.ofType("sst.aws.ApiGatewayV2").flatMap((api) => {
    const stage = transformed(api.args, "stage").args as {
      defaultRouteSettings?: { throttlingRateLimit?: number };
      routeSettings?: { routeKey: string; throttlingRateLimit?: number }[];
    };
    const submit = stage.routeSettings?.find((s) => s.routeKey === "POST /claims");
    const fallback = stage.defaultRouteSettings?.throttlingRateLimit ?? Number.POSITIVE_INFINITY;
    return submit?.throttlingRateLimit !== undefined && submit.throttlingRateLimit < fallback
      ? []
      : [`${api.name}: POST /claims has no throttle below the default`];
  });
}

const HARDENING_RULES = {
  "no queue policy lacks an aws:SourceArn condition": queuePoliciesWithoutSourceArn,
  "no role has a wildcard action or resource, or a managed policy": wildcardGrants,
  "every event-source mapping has a maximum concurrency": uncappedEventSources,
  "no reserved concurrency above what a new account (10) can give": reservationOnNewAccount,
  "every function and every queue has an alarm covering it": unalarmed,
  "every queue keeps messages 14 days and redrives after 5 receives or more": shortRetentionOrRedrive,
  "FIFO queues run in high-throughput mode": lowThroughputFifo,
  "fixed names are replaced delete-first": createFirstFixedNames,
  "every schedule has a DLQ": schedulesWithoutDlq,
  "POST /claims is throttled below the other routes": submitRouteUnthrottled,
} as const satisfies Record<string, (r: Recording) => string[]>;

/** Exactly the actions each function may use, by resource (the consumed queue's receive rights come from SST). */
const READ = ["dynamodb:GetItem", "dynamodb:Query"];
const WRITE = [
  ...READ,
  "dynamodb:BatchWriteItem",
  "dynamodb:DeleteItem",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
].sort();
const INDEX = ["dynamodb:Query"];
const SEND = ["sqs:SendMessage"];
const PUBLISH = ["events:DescribeEventBus", "events:PutEvents"];
const RECEIVE = [
  "sqs:ChangeMessageVisibility",
  "sqs:DeleteMessage",
  "sqs:GetQueueAttributes",
  "sqs:GetQueueUrl",
  "sqs:ReceiveMessage",
];
const LOGS = ["logs:CreateLogStream", "logs:PutLogEvents"];
/** The stage's KMS key: make and unwrap data keys (only with the personal-data encryption context, checked below). */
const KMS = ["kms:Decrypt", "kms:GenerateDataKey"];
const EXPECTED_GRANTS: Record<Handler, Record<string, string[]>> = {
  // DeleteItem only on idempotency keys' items (dynamodb:LeadingKeys, checked below); no UpdateItem, no BatchWriteItem.
  "functions/intake-api.handler": {
    Table: ["dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"],
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    ExtractionQueue: SEND,
    CrewEventsQueue: SEND,
  },
  "functions/authorizer.handler": {},
  "functions/review-api.handler": {
    Table: WRITE,
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    Bus: PUBLISH,
    ExtractionQueue: SEND,
    CrewEventsQueue: SEND,
  },
  "functions/intake-extract.handler": {
    Table: WRITE,
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    CrewEventsQueue: SEND,
    Bus: PUBLISH,
    ExtractionQueue: [...RECEIVE, ...SEND].sort(),
  },
  "functions/orchestrator.handler": {
    Table: WRITE,
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    AgentStepsQueue: SEND,
    ProposalsQueue: SEND,
    TimersQueue: SEND,
    Bus: PUBLISH,
    CrewEventsQueue: RECEIVE,
  },
  "functions/worker.handler": {
    Table: WRITE,
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    CrewEventsQueue: SEND,
    AgentStepsQueue: [...RECEIVE, ...SEND].sort(),
  },
  "functions/kernel.handler": {
    Table: WRITE,
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    Bus: PUBLISH,
    ProposalsQueue: RECEIVE,
  },
  "functions/refund-executor.handler": {
    Table: WRITE,
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    Bus: PUBLISH,
    PaymentsQueue: RECEIVE,
  },
  "functions/payment-webhook.handler": { Table: WRITE, "Table/index": INDEX, PersonalDataKms: KMS, Bus: PUBLISH },
  "functions/timer.handler": {
    Table: READ,
    "Table/index": INDEX,
    CrewEventsQueue: SEND,
    TimersQueue: [...RECEIVE, ...SEND].sort(),
  },
  "functions/sweep.handler": {
    Table: WRITE,
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    CrewEventsQueue: SEND,
    ExtractionQueue: SEND,
    ProposalsQueue: SEND,
    Bus: PUBLISH,
  },
  "functions/batch.handler": {
    Table: WRITE,
    "Table/index": INDEX,
    PersonalDataKms: KMS,
    ExtractionQueue: SEND,
    CrewEventsQueue: SEND,
  },
};

describe("AWS hardening", () => {
  let app: Recording;
  let unhardened: Recording;
  beforeAll(async () => {
    app = await evaluate("production");
    unhardened = await evaluateSstConfig({
      stage: "test",
      configPath: new URL("./fixtures/unhardened.config.ts", import.meta.url).pathname,
    });
  });

  it.each(Object.entries(HARDENING_RULES))("%s", (_rule, check) => {
    expect(check(app)).toEqual([]);
    // The same rule on SST's defaults without the hardening: it must find the fault.
    expect(check(unhardened).length).toBeGreaterThan(0);
  });

  it("finds SST's open policy of bus.subscribeQueue, SST's own whole-service links and uncapped subscriptions", () => {
    expect(queuePoliciesWithoutSourceArn(unhardened)).toEqual([
      "BusSubscriberRefundsPolicy: a statement without an aws:SourceArn condition",
    ]);
    expect(wildcardGrants(unhardened)).toEqual(
      expect.arrayContaining([
        "functions/worker.handler: action dynamodb:*",
        "functions/worker.handler: action sqs:*",
        "functions/worker.handler: action events:*",
        `functions/worker.handler: managed policy arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole`,
      ]),
    );
    expect(uncappedEventSources(unhardened)).toHaveLength(2);
  });

  it.each(Object.entries(EXPECTED_GRANTS))("%s may use exactly these actions", (handler, expected) => {
    const fn = functionFor(app, handler as Handler);
    expect(grantsOf(app, fn)).toEqual({ ...expected, "own log group": LOGS });
    // Its own log group only: claims-crew-<stage>-<key>.
    const logs = roleOf(fn.args).statements.find((s) => s.actions.includes("logs:PutLogEvents"));
    expect(logs?.resources.map(String)).toEqual([
      `arn:aws:logs:eu-west-1:111122223333:log-group:/aws/lambda/${String(fn.args.name)}:*`,
    ]);
  });

  it("lets the intake API delete only idempotency keys' items (dynamodb:LeadingKeys IDEM#*), and every other grant but KMS's is unconditional", () => {
    const conditional = deployedFunctions(app).flatMap((fn) =>
      roleOf(fn.args)
        .statements.filter((st) => st.conditions !== undefined && !st.actions.some((a) => a.startsWith("kms:")))
        .map((st) => ({
          handler: fn.args.handler,
          actions: st.actions,
          resources: st.resources.map(String),
          conditions: st.conditions,
        })),
    );
    expect(conditional).toEqual([
      {
        handler: "functions/intake-api.handler",
        actions: ["dynamodb:DeleteItem"],
        resources: ["arn:aws:dynamodb:eu-west-1:111122223333:table/Table"],
        conditions: [{ test: "ForAllValues:StringLike", variable: "dynamodb:LeadingKeys", values: ["IDEM#*"] }],
      },
    ]);
    const unconditional = roleOf(functionFor(app, "functions/intake-api.handler").args).statements.filter(
      (st) => st.conditions === undefined,
    );
    expect(unconditional.flatMap((st) => st.actions)).not.toContain("dynamodb:DeleteItem");
    expect(keys.idempotency("k").pk.startsWith(IDEMPOTENCY_PK_PREFIX)).toBe(true);
  });

  it("uses the stage's KMS key only for data keys of personal data: rotated, and never a grant without the encryption context", () => {
    const key = app.get("aws.kms.Key", "PersonalDataKms");
    expect(key.args).toMatchObject({ enableKeyRotation: true, deletionWindowInDays: 30, keyUsage: "ENCRYPT_DECRYPT" });
    expect(unwrap(app.get("aws.kms.Alias", "PersonalDataKmsAlias").args.name)).toBe(
      "alias/claims-crew-production-personal-data",
    );
    const kms = deployedFunctions(app).flatMap((fn) =>
      roleOf(fn.args)
        .statements.filter((st) => st.actions.some((a) => a.startsWith("kms:")))
        .map((st) => ({ handler: fn.args.handler, ...st, resources: st.resources.map(String) })),
    );
    // Every function that writes the table; not the authorizer (no table) nor the timer (it only reads, and sends ticks).
    expect(kms.map((st) => st.handler).sort()).toEqual(
      deployedFunctions(app)
        .map((fn) => fn.args.handler)
        .filter((h) => h !== "functions/authorizer.handler" && h !== "functions/timer.handler")
        .sort(),
    );
    for (const st of kms)
      expect(st).toEqual({
        handler: st.handler,
        actions: ["kms:GenerateDataKey", "kms:Decrypt"],
        resources: [key.arn],
        conditions: [
          { test: "StringEquals", variable: "kms:EncryptionContext:purpose", values: [PERSONAL_DATA_KMS_PURPOSE] },
        ],
      });
    const link = (functionFor(app, "functions/kernel.handler").args.link as { getSSTLink(): unknown }[])
      .map((l) => l.getSSTLink())
      .find((l) => Object.keys((l as { properties: Args }).properties).includes("keyId"));
    expect(unwrap((link as { properties: Args }).properties.keyId)).toBe(key.arn);
    expect((link as { include?: unknown[] }).include ?? []).toEqual([]);
  });

  it("links the table, the queues and the bus for their properties only, as SST's own links name them", () => {
    expect([...app.wrappedLinks].sort()).toEqual(["Bus", "Dynamo", "Queue"]);
    const worker = functionFor(app, "functions/worker.handler");
    const properties = ((worker.args.link ?? []) as { getSSTLink(): { properties: Args; include?: unknown[] } }[]).map(
      (l) => {
        const link = l.getSSTLink();
        return [Object.keys(link.properties).sort(), link.include ?? []];
      },
    );
    expect(properties).toEqual([
      [["name"], []],
      [["keyId"], []],
      [["url"], []],
      [["url"], []],
      [["value"], []],
    ]);
  });

  it("sends the schedules' undeliverable invocations to their DLQ", () => {
    for (const name of ["Sweep", "Batch"]) {
      expect(app.resolve(app.get("sst.aws.CronV2", name).args.dlq).name).toBe("SchedulesDlq");
    }
  });

  it("gives the LLM functions one LLM call's budget plus margin, and refuses a policy whose call would not fit", async () => {
    for (const handler of ["functions/worker.handler", "functions/intake-extract.handler"] as const) {
      const timeout = seconds(functionFor(app, handler).args.timeout);
      expect(timeout).toBeGreaterThan(LLM_CALL_BUDGET_SECONDS);
      expect(timeout).toBeLessThanOrEqual(LLM_CALL_BUDGET_SECONDS + 30);
    }
    await expect(evaluate("test", { CLAIMS_POLICY_FILE: "infra/fixtures/policy-slow-llm.yaml" })).rejects.toThrow(
      /policy-slow-llm\.yaml cannot be deployed: llm_defaults\.timeout_ms is 60000, but one LLM call may take at most 30000 ms/,
    );
  });
});

/** The IAM action each AWS SDK command the handlers send needs (SendMessageBatch is authorised as SendMessage). */
const COMMAND_ACTIONS: Record<string, string> = {
  GetCommand: "dynamodb:GetItem",
  PutCommand: "dynamodb:PutItem",
  UpdateCommand: "dynamodb:UpdateItem",
  DeleteCommand: "dynamodb:DeleteItem",
  QueryCommand: "dynamodb:Query",
  BatchWriteCommand: "dynamodb:BatchWriteItem",
  SendMessageCommand: "sqs:SendMessage",
  SendMessageBatchCommand: "sqs:SendMessage",
  PutEventsCommand: "events:PutEvents",
  DescribeEventBusCommand: "events:DescribeEventBus",
  GenerateDataKeyCommand: "kms:GenerateDataKey",
  DecryptCommand: "kms:Decrypt",
};

/** Commands in the bundles that no handler sends: adapters/aws/table.ts creates the table for the local stack and the CLI. */
const NOT_SENT_BY_HANDLERS = new Set(["CreateTableCommand", "DescribeTableCommand"]);

describe("the grants cover what the handlers send", () => {
  it("every AWS SDK command in a deployed handler's bundle needs an action some function is granted", async () => {
    const granted = new Set(Object.values(ACTIONS).flat());
    // All handlers in one build (as sst deploy bundles each; the inputs are the union). Only our own sources are
    // read here, so npm packages stay imports: esbuild resolves the same project files as the whole bundles reach
    // (compared with esbuild 0.28.2) without parsing the ~1 100 files of the SDK, zod and openai (1.4 against 6.6
    // CPU-s); whether the handlers bundle whole is functions/bundles.test.ts's to check.
    const result = await build({
      entryPoints: [...new Set(Object.values(FUNCTIONS).map((f) => `${f.handler.replace(/\.[^.]+$/, "")}.ts`))],
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent",
      outdir: "out",
    });
    const sources = Object.keys(result.metafile.inputs).filter((input) => !input.includes("node_modules"));
    const commands = new Set(
      sources.flatMap((file) => [...readFileSync(file, "utf8").matchAll(/new (\w+Command)\(/g)].map((m) => m[1]!)),
    );
    // The adapters' calls are in the bundles (a bundle that lost them would pass vacuously).
    expect([...commands]).toEqual(expect.arrayContaining(["PutCommand", "SendMessageCommand", "PutEventsCommand"]));
    for (const command of [...commands].filter((c) => !NOT_SENT_BY_HANDLERS.has(c))) {
      const action = COMMAND_ACTIONS[command];
      expect(action, `${command} has an IAM action in COMMAND_ACTIONS`).toBeDefined();
      expect(granted.has(action as never), `${action} (${command}) is granted by app/manifest.ts ACTIONS`).toBe(true);
    }
    // A generous bound, not a speed goal.
  }, 180_000);
});

describe("reviewers on AWS: the JWT authorizer of the review routes", () => {
  const REVIEW_ROUTES = Object.entries(ROUTES)
    .filter(([, route]) => route.auth === "reviewer")
    .map(([key]) => key);

  /** The JWT authorizer's args and the auth of every review route. */
  function reviewerAuth(rec: Recording) {
    const api = rec.get("sst.aws.ApiGatewayV2", "Api");
    const authorizer = api.calls
      .filter((c) => c.method === "addAuthorizer")
      .map((c) => unwrap(c.args[0]) as { name: string; jwt?: { issuer: string; audiences: string[] } })
      .find((a) => a.jwt !== undefined);
    const routes = Object.fromEntries(
      api.calls
        .filter((c) => c.method === "route" && REVIEW_ROUTES.includes(String(c.args[0])))
        .map((c) => [String(c.args[0]), unwrap((c.args[2] as { auth?: unknown }).auth)]),
    );
    return { authorizer, routes };
  }

  it("by default: a Cognito user pool (admin-created users only), its app client and the reviewers group; the review routes accept its tokens", async () => {
    const rec = await evaluate("test");
    expect(REVIEW_ROUTES.sort()).toEqual(["GET /reviews", "POST /claims/{id}/review", "POST /claims/{id}/review/take"]);
    const pool = rec.get("sst.aws.CognitoUserPool", "Reviewers");
    expect(pool.args).toMatchObject({
      transform: { userPool: { adminCreateUserConfig: { allowAdminCreateUserOnly: true } } },
    });
    expect(pool.calls.filter((c) => c.method === "addClient").map((c) => c.args[0])).toEqual(["ReviewerClient"]);
    const groups = rec.ofType("aws.cognito.UserGroup").map((g) => unwrap(g.args));
    expect(groups).toEqual([expect.objectContaining({ userPoolId: "eu-west-1_Reviewers", name: REVIEWERS_GROUP })]);
    const { authorizer, routes } = reviewerAuth(rec);
    expect(authorizer?.jwt).toMatchObject({
      issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Reviewers",
      audiences: ["client-ReviewerClient"],
    });
    expect(Object.keys(routes).sort()).toEqual(REVIEW_ROUTES);
    // No route scopes: a Cognito ID token carries none; the review function checks the group or the scope.
    for (const auth of Object.values(routes)) expect(auth).toEqual({ jwt: { authorizer: "authorizer/Reviewers" } });
  });

  it("with the operator's issuer and audience: no user pool, and the review routes accept that issuer's tokens", async () => {
    const rec = await evaluate("test", {
      CLAIMS_REVIEWER_OIDC_ISSUER: "https://login.example.com/realms/shop/",
      CLAIMS_REVIEWER_OIDC_AUDIENCE: "claims-crew, claims-crew-cli",
    });
    expect(rec.ofType("sst.aws.CognitoUserPool")).toEqual([]);
    expect(rec.ofType("aws.cognito.UserGroup")).toEqual([]);
    const { authorizer, routes } = reviewerAuth(rec);
    expect(authorizer?.jwt).toMatchObject({
      issuer: "https://login.example.com/realms/shop",
      audiences: ["claims-crew", "claims-crew-cli"],
    });
    for (const auth of Object.values(routes)) expect(auth).toEqual({ jwt: { authorizer: "authorizer/Reviewers" } });
    expect(rec.outputs).not.toHaveProperty("reviewerUserPool");
    expect(rec.outputs).not.toHaveProperty("reviewerClient");
  });

  it.each([
    [{ CLAIMS_REVIEWER_OIDC_ISSUER: "https://login.example.com" }, "CLAIMS_REVIEWER_OIDC_AUDIENCE is not set"],
    [{ CLAIMS_REVIEWER_OIDC_AUDIENCE: "claims-crew" }, "CLAIMS_REVIEWER_OIDC_ISSUER is not set"],
    [
      { CLAIMS_REVIEWER_OIDC_ISSUER: "https://login.example.com", CLAIMS_REVIEWER_OIDC_AUDIENCE: " , " },
      "AUDIENCE is not set",
    ],
    [
      { CLAIMS_REVIEWER_OIDC_ISSUER: "http://login.example.com", CLAIMS_REVIEWER_OIDC_AUDIENCE: "claims-crew" },
      'CLAIMS_REVIEWER_OIDC_ISSUER="http://login.example.com" is invalid',
    ],
  ])("stops the deploy on a half-given or wrong reviewer issuer: %o", async (env, message) => {
    await expect(evaluate("test", env)).rejects.toThrow(message);
  });

  it("protects the production user pool from deletion, and only it", async () => {
    const protection = (rec: Recording) =>
      (rec.get("sst.aws.CognitoUserPool", "Reviewers").args as { transform: { userPool: Args } }).transform.userPool
        .deletionProtection;
    expect(protection(await evaluate("production"))).toBe("ACTIVE");
    expect(protection(await evaluate("test"))).toBe("INACTIVE");
  });

  it("grants no function any Cognito action (the review function only reads the token's claims)", async () => {
    const rec = await evaluate("test");
    for (const fn of deployedFunctions(rec)) {
      const actions = roleOf(fn.args).statements.flatMap((st) => st.actions);
      expect(
        actions.filter((a) => a.startsWith("cognito")),
        String(fn.args.handler),
      ).toEqual([]);
    }
  });
});

describe("deploys on any account: reserved concurrency from the account's quota, read at deploy before anything is declared", () => {
  const reserved = (rec: Recording) =>
    Object.fromEntries(
      deployedFunctions(rec)
        .filter((fn) => (fn.args.concurrency as { reserved?: number } | undefined)?.reserved !== undefined)
        .map((fn) => [String(fn.args.name), (fn.args.concurrency as { reserved: number }).reserved]),
    );

  it("by default (auto) reserves nothing on a new account of 10 and asks Lambda through the SDK first", async () => {
    account.calls.length = 0;
    const rec = await evaluate("production");
    expect(reserved(rec)).toEqual({});
    // GetAccountSettings, then what this stage reserves today (its two request-path functions, not deployed yet).
    expect(account.calls).toEqual([
      "GetAccountSettings",
      "GetFunctionConcurrency claims-crew-production-intakeApi",
      "GetFunctionConcurrency claims-crew-production-authorizer",
    ]);
  });

  it("by default reserves the request path (intake API and its authorizer, as many) where the quota leaves 100 unreserved", async () => {
    expect(reserved(await onAccount(1000, () => evaluate("production")))).toEqual({
      "claims-crew-production-intakeApi": 20,
      "claims-crew-production-authorizer": 20,
    });
    // 140 = 100 unreserved + 40: just enough; 139 is not.
    expect(Object.keys(reserved(await onAccount(140, () => evaluate("production"))))).toHaveLength(2);
    expect(reserved(await onAccount(139, () => evaluate("production")))).toEqual({});
  });

  it("counts what the stage already reserves as available again on a redeploy", async () => {
    account.account.reserved = { "claims-crew-production-intakeApi": 20, "claims-crew-production-authorizer": 20 };
    try {
      // 150 in all, 110 unreserved because this stage holds 40: reserving them again leaves 110.
      expect(Object.keys(reserved(await onAccount(150, () => evaluate("production"))))).toHaveLength(2);
    } finally {
      account.account.reserved = {};
    }
  });

  it("with CLAIMS_RESERVED_CONCURRENCY=on stops on a small account before anything is declared, naming the quota and what to do", async () => {
    await expect(evaluate("production", { CLAIMS_RESERVED_CONCURRENCY: "on" })).rejects.toThrow(
      /CLAIMS_RESERVED_CONCURRENCY=on reserves 40 concurrent executions \(intakeApi 20, authorizer 20\), but eu-west-1 has 10 concurrent executions \(10 unreserved\); Lambda keeps 100 unreserved, so the account needs at least 140.*Nothing was created.*L-B99A9384/,
    );
    expect(
      Object.keys(reserved(await onAccount(500, () => evaluate("production", { CLAIMS_RESERVED_CONCURRENCY: "on" })))),
    ).toHaveLength(2);
  });

  it("reserves nothing when the account cannot be read (auto), and stops when on; off never asks", async () => {
    account.account.denied = true;
    try {
      expect(reserved(await onAccount(1000, () => evaluate("production")))).toEqual({});
      await expect(evaluate("production", { CLAIMS_RESERVED_CONCURRENCY: "on" })).rejects.toThrow(
        /could not be read \(AccessDeniedException: .*lambda:GetAccountSettings.*\); give the deploying principal lambda:GetAccountSettings/,
      );
    } finally {
      account.account.denied = false;
    }
    account.calls.length = 0;
    expect(
      reserved(await onAccount(1000, () => evaluate("production", { CLAIMS_RESERVED_CONCURRENCY: "off" }))),
    ).toEqual({});
    expect(account.calls).toEqual([]);
    await expect(evaluate("test", { CLAIMS_RESERVED_CONCURRENCY: "maybe" })).rejects.toThrow(
      /CLAIMS_RESERVED_CONCURRENCY="maybe" is invalid: expected auto \| on \| off/,
    );
  });
});

describe("an alarm covers every function and queue of the manifest (app/)", () => {
  let r: Recording;
  beforeAll(async () => {
    r = await evaluate("test");
  });
  const alarms = () => alarmsOf(r);
  const covered = (metric: string, dim: string, value: string) =>
    alarms().some((a) => a.metricName === metric && a.dimensions?.[dim] === value);

  it.each(awsFunctionKeys("stripe"))("%s: Errors and Throttles, and each failure path it has", (key) => {
    const name = `claims-crew-test-${key}`;
    expect(covered("Errors", "FunctionName", name), `${key} Errors`).toBe(true);
    expect(covered("Throttles", "FunctionName", name), `${key} Throttles`).toBe(true);
    // The routes it serves: the shell's 500s are RequestFailures, not Lambda errors.
    for (const [route, fact] of Object.entries(ROUTES))
      if (fact.fn === key && route !== "GET /health")
        expect(covered("RequestFailures", "Route", route), `${key} ${route}`).toBe(true);
    // The queue it consumes: failed batch items are MessageFailures, not Lambda errors.
    const consumes = Object.values(QUEUES).some((q) => q.consumer === key) || key === "refundExecutor";
    if (consumes) expect(covered("MessageFailures", "Consumer", key), `${key} MessageFailures`).toBe(true);
  });

  it.each(Object.entries(QUEUES))(
    "work queue %s: its age, its DLQ's depth and its consumer's failures",
    (role, fact) => {
      const name = `${role.charAt(0).toUpperCase()}${role.slice(1)}Queue`;
      expect(covered("ApproximateAgeOfOldestMessage", "QueueName", name)).toBe(true);
      expect(
        covered(
          "ApproximateNumberOfMessagesVisible",
          "QueueName",
          r.resolve(dlqOf(r.get("sst.aws.Queue", name))?.queue).name,
        ),
      ).toBe(true);
      expect(covered("MessageFailures", "Consumer", fact.consumer)).toBe(true);
    },
  );

  it("fails on an unalarmed function or queue (the rule finds what is missing)", () => {
    expect(unalarmed(r)).toEqual([]);
    const withoutOne: Recording = {
      ...r,
      ofType: (type) =>
        r.ofType(type).filter((c) => !(type === "aws.cloudwatch.MetricAlarm" && c.name.startsWith("RefundsOldest"))),
    };
    expect(unalarmed(withoutOne)).toEqual(["queue RefundsQueue: no ApproximateAgeOfOldestMessage alarm"]);
  });
});

describe("reviewers with MFA: the app's Cognito pool", () => {
  const poolArgs = (rec: Recording) =>
    rec.get("sst.aws.CognitoUserPool", "Reviewers").args as Args & { transform: { userPool: Args } };
  const clientArgs = (rec: Recording) =>
    (
      rec.get("sst.aws.CognitoUserPool", "Reviewers").calls.find((c) => c.method === "addClient")?.args[1] as {
        transform: { client: Args };
      }
    ).transform.client;

  it("requires a TOTP code in production (no SMS), lets dev stages make it optional, and refuses optional in production", async () => {
    const prod = poolArgs(await evaluate("production"));
    expect({ mfa: prod.mfa, softwareToken: prod.softwareToken, sms: prod.sms }).toEqual({
      mfa: "on",
      softwareToken: true,
      sms: undefined,
    });
    expect(poolArgs(await evaluate("test")).mfa).toBe("optional");
    expect(poolArgs(await evaluate("test", { CLAIMS_REVIEWER_MFA: "required" })).mfa).toBe("on");
    await expect(evaluate("production", { CLAIMS_REVIEWER_MFA: "optional" })).rejects.toThrow(
      /CLAIMS_REVIEWER_MFA="optional" is invalid: expected required on the production stage/,
    );
  });

  it("signs reviewers in with SRP only (no USER_PASSWORD_AUTH), no hosted-UI OAuth flows, revocable refresh tokens", async () => {
    const client = clientArgs(await evaluate("production"));
    expect(client.explicitAuthFlows).toEqual(["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]);
    expect(client).toMatchObject({
      generateSecret: false,
      allowedOauthFlowsUserPoolClient: false,
      enableTokenRevocation: true,
      preventUserExistenceErrors: "ENABLED",
    });
    expect(client.allowedOauthFlows).toBeUndefined();
  });

  it("audits sign-ins with threat protection (Plus plan) where the region has it, and can turn it off", async () => {
    const prod = poolArgs(await evaluate("production"));
    // The recorder's region is eu-west-1, which has it.
    expect(unwrap((prod.transform.userPool.userPoolAddOns as Args).advancedSecurityMode)).toBe("AUDIT");
    expect(unwrap(prod.transform.userPool.userPoolTier)).toBe("PLUS");
    expect(unwrap(prod.transform.userPool.name)).toBe("claims-crew-production-reviewers");
    const off = poolArgs(await evaluate("production", { CLAIMS_REVIEWER_THREAT_PROTECTION: "off" }));
    expect(unwrap((off.transform.userPool.userPoolAddOns as Args).advancedSecurityMode)).toBe("OFF");
    expect(unwrap(off.transform.userPool.userPoolTier)).toBe("ESSENTIALS");
  });
});

describe("infra/README.md says what the code does: counts, first deploy, teardown", () => {
  const readme = readFileSync(new URL("./README.md", import.meta.url), "utf8");
  const section = (title: string) => {
    const start = readme.indexOf(`### ${title}`);
    expect(start, title).toBeGreaterThan(0);
    return readme.slice(start, readme.indexOf("\n### ", start + 4));
  };
  let plain: Recording;
  let payments: Recording;
  beforeAll(async () => {
    plain = await evaluate("test", { PAYMENT_PROVIDER: undefined });
    payments = await evaluate("test", { PAYMENT_PROVIDER: "stripe" });
  });

  it("states the number of alarms and of functions of a stage, with and without PAYMENT_PROVIDER", () => {
    const alarms = [plain, payments].map((r) => r.ofType("aws.cloudwatch.MetricAlarm").length);
    expect(section("Alarms")).toContain(`**${alarms[0]} alarms** (${alarms[1]} with \`PAYMENT_PROVIDER\`)`);
    // Every count of alarms anywhere in the README is one of the two.
    for (const m of readme.matchAll(/(\d+) alarms/g)) expect(alarms, m[0]).toContain(Number(m[1]));
    const functions = [plain, payments].map((r) => deployedFunctions(r).length);
    for (const row of ["`<function>Errors`", "`<function>Throttles`"])
      expect(section("Alarms")).toContain(`${row} × ${functions[0]} (+ ${functions[1]! - functions[0]!})`);
    const routes = Object.entries(ROUTES).filter(([k, r]) => k !== "GET /health" && r.fn !== "paymentWebhook").length;
    expect(section("Alarms")).toContain(
      `\`<Route>RequestFailures\` × ${routes} (+ \`PostWebhooksStripeRequestFailures\`)`,
    );
    expect(section("Alarms")).toContain(`\`<consumer>MessageFailures\` × ${Object.keys(QUEUES).length}`);
  });

  it("states the reservation, the quota it needs and the consumers' peak as app/capacity.ts computes them", () => {
    const first = section("First deploy");
    expect(first).toContain(`reserving the request path's **${totalReserved(false)}**`);
    expect(first).toContain(`a quota of at least\n  **${concurrencyNeededToReserve(false)}**`);
    expect(first).toContain(
      `may run **${consumerPeakConcurrency({ llmMaxConcurrency: 10, payments: false })}** at once`,
    );
    expect(first).toContain(`+ ${PAYMENTS_QUEUE.maxConcurrency} with \`PAYMENT_PROVIDER\``);
    expect(readme).toContain(`(20 each, **${totalReserved(false)}** in all)`);
  });

  it("names in its teardown steps everything that survives sst remove of production (retained or deletion-protected)", async () => {
    const prod = await evaluate("production");
    const teardown = section("Teardown").toLowerCase();
    // SST's "retain" keeps DynamoDB tables (and buckets, which the app has none of); deletion protection keeps the rest.
    const survivors = [
      ...prod.ofType("sst.aws.Dynamo").map((c) => ({ c, word: "table" })),
      ...prod
        .ofType("sst.aws.CognitoUserPool")
        .filter(
          (c) =>
            (c.args.transform as { userPool?: { deletionProtection?: string } }).userPool?.deletionProtection ===
            "ACTIVE",
        )
        .map((c) => ({ c, word: "user pool" })),
    ];
    expect(survivors.map((s) => s.c.name)).toEqual(["Table", "Reviewers"]);
    for (const { c, word } of survivors) expect(teardown, `${c.name} (${word})`).toContain(word);
    expect(teardown).toContain("deletion protection");
    expect(teardown).toContain("others' rules on the bus");
    expect(prod.app).toMatchObject({ removal: "retain", protect: true });
  });

  it("lifts production's protect only for the teardown's own sst remove of that stage", async () => {
    expect((await evaluate("production", { CLAIMS_TEARDOWN_STAGE: "production" })).app).toMatchObject({
      protect: false,
      removal: "retain",
    });
    expect((await evaluate("production", { CLAIMS_TEARDOWN_STAGE: "dev" })).app).toMatchObject({ protect: true });
  });
});
