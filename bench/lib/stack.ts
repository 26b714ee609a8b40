// The local stack as the pipeline benches drive it: the production handlers behind the pollers, claims
// submitted through the intake-api handler with API Gateway v2 events (no HTTP server, no authorizer:
// its 5-minute cache makes it ~0 per claim), a claim counted as decided when the kernel handler has
// finished the batch holding its proposal (the claim record is DECIDED then), and checked afterwards.
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { systemClock } from "../../core/crew/index.ts";
import type { Order } from "../../core/integrity/index.ts";
import { createRulesModel } from "../../core/agents/rules-model.ts";
import { loadConfig } from "../../functions/composition/config-file.ts";
import type { LogLevelName } from "../../functions/observability/logger.ts";
import { apiEvent, CONFIG_PATH } from "../../local/testing/stack-fixture.ts";
import { startLocalStack } from "../../local/stack.ts";
import type { LocalStack } from "../../local/stack.ts";
import { claimBody } from "./claims.ts";
import { countedVault } from "./key-lookups.ts";
import type { ClaimKind, QueueRole } from "./profile.ts";
import { createUsageRecorder } from "./usage.ts";
import type { Tag, UsageRecorder } from "./usage.ts";

/** How long a bench waits for one claim before it gives up. */
const SETTLE_MS = 60_000;

const QUEUE_ROLES: readonly QueueRole[] = ["crewEvents", "agentSteps", "proposals", "extraction", "timers"];

type StackClient = Parameters<UsageRecorder["attach"]>[0];

/** A local stack set up for benches. */
export type BenchStack = {
  stack: LocalStack;
  /** Present when started with `record: true`. */
  recorder?: UsageRecorder;
  /** Deliveries of each bus rule into its target since the last {@link resetBus}. */
  bus: Record<string, number>;
  resetBus(): void;
  /** Submits one claim through the intake-api handler (as an invocation of intakeApi when recording); its id and the submit instant. */
  submit(body: Record<string, unknown>): Promise<{ claimId: string; at: number }>;
  /** `GET /claims/{id}` through the intake-api handler, as a client polls (tagged "poll" when recording); the status it answered. */
  poll(claimId: string): Promise<string>;
  /** Resolves with the instant the kernel finished the batch holding the claim's proposal. */
  waitDecided(claimId: string): Promise<number>;
  stop(): Promise<void>;
};

/** Options of {@link startBenchStack}. */
export type BenchStackOptions = {
  /** Records every request and invocation (lib/usage.ts): attached to the stack's clients and wrapped around every handler. */
  record?: boolean;
  /** The handlers' Powertools level (default SILENT). */
  logLevel?: LogLevelName;
};

/** Starts a local stack with `orders` beside the config's (system clock, rules model, no sweep). */
export async function startBenchStack(orders: readonly Order[], options: BenchStackOptions = {}): Promise<BenchStack> {
  const clock = systemClock();
  const config = loadConfig(CONFIG_PATH, clock.now());
  const llm = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  let urls: Record<string, QueueRole> = {};
  const recorder = options.record ? createUsageRecorder((url) => urls[url]) : undefined;
  const bus: Record<string, number> = {};
  const decided = new Map<string, (at: number) => void>();
  const onKernelDone = (event: SQSEvent, response: SQSBatchResponse) => {
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const at = performance.now();
    for (const r of event.Records) {
      if (failed.has(r.messageId)) continue;
      const claimId = (JSON.parse(r.body) as { claim_id?: string }).claim_id;
      if (claimId) decided.get(claimId)?.(at);
    }
  };
  const stack = await startLocalStack({
    configPath: CONFIG_PATH,
    clock,
    llm,
    orders: [...config.orders, ...orders],
    logLevel: options.logLevel ?? "SILENT",
    sweepEveryMs: 0,
    settleTimeoutMs: SETTLE_MS,
    // The cost model prices the default deployment, which has no refund executor (PAYMENT_PROVIDER unset).
    payments: { executor: false },
    // Recording: personal data sealed as on AWS, each data-key lookup counted against its invocation (issue 37).
    ...(recorder
      ? { personalDataVault: () => countedVault((subject, outcome) => recorder.noteKeyLookup(subject, outcome)) }
      : {}),
    onBusEvent: (rule) => {
      bus[rule] = (bus[rule] ?? 0) + 1;
    },
    wrapHandler: (role, handler) => {
      const done = role === "proposals" ? onKernelDone : undefined;
      if (recorder) return recorder.wrapConsumer(role, handler, done);
      if (!done) return handler;
      return async (event, context) => {
        const response = await handler(event, context);
        done(event, response);
        return response;
      };
    },
  });
  urls = Object.fromEntries(QUEUE_ROLES.map((role) => [stack.queues[role].url, role]));
  const detach = recorder
    ? [stack.clients.dynamo, stack.clients.sqs, stack.clients.events].map((client) =>
        recorder.attach(client as unknown as StackClient),
      )
    : [];
  recorder?.take();

  const asApi = <T>(f: () => Promise<T>, tag?: Tag) => (recorder ? recorder.runAs("intakeApi", 1, f, tag) : f());
  return {
    stack,
    ...(recorder ? { recorder } : {}),
    bus,
    resetBus: () => {
      for (const k of Object.keys(bus)) delete bus[k];
    },
    async submit(body) {
      const at = performance.now();
      const response = await asApi(() =>
        stack.handlers.intakeApi(
          apiEvent("POST", "/claims", { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
        ),
      );
      const parsed =
        typeof response === "object" && response.statusCode === 202 && typeof response.body === "string"
          ? (JSON.parse(response.body) as { claim_id?: string })
          : {};
      if (!parsed.claim_id)
        throw new Error(`bench stack: POST /claims answered ${JSON.stringify(response).slice(0, 300)}`);
      return { claimId: parsed.claim_id, at };
    },
    async poll(claimId) {
      const response = await asApi(() => stack.handlers.intakeApi(apiEvent("GET", `/claims/${claimId}`)), "poll");
      const parsed =
        typeof response === "object" && response.statusCode === 200 && typeof response.body === "string"
          ? (JSON.parse(response.body) as { status?: string })
          : {};
      if (!parsed.status)
        throw new Error(`bench stack: GET /claims/${claimId} answered ${JSON.stringify(response).slice(0, 300)}`);
      return parsed.status;
    },
    waitDecided(claimId) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          decided.delete(claimId);
          reject(new Error(`bench stack: claim ${claimId} was not decided within ${SETTLE_MS / 1000} s`));
        }, SETTLE_MS);
        decided.set(claimId, (at) => {
          clearTimeout(timer);
          decided.delete(claimId);
          resolve(at);
        });
      });
    },
    async stop() {
      for (const d of detach) d();
      await stack.stop();
    },
  };
}

/** What one phase did: the claims it decided, each one's submit-to-decided latency, and the phase's wall time. */
export type Phase = { kind: ClaimKind; inFlight: number; claimIds: string[]; latenciesMs: number[]; wallMs: number };

/**
 * Runs one claim per order with `inFlight` claims at a time (each slot submits, waits until the claim
 * is decided, submits the next) and waits until the stack is drained. wallMs = last decided − first submit.
 */
export async function runPhase(
  b: BenchStack,
  kind: ClaimKind,
  orders: readonly Order[],
  inFlight: number,
): Promise<Phase> {
  const bodies = orders.map((o) => claimBody(kind, o.order_id));
  const latenciesMs: number[] = [];
  const claimIds: string[] = [];
  let next = 0;
  const started = performance.now();
  let lastDecided = started;
  const slot = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      // The claim id is known only once intake answers; the kernel runs several queue hops later, so the
      // waiter registered right after is always in place before the claim can be decided.
      const { claimId, at } = await b.submit(body);
      claimIds.push(claimId);
      const decidedAt = await b.waitDecided(claimId);
      latenciesMs.push(decidedAt - at);
      lastDecided = Math.max(lastDecided, decidedAt);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, slot));
  const wallMs = lastDecided - started;
  await b.stack.drained();
  return { kind, inFlight, claimIds, latenciesMs, wallMs };
}

/** Throws unless every claim of the phase ended DECIDED ACCEPT (read through the stack's claim repository). */
export async function checkPhase(b: BenchStack, phase: Phase): Promise<void> {
  for (const claimId of phase.claimIds) {
    const record = await b.stack.deps.claims.getClaim(claimId);
    if (record?.status !== "DECIDED" || record.verdict !== "ACCEPT") {
      throw new Error(
        `bench stack: claim ${claimId} (${phase.kind}) ended ${record?.status ?? "missing"} ${record?.verdict ?? ""} ${record?.reason_code ?? ""}, expected DECIDED ACCEPT`,
      );
    }
  }
}
