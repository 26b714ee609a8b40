// AuditLog on DynamoDB. Each event is stored under its flow (`DFID#<dfid>`/`AUDIT#<instant>#<hash>`) and,
// when its root differs, copied under the root flow so that byDfid(root) is one partition query. The
// primary item carries gsi1 `SIM#<simulation_id>`/`<instant>#<hash>` for bySimulation. The hash is the
// SHA-256 of the canonical event, and every put is conditional on absence: a redelivered identical
// event is dropped. An append stamp (`seq`) keeps append order among events with the same timestamp.
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip as gunzipCb, gzip as gzipCb } from "node:zlib";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { canonicalize } from "../../core/crew/canonical.ts";
import { parseAuditEvent } from "../../core/dir/audit.ts";
import type { AuditEvent } from "../../core/dir/audit.ts";
import type { AuditLog } from "../../core/dir/ports.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { isConditionalCheckFailed, ItemTooLargeError, StoredItemError } from "./errors.ts";
import { GSI1, gsi1, keys } from "./table.ts";

const gzip = promisify(gzipCb);
const gunzip = promisify(gunzipCb);

const COMPRESS_OVER_BYTES = 64 * 1024;
const MAX_EVENT_BYTES = 350_000;

type AuditItem = { event?: string; event_gz?: Uint8Array; seq?: number; instant?: string; hash?: string };

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
  const a = item as AuditItem;
  try {
    const text = a.event_gz instanceof Uint8Array ? (await gunzip(a.event_gz)).toString("utf8") : a.event;
    if (typeof text !== "string") throw new Error("no event body");
    return parseAuditEvent(JSON.parse(text));
  } catch (error) {
    throw new StoredItemError(`stored audit event ${String(item.pk)}/${String(item.sk)} cannot be read: ${(error as Error).message}`, { cause: error });
  }
}

/** Events in append order: by instant, then append stamp; the same event (hash) once. */
async function ordered(items: Record<string, unknown>[]): Promise<AuditEvent[]> {
  const seen = new Set<string>();
  const unique = (items as (Record<string, unknown> & AuditItem)[]).filter((i) => {
    const id = String(i.hash ?? i.sk);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  unique.sort((a, b) => {
    const ia = a.instant ?? "";
    const ib = b.instant ?? "";
    if (ia !== ib) return ia < ib ? -1 : 1;
    return (a.seq ?? 0) - (b.seq ?? 0);
  });
  return Promise.all(unique.map(toEvent));
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
      const bytes = Buffer.byteLength(text, "utf8");
      const body: Record<string, unknown> = bytes > COMPRESS_OVER_BYTES ? { event_gz: new Uint8Array(await gzip(text)) } : { event: text };
      const stored = body.event_gz instanceof Uint8Array ? body.event_gz.byteLength : bytes;
      if (stored > MAX_EVENT_BYTES) throw new ItemTooLargeError(`audit event ${event.event_type} of ${event.dfid} is ${stored} bytes compressed, over ${MAX_EVENT_BYTES}`);
      const common = { entity: "audit", instant, hash, seq: stamp(), ...body };
      const simulationId = event.details.simulation_id;
      await putOnce({
        ...keys.audit(event.dfid, instant, hash),
        ...common,
        ...(typeof simulationId === "string" && simulationId !== "" ? { gsi1pk: gsi1.simulation(simulationId), gsi1sk: `${instant}#${hash}` } : {}),
      });
      if (event.root_dfid !== event.dfid) await putOnce({ ...keys.audit(event.root_dfid, instant, hash), ...common });
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
  };
}
