// The composition root of every function: PipelineDeps built once per cold start from SST links
// (`Resource.*`), the LLM settings in the environment and the deployed refund policy (pre-parsed JSON,
// functions/composition/policy.ts), over the AWS adapters, a system clock and random ids. Every port is
// built on first use, so a function reads only the links it uses (see infra/README.md).
import { createHash, randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { KMSClient } from "@aws-sdk/client-kms";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { sealEventsClient, sealQueueClient, sealTableClient } from "../../adapters/vault/sealed-table.ts";
import { withCachedHandlers, withoutIdleLogger } from "./sdk-clients.ts";
import { envelopeVault } from "../../adapters/vault/envelope.ts";
import { newSubjectInInvocation, rememberedPerInvocation } from "../../adapters/vault/invocation-keys.ts";
import { kmsDataKeys, kmsKeyStore } from "../../adapters/aws/kms-keys.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";
import {
  createDynamoBatchJournal,
  createDynamoPorts,
  createEventBridgePublisher,
  createSqsWorkQueues,
} from "../../adapters/aws/index.ts";
import { llmBatchSettingsFromEnv, llmTimeoutMsFromEnv } from "../../adapters/llm/config.ts";
import { llmOutageHoldMsFromEnv, pipelineSettingsFor, stepTimersFromEnv } from "../../pipeline/deps.ts";
import type { AgentSettings, PipelineDeps, PipelineSettings } from "../../pipeline/deps.ts";
import { systemClock } from "../../core/crew/index.ts";
import { createAgentRegistry } from "../../core/integrity/index.ts";
import type { AgentRegistry } from "../../core/integrity/index.ts";
import type { BatchJournal, LlmPort } from "../../core/llm/index.ts";
import type { Clock, IdSource, WorkQueues } from "../../pipeline/ports.ts";
import { AgentRefusedError, ConfigLoadError } from "./errors.ts";
import { lazyPort, once } from "./lazy.ts";
import { linkedResources } from "./resources.ts";
import { LINKS } from "../../app/manifest.ts";
import type { LinkedResources } from "./resources.ts";
import { loadPolicyFile, policyPathFrom } from "./policy.ts";
import { checkedOnFirstUse } from "../../adapters/shop/order-api.ts";
import type { OrderApiCheck, OrderApiSource } from "../../adapters/shop/order-api.ts";
import { orderSourceSecretsOf, orderSourceSettingsFrom } from "../../app/order-source.ts";
import type { OrderSourceSecretLink } from "../../app/order-source.ts";
import type { OrderSource } from "../../pipeline/ports.ts";
import { orderSourceAdapter } from "./order-sources.ts";
import { paymentProviderFrom, webhookSecretFrom } from "./payments.ts";
import { withReviewOpened } from "../../pipeline/review-opened.ts";
import { DEFAULT_REVIEW_DUE_MS } from "../../core/kernel/review.ts";
import type { PolicySettings } from "../../app/policy-format.ts";
import type { QueueRole } from "../../app/manifest.ts";

/** Where a handler gets its dependencies (built once, then reused by every invocation). */
export type DepsSource = () => PipelineDeps | Promise<PipelineDeps>;

/** The SDK clients the adapters take. */
export interface AwsClients {
  readonly dynamo: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly events: EventBridgeClient;
}

/** Per-service client settings (endpoint, region, credentials); empty on AWS, where the Lambda environment supplies them. */
interface AwsClientSettings {
  readonly dynamodb?: DynamoDBClientConfig;
  readonly sqs?: ConstructorParameters<typeof SQSClient>[0];
  readonly events?: ConstructorParameters<typeof EventBridgeClient>[0];
  /** With a vault, the table's personal fields are sealed on write and opened on read (adapters/vault/sealed-table.ts). */
  readonly personalData?: PersonalDataVault;
}

/**
 * Builds the three SDK clients; marshalling drops undefined attributes (optional fields of records). Each keeps its
 * resolved middleware chains and goes without the SDK's idle logger middleware (sdk-clients.ts): on Lambda as locally.
 */
export function createAwsClients(settings: AwsClientSettings = {}): AwsClients {
  return {
    dynamo: lean(
      sealedIf(
        DynamoDBDocumentClient.from(new DynamoDBClient(settings.dynamodb ?? {}), {
          marshallOptions: { removeUndefinedValues: true },
        }),
        settings.personalData,
      ),
      settings.dynamodb?.logger,
    ),
    sqs: lean(
      settings.personalData
        ? sealQueueClient(new SQSClient(settings.sqs ?? {}), settings.personalData)
        : new SQSClient(settings.sqs ?? {}),
      settings.sqs?.logger,
    ),
    events: lean(
      settings.personalData
        ? sealEventsClient(new EventBridgeClient(settings.events ?? {}), settings.personalData)
        : new EventBridgeClient(settings.events ?? {}),
      settings.events?.logger,
    ),
  };
}

/** `client` keeping its chains, without the logger middleware unless it has a `logger` (sdk-clients.ts). */
function lean<C extends Parameters<typeof withCachedHandlers>[0] & Parameters<typeof withoutIdleLogger>[0]>(
  client: C,
  logger: unknown,
): C {
  return withCachedHandlers(withoutIdleLogger(client, logger));
}

function sealedIf(client: DynamoDBDocumentClient, vault: PersonalDataVault | undefined): DynamoDBDocumentClient {
  return vault ? sealTableClient(client, vault) : client;
}

/**
 * The personal-data vault of a deployed function (docs/customer-data.md): each claim's data key kept wrapped in the
 * table under a branch key KMS made from the stage's key (`Resource.PersonalDataKey`), its item read once per handler
 * invocation (an erasure holds from the next invocation on, in every container). Undefined for a function not linked
 * to the key: it writes no personal data.
 */
export function linkedVault(
  resources: LinkedResources,
  clock: Clock,
  kms: () => KMSClient = () => new KMSClient({}),
  dynamodb: DynamoDBClientConfig = {},
): PersonalDataVault | undefined {
  const keyId = resources.personalDataKeyId();
  if (keyId === undefined) return undefined;
  // The keys' own client does not seal: a data key's item holds no personal field, and sealing it would need a key.
  const ctx = {
    client: lean(DynamoDBDocumentClient.from(new DynamoDBClient(dynamodb)), dynamodb.logger),
    tableName: resources.tableName(),
    clock,
    pageSize: undefined,
  };
  return envelopeVault(rememberedPerInvocation(kmsKeyStore(ctx, kmsDataKeys(kms()), keyId)), { cacheKeys: false });
}

/**
 * Random, unique ids: `<prefix>_<32 hex>`. Each is new to its invocation's key scope (adapters/vault/invocation-keys.ts):
 * a claim drawn here has no data key yet, so sealing its first field puts the key without reading its item first.
 */
export function randomIds(): IdSource {
  return {
    next: (prefix) => {
      const id = `${prefix}_${randomUUID().replace(/-/g, "")}`;
      newSubjectInInvocation(id);
      return id;
    },
  };
}

type Env = Readonly<Record<string, string | undefined>>;

/** node:crypto's SHA-256, injected into the pipeline for proposal keys (core's pure one gives the same bytes, several times slower). */
export const nodeSha256 = (input: string): string => createHash("sha256").update(input).digest("hex");

/** Days sessions are kept after their last save unless CLAIMS_SESSION_RETENTION_DAYS says otherwise (every claim ends long before: the sweep). */
const DEFAULT_SESSION_RETENTION_DAYS = 30;

/**
 * The retention policy from the environment: CLAIMS_SESSION_RETENTION_DAYS (default 30) and
 * CLAIMS_AUDIT_RETENTION_DAYS (default: the audit is kept); "never" keeps that kind for good. A session
 * step holds the step's audit events, so steps are kept for the longer of the two (adapters/aws/README.md).
 * ConfigLoadError names a variable that is not a positive number of days.
 */
export function retentionFrom(env: Env): { sessionsMs?: number; auditMs?: number } {
  const days = (name: string, fallback: number | undefined): number | undefined => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === "") return fallback;
    if (raw === "never") return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0)
      throw new ConfigLoadError(`${name} must be a positive number of days or "never", got "${raw}"`);
    return n;
  };
  const sessions = days("CLAIMS_SESSION_RETENTION_DAYS", DEFAULT_SESSION_RETENTION_DAYS);
  const audit = days("CLAIMS_AUDIT_RETENTION_DAYS", undefined);
  return {
    ...(sessions === undefined ? {} : { sessionsMs: sessions * 86_400_000 }),
    ...(audit === undefined ? {} : { auditMs: audit * 86_400_000 }),
  };
}

/** Registers the configured agent; throws AgentRefusedError when the handshake fails (then nothing may run). */
function registerAgent(agent: AgentSettings): AgentRegistry {
  const registry = createAgentRegistry({ acceptedMajor: 1 });
  const answer = registry.handshake({
    agent_id: agent.agentId,
    version: agent.version,
    contract: agent.responsibility,
  });
  if (!answer.ok)
    throw new AgentRefusedError(
      `agent ${agent.agentId} v${agent.version} was refused by the registry: ${answer.message}`,
    );
  return registry;
}

/** Builds the LLM port of a function that calls a model (see `functions/composition/llm.ts`). */
type LlmFactory = (policy: PolicySettings, env: Env, resources: LinkedResources) => LlmPort;

/** The LLM of a function that never calls a model: using it is a wiring bug, said plainly. */
const noLlm: LlmFactory = () => {
  const refuse = (): never => {
    throw new Error(
      "this function has no LLM: only worker and intake-extract call a model (compose them with functions/composition/llm.ts)",
    );
  };
  return {
    get provider() {
      return refuse();
    },
    get model() {
      return refuse();
    },
    complete: async () => refuse(),
  } as LlmPort;
};

const ROLES: readonly QueueRole[] = ["crewEvents", "agentSteps", "proposals", "extraction", "timers"];

/**
 * WorkQueues that read a queue's link only when sending to it: each function links only the queues it
 * sends to (infra/functions.ts), while the SQS adapter takes all five URLs up front. Each method
 * resolves its own queue's URL first (a clear ResourceLinkError when it is not linked); the URLs of
 * unlinked queues are placeholders the method never uses.
 */
function linkedWorkQueues(sqs: () => SQSClient, clock: Clock, resources: LinkedResources): WorkQueues {
  const optional = (role: QueueRole) => {
    try {
      return resources.queueUrl(role);
    } catch {
      return `https://sqs.unlinked.invalid/${LINKS.queues[role]}`;
    }
  };
  const adapter = once(() =>
    createSqsWorkQueues({
      client: sqs(),
      clock,
      urls: Object.fromEntries(ROLES.map((r) => [r, optional(r)])) as Record<QueueRole, string>,
    }),
  );
  const via = (role: QueueRole) => {
    resources.queueUrl(role);
    return adapter();
  };
  return {
    sendAgentSteps: (messages, opts) => via("agentSteps").sendAgentSteps(messages, opts),
    sendProposal: (message) => via("proposals").sendProposal(message),
    sendCrewEvents: (claimId, messages) => via("crewEvents").sendCrewEvents(claimId, messages),
    scheduleTimer: (claimId, dueMs) => via("timers").scheduleTimer(claimId, dueMs),
    requestExtraction: (claimId, opts) => via("extraction").requestExtraction(claimId, opts),
  };
}

/** What can be swapped when composing (the local stack passes its clients, clock and LLM; AWS uses the defaults). */
export interface ComposeOptions {
  readonly clients?: AwsClients;
  /** The vault the default clients seal with (default: `linkedVault` over the links); ignored with `clients`. */
  readonly personalData?: () => PersonalDataVault | undefined;
  readonly resources?: LinkedResources;
  readonly clock?: Clock;
  readonly ids?: IdSource;
  readonly llm?: LlmPort;
  /** How to build the LLM from the environment (only worker and intake-extract pass one). */
  readonly makeLlm?: LlmFactory;
  /** With LLM_BATCH_MODE=batch: the model behind the OpenAI Batch API for a batch run's claims (local runs pass theirs). */
  readonly batchLlm?: LlmPort;
  /** How to build that model from the environment (worker and intake-extract), its batches journaled in the table. */
  readonly makeBatchLlm?: (
    policy: PolicySettings,
    env: Env,
    resources: LinkedResources,
    journal: BatchJournal,
  ) => LlmPort;
  /** The refund policy (local runs pass their parsed config file); default: the deployed JSON (`policyPathFrom`), read and validated on first use. */
  readonly policy?: PolicySettings | (() => PolicySettings);
  readonly env?: Env;
  readonly settings?: PipelineSettings;
  /** Hears the check of the order API on its first use (ORDER_SOURCE=http); default: a log line when it fails. */
  readonly onOrderApiCheck?: (check: OrderApiCheck) => void;
}

/** The first-use check's failure as one structured log line (CloudWatch Logs on AWS); never the token. */
function logOrderApiCheck(check: OrderApiCheck): void {
  if (check.ok) return;
  process.stderr.write(
    `${JSON.stringify({ level: "ERROR", message: "the shop's order API does not answer its check (ORDER_API_URL, OrderApiToken): claims wait for it up to ORDER_SOURCE_MAX_WAIT_S", code: "ORDER_API_UNREACHABLE", problem: check.problem })}\n`,
  );
}

/** Builds PipelineDeps; nothing is read or connected until a port is first used. */
export function composeDeps(options: ComposeOptions = {}): PipelineDeps {
  const env = options.env ?? process.env;
  const clock = options.clock ?? systemClock();
  const resources = options.resources ?? linkedResources();
  // On AWS every client seals the personal fields it writes under the stage's KMS key (and opens what it reads).
  const clients = once((): AwsClients => {
    if (options.clients) return options.clients;
    const vault = (options.personalData ?? (() => linkedVault(resources, clock)))();
    return createAwsClients(vault ? { personalData: vault } : {});
  });
  const given = options.policy;
  const policy = once(
    (): PolicySettings =>
      given === undefined ? loadPolicyFile(policyPathFrom(env)) : typeof given === "function" ? given() : given,
  );
  const registered = once((): { agent: AgentSettings; registry: AgentRegistry } => {
    const agent = policy().agent;
    return { agent, registry: registerAgent(agent) };
  });
  // ORDER_SOURCE: the table (default) or another source of the registry, e.g. the shop's order API with the
  // OrderApiToken secret (docs/orders.md), built by its adapter (order-sources.ts) from its declared settings and secrets.
  const orderSettings = once(() => orderSourceSettingsFrom(env));
  const orders = once((): OrderSource => {
    const chosen = orderSettings();
    const links = Object.fromEntries(
      orderSourceSecretsOf(chosen.source).map((s) => [s.role, s.secret.link as OrderSourceSecretLink]),
    );
    const source = orderSourceAdapter(chosen.source).createSource({
      settings: chosen.values,
      secret: (role) => {
        const link = links[role];
        if (link === undefined) throw new ConfigLoadError(`order source ${chosen.source} declares no secret "${role}"`);
        return resources.secret(link);
      },
      table: () => dynamo().orders,
    });
    // A source that can check itself (the shop's order API) is checked beside the first read of a cold start: a
    // wrong URL or token is logged once, plainly.
    return typeof (source as Partial<OrderApiSource>).check === "function"
      ? checkedOnFirstUse(source as OrderApiSource, options.onOrderApiCheck ?? logOrderApiCheck)
      : source;
  });
  const dynamo = once(() =>
    createDynamoPorts({
      client: clients().dynamo,
      tableName: resources.tableName(),
      clock,
      retention: retentionFrom(env),
    }),
  );
  return {
    claims: lazyPort(() => dynamo().claims),
    sessions: lazyPort(() => dynamo().sessions),
    verdicts: lazyPort(() => dynamo().verdicts),
    audit: lazyPort(() => dynamo().audit),
    ledger: lazyPort(() => dynamo().ledger),
    orders: lazyPort(orders),
    reviews: lazyPort(() => dynamo().reviews),
    settlements: lazyPort(() => dynamo().settlements),
    payments: lazyPort(() => paymentProviderFrom(env, resources)),
    webhookSecret: webhookSecretFrom(env, resources),
    queues: linkedWorkQueues(() => clients().sqs, clock, resources),
    // A ReviewOpened beside each ReviewRequested, due under the policy (pipeline/review-opened.ts).
    publisher: lazyPort(() =>
      withReviewOpened(
        createEventBridgePublisher({ client: clients().events, busName: resources.busName(), checkBus: true }),
        () => policy().agent.review?.dueMs ?? DEFAULT_REVIEW_DUE_MS,
      ),
    ),
    llm: options.llm ?? lazyPort(() => (options.makeLlm ?? noLlm)(policy(), env, resources)),
    // LLM_BATCH_MODE=batch: a batch run's claims ask the model through the Batch API (docs/llm.md, "Batch mode").
    ...(options.batchLlm
      ? { batchLlm: options.batchLlm }
      : batchMode(env) && options.makeBatchLlm
        ? {
            batchLlm: lazyPort(() =>
              options.makeBatchLlm!(
                policy(),
                env,
                resources,
                createDynamoBatchJournal({ client: clients().dynamo, tableName: resources.tableName(), clock }),
              ),
            ),
          }
        : {}),
    clock,
    ids: options.ids ?? randomIds(),
    agent: lazyPort(() => registered().agent),
    registry: lazyPort(() => registered().registry),
    // Crew step deadlines follow the LLM's time budget (LLM_TIMEOUT_MS over the config's timeout_ms), read on first use.
    // The claim's wait for an unavailable order source from ORDER_SOURCE_MAX_WAIT_S; the outage hold from
    // CLAIMS_LLM_OUTAGE_HOLD_S; who arms a claim's first step timer from CLAIMS_STEP_TIMERS (given settings may say).
    settings: lazyPort(() => {
      const batch = batchMode(env) ? llmBatchSettingsFromEnv(env, "openai") : undefined;
      return {
        stepTimers: stepTimersFromEnv(env),
        ...(options.settings ??
          pipelineSettingsFor(llmTimeoutMsFromEnv(env, policy().llm.timeout_ms), llmOutageHoldMsFromEnv(env))),
        ...(batch?.mode === "batch" ? { llmBatchHoldMs: batch.holdMs } : {}),
        orderSourceWaitMs: orderSettings().maxWaitMs,
      };
    }),
    sha256: nodeSha256,
  };
}

/** Whether LLM_BATCH_MODE asks for the Batch API (its value checked where the model is built: llmBatchSettingsFromEnv). */
function batchMode(env: Env): boolean {
  return env.LLM_BATCH_MODE?.trim().toLowerCase() === "batch";
}

/** The vault of this function on AWS, built once per cold start; its queue consumers open their records with it. */
export const productionVault: () => PersonalDataVault | undefined = once(() =>
  linkedVault(linkedResources(), systemClock()),
);

/** The production dependencies: composed once per cold start, on the first invocation. */
export const productionDeps: () => PipelineDeps = once(() => composeDeps({ personalData: productionVault }));
