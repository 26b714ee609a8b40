// AuditLog on DynamoDB. Each event is stored under its flow (`DFID#<dfid>`/`AUDIT#<instant>#<hash>`) and,
// when its root differs, copied under the root flow so that byDfid(root) is one partition query. The
// primary item carries gsi1 `SIM#<simulation_id>`/`<instant>#<hash>` for bySimulation (`SERVED` for a claim sent
// without a simulation_id, for recentServed). The hash is the
// SHA-256 of the canonical event, and every put is conditional on absence: a redelivered identical
// event is dropped. An append stamp (`seq`) keeps append order among events with the same timestamp.
// The event is stored in its cheapest form (compact.ts: `event`, `event_gz` or `event_br`); instant and
// hash are read from the sort key (items written before also carry them as attributes).
import { createHash } from "node:crypto";
import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { canonicalize } from "../../core/crew/canonical.ts";
import { parseAuditEvent } from "../../core/integrity/audit.ts";
import type { AuditEvent } from "../../core/integrity/audit.ts";
import type { AuditLog } from "../../pipeline/ports.ts";
import { itemBytes, packText, unpackText } from "./compact.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { isConditionalCheckFailed, ItemTooLargeError, StoredItemError } from "./errors.ts";
import { GSI1, gsi1, keys } from "./table.ts";

const MAX_EVENT_BYTES = 350_000;

type AuditItem = { sk?: unknown; seq?: number; instant?: string; hash?: string };

/** Instant and hash of an item: from its sort key `AUDIT#<instant>#<hash>`, or the attributes of an older item. */
function identity(item: AuditItem): { instant: string; hash: string } {
  const sk = String(item.sk ?? "");
  const cut = sk.lastIndexOf("#");
  return { instant: item.instant ?? sk.slice("AUDIT#".length, cut), hash: item.hash ?? sk.slice(cut + 1) };
}

/** The UTC instant of an ISO timestamp with any offset, so that sort keys compare in time order. */
function instantOf(createdAt: string): string {
  const ms = Date.parse(createdAt);
  return Number.isNaN(ms) ? createdAt : new Date(ms).toISOString();
}

/** Append stamps: wall-clock microseconds, strictly increasing within this process. */
function createStamper(): () => number {
  let last = 0;
  return () => {
    last = Math.max(Date.now() * 1000, last + 1);
    return last;
  };
}

async function toEvent(item: Record<string, unknown>): Promise<AuditEvent> {
  try {
    const text = await unpackText(item, "event");
    if (text === undefined) throw new Error("no event body");
    return parseAuditEvent(JSON.parse(text));
  } catch (error) {
    throw new StoredItemError(`stored audit event ${String(item.pk)}/${String(item.sk)} cannot be read: ${(error as Error).message}`, { cause: error });
  }
}

/** Events in append order: by instant, then append stamp; the same event (hash) once. */
async function ordered(items: Record<string, unknown>[]): Promise<AuditEvent[]> {
  const seen = new Set<string>();
  const unique = (items as (Record<string, unknown> & AuditItem)[])
    .map((item) => ({ item, ...identity(item) }))
    .filter(({ hash }) => {
      if (seen.has(hash)) return false;
      seen.add(hash);
      return true;
    });
  unique.sort((a, b) => {
    if (a.instant !== b.instant) return a.instant < b.instant ? -1 : 1;
    return (a.item.seq ?? 0) - (b.item.seq ?? 0);
  });
  return Promise.all(unique.map(({ item }) => toEvent(item)));
}

/** An AuditLog on the single table; `append` of an identical event is a no-op. */
export function createDynamoAuditLog(ctx: DynamoContext): AuditLog {
  const { client, tableName } = ctx;
  const stamp = createStamper();

  const putOnce = async (item: Record<string, unknown>) => {
    try {
      await dynamoCall(`PutItem audit ${String(item.pk)}`, () => client.send(new PutCommand({ TableName: tableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" })));
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error; // redelivered: already appended
    }
  };

  return {
    async append(input) {
      const event = parseAuditEvent(input);
      const text = JSON.stringify(event);
      const hash = createHash("sha256").update(canonicalize(event)).digest("hex");
      const instant = instantOf(event.created_at);
      const simulationId = event.details.simulation_id;
      const primary: Record<string, unknown> = {
        ...keys.audit(event.dfid, instant, hash),
        entity: "audit",
        seq: stamp(),
        gsi1pk: typeof simulationId === "string" && simulationId !== "" ? gsi1.simulation(simulationId) : gsi1.served,
        gsi1sk: `${instant}#${hash}`,
      };
      const body = await packText("event", text, itemBytes(primary));
      if (body.bytes > MAX_EVENT_BYTES) throw new ItemTooLargeError(`audit event ${event.event_type} of ${event.dfid} is ${body.bytes} bytes compressed, over ${MAX_EVENT_BYTES}`);
      await putOnce({ ...primary, [body.attribute]: body.value });
      if (event.root_dfid !== event.dfid) await putOnce({ ...keys.audit(event.root_dfid, instant, hash), entity: "audit", seq: primary.seq, [body.attribute]: body.value });
    },

    async byDfid(dfid) {
      const items = await queryAll(ctx, `Query audit of ${dfid}`, {
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :audit)",
        ExpressionAttributeValues: { ":pk": keys.auditPartition(dfid), ":audit": "AUDIT#" },
        ConsistentRead: true,
      });
      return ordered(items);
    },

    async bySimulation(simulationId) {
      const items = await queryAll(ctx, `Query audit of simulation ${simulationId}`, {
        IndexName: GSI1,
        KeyConditionExpression: "gsi1pk = :pk",
        ExpressionAttributeValues: { ":pk": gsi1.simulation(simulationId) },
      });
      return ordered(items);
    },

    // Newest first through the served partition until `limit` receipts were read and the instant of the last of
    // them is passed: every later event of those claims is at or after its receipt, so it has been read by then.
    // Receipts at the same instant are told apart by their append stamp (the sort key orders them by hash).
    async recentServed(limit) {
      if (!Number.isInteger(limit) || limit <= 0) return [];
      const items: Record<string, unknown>[] = [];
      let receipts = 0;
      let cutoff: string | undefined;
      let done = false;
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dynamoCall("Query served audit", () =>
          client.send(new QueryCommand({
            TableName: tableName,
            IndexName: GSI1,
            KeyConditionExpression: "gsi1pk = :pk",
            ExpressionAttributeValues: { ":pk": gsi1.served },
            ScanIndexForward: false,
            ...(ctx.pageSize ? { Limit: ctx.pageSize } : {}),
            ...(start ? { ExclusiveStartKey: start } : {}),
          })),
        );
        for (const item of (page.Items ?? []) as (Record<string, unknown> & AuditItem)[]) {
          const { instant } = identity(item);
          if (cutoff !== undefined && instant < cutoff) {
            done = true;
            break;
          }
          items.push(item);
          if ((await toEvent(item)).event_type === "CLAIM_RECEIVED" && ++receipts === limit) cutoff = instant;
        }
        start = done ? undefined : (page.LastEvaluatedKey as Record<string, unknown> | undefined);
      } while (start);
      const events = await ordered(items);
      const recent = new Set<string>();
      for (let i = events.length - 1; i >= 0 && recent.size < limit; i--) if (events[i]!.event_type === "CLAIM_RECEIVED") recent.add(events[i]!.dfid);
      return events.filter((e) => recent.has(e.dfid));
    },
  };
}
