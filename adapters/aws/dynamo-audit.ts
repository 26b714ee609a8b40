// AuditLog on DynamoDB. Each event is stored under its flow (`DFID#<dfid>`/`AUDIT#<instant>#<hash>`) and,
// when its root differs, copied under the root flow so that byDfid(root) is one partition query. The
// primary item of a simulation's event carries gsi1 `SIM#<simulation_id>`/`<instant>#<hash>` for bySimulation;
// a claim sent without a simulation_id has no index entry in the audit (the served view finds those claims
// through the claims' own listing, pipeline/served.ts; receipts written before under `SERVED` stay unread).
// The hash is the
// SHA-256 of the canonical event, and every put is conditional on absence: a redelivered identical
// event is dropped. An append stamp (`seq`) keeps append order among events with the same timestamp.
// The event is stored in its cheapest form (compact.ts: `event`, `event_z1`, or `event_gz`/`event_br`
// before); instant and hash are read from the sort key (items written before also carry them as
// attributes). `appendAll` stores the events of one handler step as ONE item (`events…`: a JSON array,
// sort key from the first event's instant and the hash of the whole list): a step's audit is one write.
// Readers flatten such items and drop any event seen before (by the hash of the event itself), so a
// redelivered step, or an event stored both alone and in a list, is returned once. An orchestrator step's own
// events are not appended here: they are stored in the session step item that commits the step
// (dynamo-sessions.ts, `AUDIT#~SESSION#<version>` in the same partition), and readers take them from it. With
// a retention horizon (`retention.auditMs`) every item carries `expires_at` and readers skip expired ones.
import { createHash } from "node:crypto";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { canonicalize } from "../../core/crew/canonical.ts";
import { withPersonalErased } from "../../core/privacy/sealing.ts";
import { parseAuditEvent } from "../../core/integrity/audit.ts";
import type { AuditEvent } from "../../core/integrity/audit.ts";
import type { AuditLog } from "../../pipeline/ports.ts";
import { itemBytes, packedNames, packText, unpackText } from "./compact.ts";
import { openText, sealText, tableVault } from "../vault/sealed-table.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { isConditionalCheckFailed, ItemTooLargeError, StoredItemError } from "./errors.ts";
import { epochSeconds, GSI1, gsi1, isExpired, keys, nextAppendStamp } from "./table.ts";

const MAX_EVENT_BYTES = 350_000;

type AuditItem = { sk?: unknown; seq?: number; instant?: string; hash?: string };

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

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

const where = (item: Record<string, unknown>) => `${String(item.pk)}/${String(item.sk)}`;

async function toEvent(item: Record<string, unknown>, vault: PersonalDataVault | undefined): Promise<AuditEvent> {
  try {
    const packed = await unpackText(item, "event");
    const text = packed === undefined ? undefined : await openText(vault, packed);
    if (text === undefined) throw new Error("no event body");
    return parseAuditEvent(JSON.parse(text));
  } catch (error) {
    throw new StoredItemError(`stored audit event ${where(item)} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

async function toEvents(item: Record<string, unknown>, vault: PersonalDataVault | undefined): Promise<AuditEvent[]> {
  try {
    const packed = await unpackText(item, "events");
    const text = packed === undefined ? undefined : await openText(vault, packed);
    if (text === undefined) throw new Error("no events body");
    const list: unknown = JSON.parse(text);
    if (!Array.isArray(list)) throw new Error("the events body is not a list");
    return list.map((e) => parseAuditEvent(e));
  } catch (error) {
    throw new StoredItemError(`stored audit events ${where(item)} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The audit events a session step item carries (dynamo-sessions.ts: `audit` in its packed body; none when absent). */
async function stepEvents(item: Record<string, unknown>, vault: PersonalDataVault | undefined): Promise<AuditEvent[]> {
  try {
    const packed = await unpackText(item, "body");
    const text = packed === undefined ? undefined : await openText(vault, packed);
    if (text === undefined) throw new Error("no body");
    const body = JSON.parse(text) as { audit?: unknown } | null;
    const list = body?.audit ?? [];
    if (!Array.isArray(list)) throw new Error("its audit is not a list");
    return list.map((e) => parseAuditEvent(e));
  } catch (error) {
    throw new StoredItemError(`stored session step ${where(item)} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** True for an item holding a list of events (appendAll). */
const isList = (item: Record<string, unknown>) => packedNames("events").some((n) => item[n] !== undefined);

/**
 * What makes two stored copies one event: the hash of the event with its personal fields read as erased
 * (core/privacy/sealing.ts). A copy's own hash would do until the claim's erasure, then a receipt stored alone
 * (its sort key hashed before) and again in a step's list (hashed as read, now erased) would read as two.
 */
const sameness = (event: AuditEvent): string => sha256(canonicalize(withPersonalErased(event)));

/** Events in append order: by instant, then append stamp, then place in their list; the same event (sameness) once. */
async function ordered(
  items: Record<string, unknown>[],
  nowMs: number,
  vault: PersonalDataVault | undefined,
): Promise<AuditEvent[]> {
  type Entry = { event: AuditEvent; instant: string; hash: string; seq: number; index: number };
  const entries: Entry[] = [];
  for (const item of items as (Record<string, unknown> & AuditItem)[]) {
    if (isExpired(item, nowMs)) continue; // past the retention horizon: as if DynamoDB had deleted it
    const seq = item.seq ?? 0;
    if (item.entity === "session-done") continue; // the step items' outbox marker: no event
    if (item.entity === "session") {
      (await stepEvents(item, vault)).forEach((event, index) =>
        entries.push({ event, instant: instantOf(event.created_at), hash: sameness(event), seq, index }),
      );
    } else if (isList(item)) {
      (await toEvents(item, vault)).forEach((event, index) =>
        entries.push({ event, instant: instantOf(event.created_at), hash: sameness(event), seq, index }),
      );
    } else {
      const event = await toEvent(item, vault);
      entries.push({ event, instant: identity(item).instant, hash: sameness(event), seq, index: 0 });
    }
  }
  entries.sort((a, b) =>
    a.instant !== b.instant ? (a.instant < b.instant ? -1 : 1) : a.seq !== b.seq ? a.seq - b.seq : a.index - b.index,
  );
  const seen = new Set<string>();
  return entries.filter(({ hash }) => !seen.has(hash) && !!seen.add(hash)).map(({ event }) => event);
}

/** An AuditLog on the single table; `append` of an identical event is a no-op. */
export function createDynamoAuditLog(ctx: DynamoContext): AuditLog {
  const { client, tableName } = ctx;
  const stamp = nextAppendStamp;

  const putOnce = async (item: Record<string, unknown>) => {
    try {
      await dynamoCall(`PutItem audit ${String(item.pk)}`, () =>
        client.send(
          new PutCommand({ TableName: tableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error; // redelivered: already appended
    }
  };

  /** Stores one item (and its copy under the root flow): `body` is `event` for one event, `events` for a list. */
  const store = async (events: readonly AuditEvent[], body: "event" | "events") => {
    const first = events[0]!;
    const text = body === "event" ? JSON.stringify(first) : JSON.stringify(events);
    const hash =
      body === "event" ? sha256(canonicalize(first)) : sha256(events.map((e) => sha256(canonicalize(e))).join(","));
    const instant = instantOf(first.created_at);
    const simulationId = first.details.simulation_id;
    const expires =
      ctx.retention?.auditMs === undefined ? {} : { expires_at: epochSeconds(ctx.clock.now() + ctx.retention.auditMs) };
    const primary: Record<string, unknown> = {
      ...keys.audit(first.dfid, instant, hash),
      entity: "audit",
      seq: stamp(),
      ...expires,
      ...(typeof simulationId === "string" && simulationId !== ""
        ? { gsi1pk: gsi1.simulation(simulationId), gsi1sk: `${instant}#${hash}` }
        : {}),
    };
    const packed = await packText(body, await sealText(tableVault(client), text), itemBytes(primary));
    if (packed.bytes > MAX_EVENT_BYTES) {
      if (body === "events") {
        for (const event of events) await store([event], "event");
        return;
      }
      throw new ItemTooLargeError(
        `audit event ${first.event_type} of ${first.dfid} is ${packed.bytes} bytes compressed, over ${MAX_EVENT_BYTES}`,
      );
    }
    await putOnce({ ...primary, [packed.attribute]: packed.value });
    if (first.root_dfid !== first.dfid)
      await putOnce({
        ...keys.audit(first.root_dfid, instant, hash),
        entity: "audit",
        seq: primary.seq,
        ...expires,
        [packed.attribute]: packed.value,
      });
  };

  /** Every item of a flow's partition (its own events and those whose root it is). */
  const flowItems = (dfid: string) =>
    queryAll(ctx, `Query audit of ${dfid}`, {
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :audit)",
      ExpressionAttributeValues: { ":pk": keys.auditPartition(dfid), ":audit": "AUDIT#" },
      ConsistentRead: true,
    });

  return {
    async append(input) {
      await store([parseAuditEvent(input)], "event");
    },

    async appendAll(inputs) {
      const events = inputs.map((e) => parseAuditEvent(e));
      // One item per flow (and simulation): an item lives in one partition and one gsi1 listing.
      const groups = new Map<string, AuditEvent[]>();
      for (const e of events) {
        const key = JSON.stringify([e.dfid, e.root_dfid, e.details.simulation_id ?? null]);
        groups.set(key, [...(groups.get(key) ?? []), e]);
      }
      for (const group of groups.values()) await store(group, group.length === 1 ? "event" : "events");
    },

    async byDfid(dfid) {
      return ordered(await flowItems(dfid), ctx.clock.now(), tableVault(client));
    },

    async bySimulation(simulationId) {
      const items = await queryAll(ctx, `Query audit of simulation ${simulationId}`, {
        IndexName: GSI1,
        KeyConditionExpression: "gsi1pk = :pk",
        ExpressionAttributeValues: { ":pk": gsi1.simulation(simulationId) },
      });
      return ordered(items, ctx.clock.now(), tableVault(client));
    },
  };
}
