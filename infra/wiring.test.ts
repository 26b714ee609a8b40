// Evaluates sst.config.ts with recording stand-ins for SST (no Pulumi, no AWS) and checks the wiring of
// SPEC §2: queues, DLQs, subscriptions, bus rules, routes, links, runtimes, logs and stages.
import { beforeAll, describe, expect, it } from "vitest";
import { FUNCTIONS, QUEUES, ROUTES, RULE_PATTERNS, visibilityTimeoutSeconds } from "./facts.ts";
import { evaluateSstConfig, unwrap, type Recorded, type Recording } from "./sst-recorder.ts";

/** Every deploy-time variable infra/settings.ts reads, unset so the developer's shell cannot leak in. */
const CLEAN_ENV = {
  LLM_PROVIDER: undefined,
  LLM_BASE_URL: undefined,
  LLM_MODEL: undefined,
  LLM_MAX_CONCURRENCY: undefined,
  CLAIMS_API_RATE_LIMIT: undefined,
  CLAIMS_API_BURST_LIMIT: undefined,
  CLAIMS_BATCH_ENABLED: undefined,
  CLAIMS_BATCH_SCHEDULE: undefined,
} as const;

function evaluate(stage: string, env: Record<string, string> = {}): Promise<Recording> {
  return evaluateSstConfig({ stage, env: { ...CLEAN_ENV, ...env } });
}

/** The least-privilege table: what each handler is linked to, what triggers it, whether it calls the LLM. */
const EXPECTED_FUNCTIONS = {
  "functions/intake-api.handler": { trigger: "function IntakeApi", llm: false, links: ["Table", "ExtractionQueue", "CrewEventsQueue"] },
  "functions/intake-extract.handler": { trigger: "queue ExtractionQueue", llm: true, links: ["Table", "CrewEventsQueue", "LlmApiKey", "Bus"] },
  "functions/orchestrator.handler": { trigger: "queue CrewEventsQueue", llm: false, links: ["Table", "AgentStepsQueue", "ProposalsQueue", "TimersQueue", "Bus"] },
  "functions/worker.handler": { trigger: "queue AgentStepsQueue", llm: true, links: ["Table", "CrewEventsQueue", "LlmApiKey"] },
  "functions/kernel.handler": { trigger: "queue ProposalsQueue", llm: false, links: ["Table", "Bus"] },
  "functions/timer.handler": { trigger: "queue TimersQueue", llm: false, links: ["CrewEventsQueue", "TimersQueue"] },
  "functions/sweep.handler": { trigger: "schedule Sweep", llm: false, links: ["Table", "CrewEventsQueue", "ExtractionQueue"] },
  "functions/batch.handler": { trigger: "schedule Batch", llm: false, links: ["Table", "ExtractionQueue", "CrewEventsQueue"] },
  "functions/authorizer.handler": { trigger: "authorizer IntakeToken", llm: false, links: ["ApiToken"] },
  "functions/review-api.handler": { trigger: "function ReviewApi", llm: false, links: ["Table", "Bus", "ExtractionQueue", "CrewEventsQueue"] },
  "functions/authorizer.reviewerHandler": { trigger: "authorizer ReviewerToken", llm: false, links: ["ReviewerToken"] },
} as const;
type Handler = keyof typeof EXPECTED_FUNCTIONS;

/** Queues our own functions consume, and the queues downstream systems read (fed by bus rules). */
const CONSUMED_QUEUES = ["CrewEventsQueue", "AgentStepsQueue", "ProposalsQueue", "ExtractionQueue", "TimersQueue"];
const BUS_TARGET_QUEUES = ["VerdictsQueue", "ReviewQueue", "RefundsQueue"];

type Args = Record<string, unknown>;

interface DeployedFunction {
  readonly trigger: string;
  readonly args: Args;
  /** The component whose constructor or method received the function definition. */
  readonly owner: Recorded;
}

const asArgs = (value: unknown): Args =>
  typeof value === "string" ? { handler: value } : ((value ?? {}) as Args);

/** Every function definition the config hands to SST, wherever it is declared. */
function deployedFunctions(r: Recording): DeployedFunction[] {
  const found: DeployedFunction[] = [];
  for (const fn of r.ofType("sst.aws.Function")) found.push({ trigger: `function ${fn.name}`, args: fn.args, owner: fn });
  for (const queue of r.ofType("sst.aws.Queue")) {
    for (const call of queue.calls.filter((c) => c.method === "subscribe")) {
      found.push({ trigger: `queue ${queue.name}`, args: asArgs(call.args[0]), owner: queue });
    }
  }
  for (const api of r.ofType("sst.aws.ApiGatewayV2")) {
    for (const call of api.calls.filter((c) => c.method === "addAuthorizer")) {
      const auth = call.args[0] as { name: string; lambda?: { function?: unknown } };
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

/** Queues some other queue (or bus target) names as its dead-letter queue. */
function deadLetterQueues(r: Recording): Set<string> {
  const names = new Set<string>();
  for (const queue of r.ofType("sst.aws.Queue")) {
    const dlq = dlqOf(queue);
    if (dlq !== undefined) names.add(r.resolve(dlq.queue).name);
  }
  return names;
}

function subscriptionsOf(queue: Recorded) {
  return queue.calls.filter((c) => c.method === "subscribe");
}

function busRules(r: Recording) {
  return r.get("sst.aws.Bus", "Bus").calls
    .filter((c) => c.method === "subscribeQueue")
    .map((c) => {
      const [name, queue, args] = c.args as [string, unknown, { transform?: { rule?: Args; target?: Args } }];
      return { name, queue: r.resolve(queue), rule: args.transform?.rule ?? {}, target: args.transform?.target ?? {} };
    });
}

describe("sst.config.ts wiring (stage test)", () => {
  let r: Recording;
  beforeAll(async () => {
    r = await evaluate("test");
  });

  describe("functions", () => {
    it("deploys exactly the expected handlers", () => {
      const handlers = deployedFunctions(r).map((f) => f.args.handler).sort();
      expect(handlers).toEqual(Object.keys(EXPECTED_FUNCTIONS).sort());
    });

    it.each(Object.entries(EXPECTED_FUNCTIONS))("%s has its trigger and links exactly what it uses", (handler, expected) => {
      const fn = functionFor(r, handler as Handler);
      expect(fn.trigger).toBe(expected.trigger);
      const links = ((fn.args.link ?? []) as unknown[]).map((l) => r.resolve(l).name);
      expect(links.sort()).toEqual([...expected.links].sort());
    });

    it.each(Object.keys(EXPECTED_FUNCTIONS))("%s runs Node 22 on arm64 with memory, timeout and log retention set", (handler) => {
      const { args } = functionFor(r, handler as Handler);
      expect(args.runtime).toBe("nodejs22.x");
      expect(args.architecture).toBe("arm64");
      expect(String(args.memory)).toMatch(/^\d+ MB$/);
      expect(seconds(args.timeout)).toBeGreaterThan(0);
      expect(seconds(args.timeout)).toBeLessThanOrEqual(900);
      expect(args.logging).toMatchObject({ retention: "1 month" });
    });

    it.each(Object.keys(EXPECTED_FUNCTIONS))("%s samples its success log lines and keeps Lambda's START/REPORT lines off", (handler) => {
      const { args } = functionFor(r, handler as Handler);
      expect((args.environment as Record<string, string>).CLAIMS_SUCCESS_LOG_SAMPLE_RATE).toBe("0.01");
      // SST's function transform receives the log config SST built; ours adds the system level and keeps the rest.
      const fnArgs = { loggingConfig: { logFormat: "JSON", logGroup: "/aws/lambda/x" } };
      (args.transform as { function: (a: typeof fnArgs) => void }).function(fnArgs);
      expect(fnArgs.loggingConfig).toEqual({ logFormat: "JSON", logGroup: "/aws/lambda/x", systemLogLevel: "WARN" });
    });

    it.each(Object.entries(EXPECTED_FUNCTIONS))("%s gets the LLM settings only if it calls the LLM (or records them, like the batch)", (handler, expected) => {
      const env = (functionFor(r, handler as Handler).args.environment ?? {}) as Record<string, string>;
      const llmKeys = Object.keys(env).filter((k) => k.startsWith("LLM_")).sort();
      const needs = expected.llm || handler === "functions/batch.handler";
      expect(llmKeys).toEqual(needs ? ["LLM_BASE_URL", "LLM_MODEL", "LLM_PROVIDER"] : []);
    });

    it("gives the LLM functions working defaults for an OpenAI-compatible endpoint", () => {
      expect(functionFor(r, "functions/worker.handler").args.environment).toMatchObject({
        LLM_PROVIDER: "openai",
        LLM_BASE_URL: "https://api.openai.com/v1",
        LLM_MODEL: expect.any(String),
      });
    });

    it("serves the claim routes from IntakeApi and the review routes from ReviewApi, never from a per-route copy", () => {
      const api = r.get("sst.aws.ApiGatewayV2", "Api");
      const targets = Object.fromEntries(api.calls.filter((c) => c.method === "route").map((c) => [String(c.args[0]), r.resolve(c.args[1]).name]));
      expect(targets).toEqual({
        "POST /claims": "IntakeApi",
        "GET /claims/{id}": "IntakeApi",
        "GET /reports/{simulation_id}": "IntakeApi",
        "GET /reports": "IntakeApi",
        "GET /health": "IntakeApi",
        "GET /reviews": "ReviewApi",
        "POST /claims/{id}/review": "ReviewApi",
        "GET /review": "ReviewApi",
      });
    });
  });

  describe("queues", () => {
    it("gives every queue that is not itself a DLQ a dead-letter queue with a bounded maxReceiveCount", () => {
      const dlqs = deadLetterQueues(r);
      const sources = r.ofType("sst.aws.Queue").filter((q) => !dlqs.has(q.name));
      expect(sources.map((q) => q.name).sort()).toEqual([...CONSUMED_QUEUES, ...BUS_TARGET_QUEUES].sort());
      for (const queue of sources) {
        const dlq = dlqOf(queue);
        expect(dlq, `${queue.name} has a DLQ`).toBeDefined();
        const target = r.resolve(dlq?.queue);
        expect(target.type).toBe("sst.aws.Queue");
        expect(target.name).not.toBe(queue.name);
        expect(isFifo(target), `${queue.name}'s DLQ matches its FIFO-ness`).toBe(isFifo(queue));
        expect(dlq?.retry).toBeGreaterThanOrEqual(2);
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

    it.each(CONSUMED_QUEUES)("%s is subscribed once, with partial batch responses and a batch of 1 to 10", (name) => {
      const subs = subscriptionsOf(r.get("sst.aws.Queue", name));
      expect(subs).toHaveLength(1);
      const options = (subs[0]?.args[1] ?? {}) as { batch?: { partialResponses?: boolean; size?: number } };
      expect(options.batch?.partialResponses).toBe(true);
      expect(options.batch?.size).toBeGreaterThanOrEqual(1);
      expect(options.batch?.size).toBeLessThanOrEqual(10);
    });

    it.each(CONSUMED_QUEUES)("%s has a visibility timeout of at least 6x its consumer's timeout", (name) => {
      const queue = r.get("sst.aws.Queue", name);
      const consumer = asArgs(subscriptionsOf(queue)[0]?.args[0]);
      expect(seconds(queue.args.visibilityTimeout)).toBeGreaterThanOrEqual(6 * seconds(consumer.timeout));
    });

    it.each(BUS_TARGET_QUEUES)("%s is read downstream: fed by a bus rule, consumed by no function of ours", (name) => {
      expect(subscriptionsOf(r.get("sst.aws.Queue", name))).toHaveLength(0);
      expect(busRules(r).filter((rule) => rule.queue.name === name)).toHaveLength(1);
    });

    it("makes crew-events FIFO with content-based deduplication off, and keeps timers standard for DelaySeconds", () => {
      expect(r.get("sst.aws.Queue", "CrewEventsQueue").args.fifo).toEqual({ contentBasedDeduplication: false });
      for (const name of ["AgentStepsQueue", "ProposalsQueue", "ExtractionQueue", "TimersQueue"]) {
        expect(isFifo(r.get("sst.aws.Queue", name)), name).toBe(false);
      }
    });

    it("caps the event-source concurrency of the LLM consumers only", () => {
      for (const name of CONSUMED_QUEUES) {
        const options = subscriptionsOf(r.get("sst.aws.Queue", name))[0]?.args[1] as Args;
        const cap = unwrap(options.transform) as { eventSourceMapping?: { scalingConfig?: { maximumConcurrency?: number } } } | undefined;
        const llm = name === "ExtractionQueue" || name === "AgentStepsQueue";
        expect(cap?.eventSourceMapping?.scalingConfig?.maximumConcurrency, name).toBe(llm ? 10 : undefined);
      }
    });
  });

  describe("bus", () => {
    it("names the bus per stage (claims in production)", () => {
      expect(r.get("sst.aws.Bus", "Bus").args).toMatchObject({ transform: { bus: { name: "claims-test" } } });
    });

    it("has exactly one rule per shared pattern, each equal to RULE_PATTERNS", () => {
      const patterns = busRules(r).map((rule) => JSON.parse(String(rule.rule.eventPattern)) as unknown);
      expect(patterns).toHaveLength(Object.keys(RULE_PATTERNS).length);
      expect(patterns).toEqual(expect.arrayContaining(Object.values(RULE_PATTERNS)));
    });

    it.each(Object.entries(RULE_PATTERNS))("delivers %s to its own queue", (name, pattern) => {
      const rules = busRules(r).filter((rule) => JSON.stringify(JSON.parse(String(rule.rule.eventPattern))) === JSON.stringify(pattern));
      expect(rules).toHaveLength(1);
      const expectedQueue = { verdicts: "VerdictsQueue", escalations: "ReviewQueue", refunds: "RefundsQueue" }[name];
      expect(rules[0]?.queue.name).toBe(expectedQueue);
    });

    it("gives every rule target a DLQ that only this bus's rules may send to", () => {
      for (const rule of busRules(r)) {
        const deadLetter = unwrap(rule.target.deadLetterConfig) as { arn?: string } | undefined;
        const dlq = r.resolve(deadLetter?.arn);
        expect(deadLetterQueues(r).has(dlq.name), `${rule.name}'s target DLQ is a dead-letter queue`).toBe(true);
        const policies = r.ofType("aws.sqs.QueuePolicy").filter((p) => String(unwrap(p.args.queueUrl)).endsWith(`/${dlq.name}`));
        expect(policies, `${dlq.name} has one queue policy`).toHaveLength(1);
        const statement = (JSON.parse(String(unwrap(policies[0]?.args.policy))) as { Statement: Args[] }).Statement[0];
        expect(statement).toEqual({
          Sid: "BusRulesDeadLetters",
          Effect: "Allow",
          Principal: { Service: "events.amazonaws.com" },
          Action: "sqs:SendMessage",
          Resource: dlq.arn,
          Condition: { ArnLike: { "aws:SourceArn": "arn:aws:events:eu-west-1:111122223333:rule/Bus/*" } },
        });
      }
    });
  });

  describe("api", () => {
    // The intake token opens the claim routes only, the reviewer token the review routes only.
    const ROUTES = {
      "POST /claims": "IntakeToken",
      "GET /claims/{id}": "IntakeToken",
      "GET /reports/{simulation_id}": "IntakeToken",
      "GET /reports": "IntakeToken",
      "GET /reviews": "ReviewerToken",
      "POST /claims/{id}/review": "ReviewerToken",
      // The reviewers' page holds no secret: it asks for the reviewer token, which its API calls carry.
      "GET /review": null,
      "GET /health": null,
    } as const;

    it("declares exactly the routes of SPEC §7.2, each with its authorizer (health open)", () => {
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
            const auth = unwrap((c.args[2] as { auth?: unknown } | undefined)?.auth) as false | { lambda?: string } | undefined;
            const authorizer = auth ? (authorizerIds.get(String(auth.lambda)) ?? `unknown ${String(auth.lambda)}`) : null;
            return [String(c.args[0]), authorizer] as const;
          }),
      );
      expect(routes).toEqual(ROUTES);
    });

    it("checks each bearer token from the Authorization header with simple responses, in its own authorizer", () => {
      const calls = r.get("sst.aws.ApiGatewayV2", "Api").calls.filter((c) => c.method === "addAuthorizer");
      expect(calls.map((c) => (c.args[0] as { name: string }).name)).toEqual(["IntakeToken", "ReviewerToken"]);
      for (const call of calls) {
        expect(call.args[0]).toMatchObject({ lambda: { response: "simple", identitySources: ["$request.header.Authorization"] } });
      }
    });

    it("turns CORS off, throttles the stage and keeps access logs", () => {
      const args = r.get("sst.aws.ApiGatewayV2", "Api").args;
      expect(args.cors).toBe(false);
      expect(args.accessLog).toEqual({ retention: "1 month" });
      expect(args.transform).toMatchObject({
        stage: { defaultRouteSettings: { throttlingRateLimit: 50, throttlingBurstLimit: 100 } },
      });
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
      expect(r.get("sst.aws.CronV2", "Batch").args).toMatchObject({ enabled: false, schedule: "cron(0 6 * * ? *)", timezone: "UTC" });
    });

    it("never re-runs a scheduled function after an error (a retried batch would submit twice)", () => {
      for (const handler of ["functions/sweep.handler", "functions/batch.handler"] as const) {
        expect(functionFor(r, handler).args.retries, handler).toBe(0);
      }
    });

    it("ships the scenario files with the batch function", () => {
      expect(functionFor(r, "functions/batch.handler").args.copyFiles).toEqual([
        { from: "scenarios/scenarios.yaml" },
        { from: "scenarios/config.yaml" },
      ]);
    });

    it("ships the agent's contract (config.yaml) with every function that prompts, proposes or decides", () => {
      for (const handler of ["functions/intake-extract.handler", "functions/orchestrator.handler", "functions/worker.handler", "functions/kernel.handler"] as const) {
        expect(functionFor(r, handler).args.copyFiles, handler).toEqual([{ from: "scenarios/config.yaml" }]);
      }
    });

    it("declares the three secrets without placeholders, so a missing one stops the deploy", () => {
      expect(r.ofType("sst.Secret").map((s) => [s.name, s.args.placeholder])).toEqual([
        ["LlmApiKey", undefined],
        ["ApiToken", undefined],
        ["ReviewerToken", undefined],
      ]);
    });

    it("outputs the API URL, the bus name and the downstream queue URLs", () => {
      expect(r.outputs).toEqual({
        api: "https://Api.execute-api.eu-west-1.amazonaws.com",
        bus: "Bus",
        verdictsQueue: "https://sqs.eu-west-1.amazonaws.com/111122223333/VerdictsQueue",
        reviewQueue: "https://sqs.eu-west-1.amazonaws.com/111122223333/ReviewQueue",
        refundsQueue: "https://sqs.eu-west-1.amazonaws.com/111122223333/RefundsQueue",
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
    for (const fn of deployedFunctions(r)) expect(fn.args.logging, String(fn.args.handler)).toMatchObject({ retention: "1 year" });
    expect(r.get("sst.aws.ApiGatewayV2", "Api").args.accessLog).toEqual({ retention: "1 year" });
  });

  it("protects the table from deletion and names the bus claims", () => {
    expect(r.get("sst.aws.Dynamo", "Table").args.deletionProtection).toBe(true);
    expect(r.get("sst.aws.Bus", "Bus").args).toMatchObject({ transform: { bus: { name: "claims" } } });
  });
});

describe("deploy-time settings", () => {
  it("points the LLM functions at another endpoint and model from the deploy environment", async () => {
    const r = await evaluate("test", { LLM_BASE_URL: "http://ollama.internal:11434/v1", LLM_MODEL: "gemma3:4b", LLM_MAX_CONCURRENCY: "4" });
    for (const handler of ["functions/worker.handler", "functions/intake-extract.handler"] as const) {
      expect(functionFor(r, handler).args.environment).toMatchObject({ LLM_BASE_URL: "http://ollama.internal:11434/v1", LLM_MODEL: "gemma3:4b" });
    }
    const options = subscriptionsOf(r.get("sst.aws.Queue", "AgentStepsQueue"))[0]?.args[1];
    expect(unwrap(options)).toMatchObject({ transform: { eventSourceMapping: { scalingConfig: { maximumConcurrency: 4 } } } });
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
  ])("rejects %s=%s with a message naming the variable", async (variable, value, message) => {
    await expect(evaluate("test", { [variable]: value })).rejects.toThrow(message);
  });
});

describe("infra/facts.ts is what deploys (the one source functions/ and local/ read too)", () => {
  let r: Recording;
  beforeAll(async () => {
    r = await evaluate("test");
  });

  it.each(Object.entries(QUEUES))("queue %s has the consumer, FIFO-ness, batch size, visibility and receives of facts.ts", (role, fact) => {
    const queue = r.get("sst.aws.Queue", fact.link);
    expect(isFifo(queue)).toBe(fact.fifo);
    expect(seconds(queue.args.visibilityTimeout)).toBe(visibilityTimeoutSeconds(role as keyof typeof QUEUES));
    expect(dlqOf(queue)?.retry).toBe(fact.maxReceives);
    const [subscription] = subscriptionsOf(queue);
    expect(asArgs(subscription?.args[0]).handler).toBe(FUNCTIONS[fact.consumer].handler);
    expect((subscription?.args[1] as { batch?: { size?: number } }).batch?.size).toBe(fact.batchSize);
  });

  it.each(Object.entries(FUNCTIONS))("function %s has the memory, timeout and exactly the links of facts.ts", (_key, fact) => {
    const fn = functionFor(r, fact.handler as Handler);
    expect(fn.args.memory).toBe(fact.memory);
    expect(seconds(fn.args.timeout)).toBe(fact.timeoutSeconds);
    expect(((fn.args.link ?? []) as unknown[]).map((l) => r.resolve(l).name).sort()).toEqual([...fact.links].sort());
  });

  it("routes exactly the route keys of facts.ts", () => {
    const routes = r.get("sst.aws.ApiGatewayV2", "Api").calls.filter((c) => c.method === "route").map((c) => String(c.args[0])).sort();
    expect(routes).toEqual(Object.keys(ROUTES).sort());
  });
});
