// VerdictRepository on DynamoDB: one item per proposal idempotency key (`VERDICT#<key>`/`VERDICT`).
// putVerdictOnce is a put with `attribute_not_exists(pk)`; recordExecution an update conditioned on
// `execution = PENDING` (first writer wins). The item is written twice for an ACCEPT (put, execution; a
// third time, published, only when its claim does not take it: pipeline/decide/publication.ts) and each
// write is billed by its whole size, so the documents other than `record` — checks, events, review, audit —
// are one JSON body in its cheapest form (compact.ts; compressed against the record, which the ClaimVerdict
// event repeats), and the record's text leaves out the ids the item holds anyway, so a settled ACCEPT with its
// policy_version fits 1 KB (dictionary v2, compact.ts). `record` stays JSON text and `execution`/`published` plain attributes, readable in
// the console (and by the fault tests' table scan). Items written before (every document as its own JSON text
// attribute) are read too, and a text attribute wins over the body (an older writer's update).
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { StoredVerdict, VerdictRepository } from "../../pipeline/ports.ts";
import { itemBytes, packedNames, packText, unpackText } from "./compact.ts";
import { openText, sealText, tableVault } from "../vault/sealed-table.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { InvalidArgumentError, isConditionalCheckFailed, StoredItemError, VerdictNotFoundError } from "./errors.ts";
import { keys } from "./table.ts";
import { dfidOf } from "../../core/kernel/claim-record.ts";
import { personalFields } from "../../core/privacy/sealing.ts";
import { verdictIdFor } from "../../core/kernel/execution.ts";

const json = (value: unknown) => JSON.stringify(value);

type VerdictRecord = StoredVerdict["record"];

/**
 * The record as stored: the ids the item holds anyway or follow from it (`claim_id`, the key in `pk`, a `dfid` that
 * is the claim's own, and a `verdict_id` that is the key's, `verdictIdFor`) are "" in the text, in their place, and
 * filled in again on read — 180 bytes a verdict, which keep a settled ACCEPT under one write unit. The text stays
 * JSON, readable in the console and by table scans.
 */
function storedRecordText(v: Pick<StoredVerdict, "idempotency_key" | "claim_id" | "record">): string {
  const r = v.record as Record<string, unknown>;
  const elide = (name: string, value: string) => (r[name] === value ? { [name]: "" } : {});
  return json({
    ...r,
    ...elide("verdict_id", verdictIdFor(v.idempotency_key)),
    ...elide("claim_id", v.claim_id),
    ...elide("idempotency_key", v.idempotency_key),
    ...elide("dfid", dfidOf(v.claim_id)),
  });
}

/** The record a stored text stands for (the inverse of {@link storedRecordText}; a text written before is whole). */
function recordOfText(text: string, claimId: string, key: string): VerdictRecord {
  const r = JSON.parse(text) as Record<string, unknown>;
  const fill = (name: string, value: () => string) => (r[name] === "" ? { [name]: value() } : {});
  return {
    ...r,
    ...fill("verdict_id", () => verdictIdFor(key)),
    ...fill("claim_id", () => claimId),
    ...fill("idempotency_key", () => key),
    ...fill("dfid", () => dfidOf(claimId)),
  } as VerdictRecord;
}

/**
 * The record of a verdict item read raw (a table scan, as the fault and chaos checks read it): the ids its text leaves
 * out filled in from the item, as the store's own reads fill them.
 */
export function scannedVerdictRecord(item: Record<string, unknown>): VerdictRecord {
  return recordOfText(String(item.record), String(item.claim_id), String(item.pk).replace(/^VERDICT#/, ""));
}

/** The documents kept in the body, in the order they are written. */
const BODY_FIELDS = ["checks", "events", "review", "audit"] as const;
type Body = Partial<Pick<StoredVerdict, (typeof BODY_FIELDS)[number]>>;

const bodyOf = (v: Pick<StoredVerdict, "checks" | "events" | "review" | "audit">): Body => ({
  checks: v.checks,
  events: v.events,
  review: v.review,
  audit: v.audit,
});

/** The item without its body (what the body's size is added to). */
function itemHead(
  v: Pick<StoredVerdict, "idempotency_key" | "claim_id" | "record" | "layer" | "execution" | "published">,
): Record<string, unknown> {
  return {
    ...keys.verdict(v.idempotency_key),
    entity: "verdict",
    claim_id: v.claim_id,
    record: storedRecordText(v),
    layer: v.layer,
    execution: v.execution,
    published: v.published,
  };
}

async function toVerdict(item: Record<string, unknown>, vault: PersonalDataVault | undefined): Promise<StoredVerdict> {
  try {
    const pk = String(item.pk);
    const key = typeof item.idempotency_key === "string" ? item.idempotency_key : pk.slice(pk.indexOf("#") + 1);
    const record = recordOfText(item.record as string, item.claim_id as string, key);
    // The body was compressed against the whole record's text.
    const packed = await unpackText(item, "body", json(record));
    const bodyText = packed === undefined ? undefined : await openText(vault, packed, item.claim_id as string);
    const body = (bodyText === undefined ? {} : JSON.parse(bodyText)) as Record<string, unknown>;
    const field = (name: (typeof BODY_FIELDS)[number]): unknown =>
      typeof item[name] === "string" ? JSON.parse(item[name] as string) : body[name];
    const [checks, events, review, audit] = BODY_FIELDS.map(field);
    if (!Array.isArray(checks) || !Array.isArray(events)) throw new Error("checks or events are missing");
    return {
      idempotency_key: key,
      claim_id: item.claim_id as string,
      record,
      layer: item.layer as number,
      checks,
      execution: item.execution as StoredVerdict["execution"],
      ...(review === undefined ? {} : { review: review as StoredVerdict["review"] }),
      events: events as StoredVerdict["events"],
      ...(audit === undefined ? {} : { audit: audit as StoredVerdict["audit"] }),
      published: item.published === true,
    };
  } catch (error) {
    throw new StoredItemError(`stored verdict ${String(item.pk)} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * The item a verdict is stored as (a put, or the whole item after an update), its body packed against the record
 * (sealed first when the table has a vault). Exported for what measures write units (tests, the bench).
 */
export async function verdictItem(
  v: StoredVerdict,
  vault?: PersonalDataVault | undefined,
): Promise<Record<string, unknown>> {
  const head = itemHead(v);
  const body = await packText("body", await sealBody(vault, v), itemBytes(head), bodyPacking(v.record));
  return { ...head, [body.attribute]: body.value };
}

/**
 * The body's text, its personal fields sealed under the verdict's claim, which the item keeps beside it (`claim_id`):
 * the tokens leave it out (issue 37), and a token moved to another claim's verdict does not open.
 */
function sealBody(
  vault: PersonalDataVault | undefined,
  v: Pick<StoredVerdict, "claim_id" | "checks" | "events" | "review" | "audit">,
): Promise<string> {
  return sealText(vault, json(bodyOf(v)), v.claim_id, { implied: true });
}

/**
 * How the body is packed: compressed against the record's text (the ClaimVerdict event repeats it), sealed or not —
 * the record holds no personal field (its `reason` is the code's), so a sealing client stores and reads it as it is,
 * and a reader has the very text it was compressed against (issue 37: sealed, without it, the verdict was 127 bytes
 * larger, over a write unit). A record that held one (none does) would read sealed or erased: then no context.
 */
function bodyPacking(record: VerdictRecord): { context?: string } {
  return personalFields(record).length === 0 ? { context: json(record) } : {};
}

/** A VerdictRepository on the single table. */
export function createDynamoVerdictRepository(ctx: DynamoContext): VerdictRepository {
  const { client, tableName } = ctx;
  // A sealing client: the body is sealed before it is compressed (bodyPacking).
  const vault = tableVault(client);
  const packBody = async (v: StoredVerdict, restBytes: number) =>
    packText("body", await sealBody(vault, v), restBytes, bodyPacking(v.record));
  // Verdicts as last put or read here. recordExecution rewrites the body, which holds the checks (never
  // changed after the put): the kernel reads or puts the verdict before it settles it, so they are known.
  const seen = new Map<string, StoredVerdict>();
  const see = (v: StoredVerdict): StoredVerdict => {
    seen.delete(v.idempotency_key);
    seen.set(v.idempotency_key, v);
    if (seen.size > 500) seen.delete(seen.keys().next().value!);
    return v;
  };

  const getVerdict = async (key: string): Promise<StoredVerdict | undefined> => {
    const out = await dynamoCall(`GetItem verdict ${key}`, () =>
      client.send(new GetCommand({ TableName: tableName, Key: keys.verdict(key), ConsistentRead: true })),
    );
    return out.Item ? see(await toVerdict(out.Item, vault)) : undefined;
  };

  return {
    getVerdict,

    async putVerdictOnce(verdict) {
      if (typeof verdict?.idempotency_key !== "string" || verdict.idempotency_key === "")
        throw new InvalidArgumentError("putVerdictOnce: idempotency_key must be a non-empty string");
      const item = await verdictItem(verdict, vault);
      try {
        await dynamoCall(`PutItem verdict ${verdict.idempotency_key}`, () =>
          client.send(
            new PutCommand({ TableName: tableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" }),
          ),
        );
        return see(await toVerdict(item, vault));
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const stored = await getVerdict(verdict.idempotency_key);
        if (!stored)
          throw new StoredItemError(`verdict ${verdict.idempotency_key} exists by condition but cannot be read`, {
            cause: error,
          });
        return stored;
      }
    },

    async recordExecution(key, outcome) {
      const known = seen.get(key) ?? (await getVerdict(key));
      if (!known) throw new VerdictNotFoundError(key);
      if (known.execution !== "PENDING") return (await getVerdict(key)) ?? known; // settled for good: no write to lose
      const next: StoredVerdict = {
        ...known,
        ...(outcome.record === undefined ? {} : { record: outcome.record }),
        ...(outcome.layer === undefined ? {} : { layer: outcome.layer }),
        ...(outcome.checks === undefined ? {} : { checks: outcome.checks }),
        execution: outcome.execution,
        events: outcome.events,
        ...(outcome.review === undefined ? {} : { review: outcome.review }),
        ...(outcome.audit === undefined ? {} : { audit: outcome.audit }),
      };
      const head = itemHead(next);
      const body = await packBody(next, itemBytes(head));
      const stale = [...packedNames("body").filter((n) => n !== body.attribute), ...BODY_FIELDS];
      try {
        const out = await dynamoCall(`UpdateItem verdict ${key} execution`, () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.verdict(key),
              // A decision the kernel made again (lost reservation race) replaces the record: it was never published.
              UpdateExpression: `SET execution = :e, #body = :b, #record = :r, #layer = :l REMOVE ${stale.map((_, i) => `#r${i}`).join(", ")}`,
              ConditionExpression: "execution = :pending",
              ExpressionAttributeNames: {
                "#body": body.attribute,
                "#record": "record",
                "#layer": "layer",
                ...Object.fromEntries(stale.map((n, i) => [`#r${i}`, n])),
              },
              ExpressionAttributeValues: {
                ":e": outcome.execution,
                ":b": body.value,
                ":r": head.record,
                ":l": next.layer,
                ":pending": "PENDING",
              },
              ReturnValues: "ALL_NEW",
            }),
          ),
        );
        return see(await toVerdict(out.Attributes as Record<string, unknown>, vault));
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        // Settled already (first writer won) — or no verdict at all, which is a caller bug.
        const stored = await getVerdict(key);
        if (!stored) throw new VerdictNotFoundError(key);
        return stored;
      }
    },

    async markPublished(key) {
      try {
        await dynamoCall(`UpdateItem verdict ${key} published`, () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.verdict(key),
              UpdateExpression: "SET published = :t",
              // Only one call marks it: the one whose answer is true (a redelivery finds it marked already).
              ConditionExpression: "attribute_exists(pk) AND (attribute_not_exists(published) OR published <> :t)",
              ExpressionAttributeValues: { ":t": true },
            }),
          ),
        );
        const known = seen.get(key);
        if (known) see({ ...known, published: true });
        return true;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        return false;
      }
    },
  };
}
