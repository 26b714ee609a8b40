// VerdictRepository on DynamoDB: one item per proposal idempotency key (`VERDICT#<key>`/`VERDICT`).
// putVerdictOnce is a put with `attribute_not_exists(pk)`; recordExecution an update conditioned on
// `execution = PENDING` (first writer wins). The item is written twice for an ACCEPT (put, execution; a
// third time, published, only when its claim does not take it: pipeline/decide/publication.ts) and each
// write is billed by its whole size, so the documents other than `record` — checks, events, review, audit —
// are one JSON body in its cheapest form (compact.ts; compressed against the record, which the ClaimVerdict
// event repeats), and the record's text leaves out the ids the item holds anyway, so a settled ACCEPT with its
// policy_version fits 1 KB (dictionary v2, compact.ts). Sealed (every deployed function), the body's personal
// fields — the claim's and the proposal's reasons in the kernel's inputs — are one token beside it (`pd_z2`),
// deflated against the record before sealing: a settled ACCEPT keeps one write unit with long reasons (issue 37,
// i37v). `record` stays JSON text and `execution`/`published` plain attributes, readable in
// the console (and by the fault tests' table scan). Items written before (every document as its own JSON text
// attribute; a token per personal field inside the body; the record's ids `""` in place) are read too, and a text
// attribute wins over the body (an older writer's update).
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { StoredVerdict, VerdictRepository } from "../../pipeline/ports.ts";
import { COMPACT_DICTIONARIES, itemBytes, packedNames, packText, unpackText } from "./compact.ts";
import { openFieldsAsOne, sealFieldsAsOne, tableVault } from "../vault/sealed-table.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { InvalidArgumentError, isConditionalCheckFailed, StoredItemError, VerdictNotFoundError } from "./errors.ts";
import { keys } from "./table.ts";
import { dfidOf } from "../../core/kernel/claim-record.ts";
import { personalFields, SEALED_PREFIX_V2 } from "../../core/privacy/sealing.ts";
import { verdictIdFor } from "../../core/kernel/execution.ts";

const json = (value: unknown) => JSON.stringify(value);

type VerdictRecord = StoredVerdict["record"];

/**
 * The ids a record's text leaves out when the item gives them (`verdict_id`: the key's `verdictIdFor`; `claim_id`; the
 * key; a `dfid` that is the claim's own), each with the key it follows in a kernel's record: a reader puts each back
 * in its place, so the record reads key for key as written (the body was compressed against its exact text).
 */
const ELIDED = [
  ["verdict_id", undefined],
  ["claim_id", "verdict_id"],
  ["dfid", "claim_id"],
  ["idempotency_key", "policy_kind"],
] as const;
type Elided = (typeof ELIDED)[number][0];

const derivedIds = (claimId: string, key: string): Record<Elided, () => string> => ({
  verdict_id: () => verdictIdFor(key),
  claim_id: () => claimId,
  idempotency_key: () => key,
  dfid: () => dfidOf(claimId),
});

/**
 * The record as stored: the ids the item holds anyway or follow from it (`claim_id`, the key in `pk`, a `dfid` that
 * is the claim's own, and a `verdict_id` that is the key's) left out of the text and filled in again on read — 241
 * bytes a verdict, which keep a settled ACCEPT with its sealed fields under one write unit (issue 37; until then they
 * were `""` in place, 61 bytes more, which still reads). A record whose ids would not come back in their places
 * (another shape than the kernel's) keeps them `""` in place. The text stays JSON, readable in the console and by
 * table scans (`scannedVerdictRecord`).
 */
function storedRecordText(v: Pick<StoredVerdict, "idempotency_key" | "claim_id" | "record">): string {
  const r = v.record as Record<string, unknown>;
  const ids = derivedIds(v.claim_id, v.idempotency_key);
  const elided = new Set(ELIDED.map(([name]) => name).filter((name) => r[name] === ids[name]()));
  const text = json(Object.fromEntries(Object.entries(r).filter(([k]) => !elided.has(k as Elided))));
  if (json(recordOfText(text, v.claim_id, v.idempotency_key)) === json(r)) return text;
  return json(Object.fromEntries(Object.entries(r).map(([k, x]) => [k, elided.has(k as Elided) ? "" : x])));
}

/** The record a stored text stands for (the inverse of {@link storedRecordText}; texts written with `""` read too). */
function recordOfText(text: string, claimId: string, key: string): VerdictRecord {
  const r = JSON.parse(text) as Record<string, unknown>;
  const ids = derivedIds(claimId, key);
  const out: Record<string, unknown> = {};
  const putBackAfter = (previous: string | undefined) => {
    for (const [name, after] of ELIDED)
      if (after === previous && !(name in r)) {
        out[name] = ids[name]();
        putBackAfter(name);
      }
  };
  putBackAfter(undefined);
  for (const [k, x] of Object.entries(r)) {
    out[k] = x === "" && k in ids ? ids[k as Elided]() : x;
    putBackAfter(k);
  }
  return out as VerdictRecord;
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
    // The body was compressed against the whole record's text, its personal fields sealed as one token beside it.
    const packed = await unpackText(item, "body", json(record));
    const sealed = item[SEALED_ATTRIBUTE];
    if (sealed !== undefined && !(sealed instanceof Uint8Array)) throw new Error(`${SEALED_ATTRIBUTE} is not binary`);
    const bodyText =
      packed === undefined
        ? undefined
        : await openFieldsAsOne(
            vault,
            packed,
            sealed === undefined ? undefined : tokenOfBytes(sealed),
            item.claim_id as string,
            sealingDictionary(record),
          );
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
  const { attributes } = await packedItem(v, vault);
  return attributes;
}

/** The item of `v`: its head, its sealed fields (when it has any) and its body packed against the rest. */
async function packedItem(v: StoredVerdict, vault: PersonalDataVault | undefined) {
  const head = itemHead(v);
  const { text, sealed } = await sealBody(vault, v);
  const sealedAttribute = sealed === undefined ? {} : { [SEALED_ATTRIBUTE]: sealed };
  const body = await packText("body", text, itemBytes({ ...head, ...sealedAttribute }), bodyPacking(v.record));
  return { head, sealed, body, attributes: { ...head, ...sealedAttribute, [body.attribute]: body.value } };
}

/**
 * The attribute that holds a sealed body's personal fields as one token (issue 37): the pd2 token's bytes, deflated
 * against dictionary v2 and the record (`_z2`: the dictionary a reader needs). Items written before hold a token per
 * field inside the body instead, which still reads.
 */
const SEALED_ATTRIBUTE = "pd_z2";
const tokenOfBytes = (bytes: Uint8Array) => `${SEALED_PREFIX_V2}${Buffer.from(bytes).toString("base64url")}`;

/**
 * What a verdict's sealed fields are deflated against: dictionary v2 and the record's text, which reads the same
 * sealed or not as it holds no personal field (a record that held one would read erased once erased: v2 alone).
 */
const sealingDictionary = (record: VerdictRecord): Buffer =>
  personalFields(record).length === 0
    ? Buffer.concat([COMPACT_DICTIONARIES.z2!, Buffer.from(json(record), "utf8")])
    : COMPACT_DICTIONARIES.z2!;

/**
 * The body's text, its personal fields `""` in place and sealed as one token under the verdict's claim, which the
 * item keeps beside it (`claim_id`): the token leaves it out, and moved to another claim's verdict (or another
 * record's) does not open. Unsealed (no vault, nothing personal): the text alone; an erased claim's: `[erased]`.
 */
async function sealBody(
  vault: PersonalDataVault | undefined,
  v: Pick<StoredVerdict, "claim_id" | "record" | "checks" | "events" | "review" | "audit">,
): Promise<{ text: string; sealed?: Uint8Array }> {
  const { text, sealed } = await sealFieldsAsOne(vault, json(bodyOf(v)), v.claim_id, sealingDictionary(v.record));
  if (sealed === undefined) return { text };
  if (!sealed.startsWith(SEALED_PREFIX_V2)) throw new Error("the vault sealed a verdict's fields in another form");
  return { text, sealed: new Uint8Array(Buffer.from(sealed.slice(SEALED_PREFIX_V2.length), "base64url")) };
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
      const { head, sealed, body } = await packedItem(next, vault);
      const stale = [
        ...packedNames("body").filter((n) => n !== body.attribute),
        ...BODY_FIELDS,
        ...(sealed === undefined ? [SEALED_ATTRIBUTE] : []),
      ];
      const setSealed = sealed === undefined ? "" : ", #sealed = :s";
      try {
        const out = await dynamoCall(`UpdateItem verdict ${key} execution`, () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.verdict(key),
              // A decision the kernel made again (lost reservation race) replaces the record: it was never published.
              UpdateExpression: `SET execution = :e, #body = :b, #record = :r, #layer = :l${setSealed} REMOVE ${stale.map((_, i) => `#r${i}`).join(", ")}`,
              ConditionExpression: "execution = :pending",
              ExpressionAttributeNames: {
                "#body": body.attribute,
                ...(sealed === undefined ? {} : { "#sealed": SEALED_ATTRIBUTE }),
                "#record": "record",
                "#layer": "layer",
                ...Object.fromEntries(stale.map((n, i) => [`#r${i}`, n])),
              },
              ExpressionAttributeValues: {
                ":e": outcome.execution,
                ":b": body.value,
                ":r": head.record,
                ":l": next.layer,
                ...(sealed === undefined ? {} : { ":s": sealed }),
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
