// The single DynamoDB table: key layout of every entity (see README.md, "Access patterns"), the table
// definition, `createTable` for the local stack and `seedOrders` for the authoritative orders.
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from "@aws-sdk/client-dynamodb";
import type { CreateTableCommandInput, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { dfidOf } from "../../core/kernel/claim-record.ts";
import { validateOrder } from "../../core/kernel/orders.ts";
import type { Order } from "../../core/integrity/contracts.ts";
import { describeError, TableSetupError } from "./errors.ts";

/** Name of the table's global secondary index (audit by simulation, claims by status, all orders). */
export const GSI1 = "gsi1";

/** Attributes the table adds to an entity; stripped when an entity is read back. */
export const TABLE_ONLY_ATTRIBUTES: readonly string[] = ["pk", "sk", "gsi1pk", "gsi1sk", "expires_at", "entity"];

/** Sort key prefix of the session step items (keys.sessionStep). */
export const SESSION_STEP_PREFIX = "AUDIT#~SESSION#";
/** Sort key of the step items' done marker ('$' sorts right after '#'). */
export const SESSION_STEP_DONE_SK = "AUDIT#~SESSION$DONE";

/** A primary key. */
type ItemKey = { pk: string; sk: string };

/** Key builders: the one place where the single-table layout is spelled out. */
export const keys = {
  claim: (claimId: string): ItemKey => ({ pk: `CLAIM#${claimId}`, sk: "META" }),
  idempotency: (key: string): ItemKey => ({ pk: `IDEM#${key}`, sk: "IDEM" }),
  session: (claimId: string): ItemKey => ({ pk: `CLAIM#${claimId}`, sk: "SESSION" }),
  /** "The outbox of version n was performed" (sorts right after the head and before its chunks: one Query reads both). */
  sessionDone: (claimId: string): ItemKey => ({ pk: `CLAIM#${claimId}`, sk: "SESSION!DONE" }),
  /** Prefix of one saved version's chunks: the content hash keeps two racing writers' chunks apart. */
  sessionChunkPrefix: (version: number, contentHash: string) => `SESSION#CHUNK#${version}#${contentHash.slice(0, 16)}#`,
  /**
   * Version n of a claim's crew session together with the audit events of the orchestrator step that saved it: one
   * item per step, in the claim's audit partition, after its dated events (`~` sorts after every digit).
   */
  sessionStep: (claimId: string, version: number): ItemKey => ({
    pk: `DFID#${dfidOf(claimId)}`,
    sk: `${SESSION_STEP_PREFIX}${String(version).padStart(10, "0")}`,
  }),
  /** "The outbox of step n was performed" for step items: sorts right after them (one Query reads it with the last). */
  sessionStepDone: (claimId: string): ItemKey => ({ pk: `DFID#${dfidOf(claimId)}`, sk: SESSION_STEP_DONE_SK }),
  sessionChunk: (claimId: string, prefix: string, index: number): ItemKey => ({
    pk: `CLAIM#${claimId}`,
    sk: `${prefix}${String(index).padStart(4, "0")}`,
  }),
  verdict: (idempotencyKey: string): ItemKey => ({ pk: `VERDICT#${idempotencyKey}`, sk: "VERDICT" }),
  /** Which OpenAI batch holds a model request (LLM_BATCH_MODE=batch), by the request's custom_id. */
  llmBatch: (customId: string): ItemKey => ({ pk: `LLMBATCH#${customId}`, sk: "BATCH" }),
  auditPartition: (dfid: string) => `DFID#${dfid}`,
  audit: (dfid: string, instant: string, hash: string): ItemKey => ({
    pk: `DFID#${dfid}`,
    sk: `AUDIT#${instant}#${hash}`,
  }),
  /** The order's ledger: real refunds under `LEDGER`, a simulation's own under `LEDGER#SIM#<id>` (docs/events.md). */
  ledger: (orderId: string, scope?: string): ItemKey => ({
    pk: `ORDER#${orderId}`,
    sk: scope === undefined ? "LEDGER" : `LEDGER#SIM#${scope}`,
  }),
  order: (orderId: string): ItemKey => ({ pk: `ORDER#${orderId}`, sk: "ORDER" }),
  /** A customer's window of automatic refunds, per ledger scope like the orders' ledgers. */
  customerWindow: (customerId: string, scope?: string): ItemKey => ({
    pk: `CUSTOMER#${customerId}`,
    sk: scope === undefined ? "WINDOW" : `WINDOW#SIM#${scope}`,
  }),
  review: (claimId: string): ItemKey => ({ pk: `CLAIM#${claimId}`, sk: "REVIEW" }),
  /** The settlement of the claim's refund with the payment provider (docs/payments.md). */
  settlement: (claimId: string): ItemKey => ({ pk: `CLAIM#${claimId}`, sk: "SETTLEMENT" }),
  /** A claim's personal-data key, wrapped by its day's branch key (or by KMS, before), or its tombstone once destroyed. */
  dataKey: (subject: string): ItemKey => ({ pk: `DATAKEY#${subject}`, sk: "DATAKEY" }),
  /** A day's branch key, wrapped by KMS: it wraps the data keys made that day (adapters/aws/kms-keys.ts). */
  branchKey: (branch: string): ItemKey => ({ pk: `BRANCHKEY#${branch}`, sk: "BRANCHKEY" }),
  /** How far the retention sweep has erased the customers' words (adapters/aws/dynamo-retention.ts). */
  retentionWatermark: (): ItemKey => ({ pk: "RETENTION#customer_text", sk: "WATERMARK" }),
} as const;

/** Partitions of the open-claims listing in gsi1 (spreads its writes; never lower it, the sweep queries each). */
export const OPEN_CLAIM_SHARDS = 4;

/** gsi1 partitions. */
export const gsi1 = {
  /** Claims not yet final, in `OPEN_CLAIM_SHARDS` partitions by a hash of the id; sort key `<received_at>#<claim_id>` (never changes while open). */
  open: (shard: number) => `OPEN#${shard}`,
  openSort: (receivedAt: string, claimId: string) => `${receivedAt}#${claimId}`,
  /** Final claims (DECIDED, NEEDS_REVIEW), sharded like the open ones, same sort key: with `open` they list every claim by receipt. */
  done: (shard: number) => `DONE#${shard}`,
  /** Written before: claims not yet final by status, sort key `<updated_at>#<claim_id>`; still read until none is left. */
  status: (status: string) => `STATUS#${status}`,
  /** Audit events of a simulation; sort key `<instant>#<hash>`. */
  simulation: (simulationId: string) => `SIM#${simulationId}`,
  /** Every order; sort key = order id. */
  orders: "ORDERS",
  /** Reviews by status; sort key `reviewSort` (oldest first). */
  reviews: (status: string) => `REVIEW#${status}`,
  /**
   * The sort key of a review, a claim's or a failed refund's: `<requested_at>#<claim_id>`, the reviews' listing key
   * (pipeline/ports.ts `reviewListKey`), so a Query in key order is the listing order and a page's cursor is its last
   * sort key (the port contract's test holds both adapters to that cursor).
   */
  reviewSort: (requestedAt: string, claimId: string) => `${requestedAt}#${claimId}`,
  /** Every refund settlement whose refund has no pending review; sort key `settlementSort` (reconciliation). */
  settlements: "SETTLEMENTS",
  /** The sort key of a settlement outside the pending reviews: `<requested_at>#<claim_id>`, oldest request first. */
  settlementSort: (requestedAt: string, claimId: string) => `${requestedAt}#${claimId}`,
  /**
   * The settlements whose failed refund awaits a person (review PENDING), moved out of `settlements` by the write
   * that opens the review and back by the one that decides it; sort key `reviewSort(<review.requested_at>, <claim_id>)`.
   */
  refundReviewsPending: "REFUND_REVIEW#PENDING",
  /**
   * A settlement whose refund review was decided but whose effects are not yet marked performed, from the put that
   * decides it to the one that marks it; sort key `<requested_at>#<claim_id>` (the sweep completes these).
   */
  refundReviewsUnperformed: "REFUND_REVIEW#UNPERFORMED",
  /**
   * A settlement whose refund is not settled (pending, or failed after a RETRY's new attempt) and has no review
   * pending or unperformed; sort key `settlementSort`. The refund-due alarm reads it with the two review partitions.
   */
  settlementsUnsettled: "SETTLEMENTS#UNSETTLED",
} as const;

/** The table definition: `pk`/`sk`, GSI `gsi1` (`gsi1pk`/`gsi1sk`, all attributes), on-demand billing. */
function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [
      { AttributeName: "pk", AttributeType: "S" },
      { AttributeName: "sk", AttributeType: "S" },
      { AttributeName: "gsi1pk", AttributeType: "S" },
      { AttributeName: "gsi1sk", AttributeType: "S" },
    ],
    KeySchema: [
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: GSI1,
        KeySchema: [
          { AttributeName: "gsi1pk", KeyType: "HASH" },
          { AttributeName: "gsi1sk", KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "ALL" },
      },
    ],
  };
}

/**
 * Creates the table (local stack, tests) and waits until it is ACTIVE; an existing table is left as it
 * is. TTL is not switched on: dynalite has no UpdateTimeToLive, and readers filter `expires_at` anyway.
 */
export async function createTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException) && (error as Error | undefined)?.name !== "ResourceInUseException") {
      throw new TableSetupError(`could not create the table ${tableName}: ${describeError(error)}`, { cause: error });
    }
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (out.Table?.GlobalSecondaryIndexes ?? []).every(
      (i) => i.IndexStatus === undefined || i.IndexStatus === "ACTIVE",
    );
    if (out.Table?.TableStatus === "ACTIVE" && indexesActive) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new TableSetupError(`the table ${tableName} did not become ACTIVE`);
}

/** The stored form of an order: the order's own fields plus its keys and the gsi1 `ORDERS` listing. */
function orderItem(order: Order): Record<string, unknown> {
  return {
    ...keys.order(order.order_id),
    gsi1pk: gsi1.orders,
    gsi1sk: order.order_id,
    entity: "order",
    ...stripUndefined(order),
  };
}

/**
 * Writes the authoritative orders (validated like the in-memory context store; a duplicate id or an
 * invalid order throws `OrderDataError` before anything is written). Existing orders are overwritten.
 */
export async function seedOrders(
  client: DynamoDBDocumentClient,
  tableName: string,
  orders: readonly unknown[],
): Promise<void> {
  const seen = new Set<string>();
  const items = orders.map((input) => {
    const order = validateOrder(input);
    if (seen.has(order.order_id)) throw new TableSetupError(`duplicate order ${order.order_id} in the orders to seed`);
    seen.add(order.order_id);
    return orderItem(order);
  });
  for (let i = 0; i < items.length; i += 25) {
    let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 1; requests.length > 0; attempt++) {
      if (attempt > 8)
        throw new TableSetupError(
          `seeding orders into ${tableName}: ${requests.length} writes still unprocessed after 8 attempts`,
        );
      const out = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (out.UnprocessedItems?.[tableName] ?? []) as typeof requests;
      if (requests.length > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
    }
  }
}

/** Epoch seconds as the TTL attribute holds them. */
export function epochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** True when the item carries an `expires_at` at or before `nowMs` (DynamoDB may not have deleted it yet; dynalite never does). */
/** Append stamps of audit items (`seq`): wall-clock microseconds, strictly increasing within this process. */
export const nextAppendStamp: () => number = (() => {
  let last = 0;
  return () => {
    last = Math.max(Date.now() * 1000, last + 1);
    return last;
  };
})();

export function isExpired(item: Record<string, unknown> | undefined, nowMs: number): boolean {
  const at = item?.expires_at;
  return typeof at === "number" && at <= epochSeconds(nowMs);
}

/** The entity without the table's own attributes. */
export function withoutTableAttributes(item: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (!TABLE_ONLY_ATTRIBUTES.includes(k)) out[k] = v;
  return out;
}

/** A deep copy of JSON data without `undefined` members (the injected DocumentClient may not remove them). */
export function stripUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
