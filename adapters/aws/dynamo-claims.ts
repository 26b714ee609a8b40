// ClaimRepository on DynamoDB: one item per claim (`CLAIM#<id>`/`META`), an idempotency item per key
// (`IDEM#<key>`/`IDEM`, with a TTL), and the gsi1 listing of every claim by receipt: open claims under
// `OPEN#<shard>`, final ones under `DONE#<shard>`, sort key `<received_at>#<claim_id>`. The keys never
// change while a claim is open, so an update rewrites the index entry in place (one index write) instead
// of moving it; the final update moves it once. `listClaims` merges the partitions it needs newest first,
// its cursor being the last sort key returned. Claims the first layout listed (`STATUS#<status>`, by
// updated_at) are still read, as open claims, until none is left.
import { createHash } from "node:crypto";
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import { canonicalize } from "../../core/crew/canonical.ts";
import { dfidOf } from "../../core/kernel/claim-record.ts";
import type { ClaimRecord, ClaimStatus } from "../../core/kernel/claim-record.ts";
import { erasedPaths, withPersonalErased } from "../../core/privacy/sealing.ts";
import type { ClaimPage, ClaimRepository, CreateClaimResult } from "../../pipeline/ports.ts";
import { claimListKey, checkClaimQuery, matchesClaimQuery } from "../../pipeline/ports.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { InvalidArgumentError, isConditionalCheckFailed, StoredItemError } from "./errors.ts";
import {
  epochSeconds,
  GSI1,
  gsi1,
  isExpired,
  keys,
  OPEN_CLAIM_SHARDS,
  stripUndefined,
  TABLE_ONLY_ATTRIBUTES,
  withoutTableAttributes,
} from "./table.ts";

// A claim AWAITING_RETURN is decided (docs/returns.md): listed with the final ones, out of the sweep's open pages.
const FINAL: readonly ClaimStatus[] = ["DECIDED", "NEEDS_REVIEW", "AWAITING_RETURN"];
const OPEN: readonly ClaimStatus[] = ["RECEIVED", "RUNNING"];

/** Options of the claim repository. */
type DynamoClaimOptions = {
  /** How long an Idempotency-Key is remembered (default 24 h). */
  readonly idempotencyTtlMs?: number;
};

/** The open-claims partition of a claim id. */
export function claimIndexShard(claimId: string): number {
  return createHash("sha256").update(claimId).digest()[0]! % OPEN_CLAIM_SHARDS;
}

/** gsi1 attributes a claim in this state carries: `OPEN#<shard>` while RECEIVED or RUNNING, `DONE#<shard>` once final. */
function claimIndexAttributes(record: Pick<ClaimRecord, "status" | "received_at" | "claim_id">): {
  gsi1pk: string;
  gsi1sk: string;
} {
  const shard = claimIndexShard(record.claim_id);
  return {
    gsi1pk: OPEN.includes(record.status) ? gsi1.open(shard) : gsi1.done(shard),
    gsi1sk: gsi1.openSort(record.received_at, record.claim_id),
  };
}

const shards = (partition: (shard: number) => string) =>
  Array.from({ length: OPEN_CLAIM_SHARDS }, (_, i) => partition(i));

/** Counts the open claims (RECEIVED, RUNNING) in the listing: the local stack's back-pressure reads it. */
export async function countOpenClaims(ctx: Pick<DynamoContext, "client" | "tableName">): Promise<number> {
  const counts = await Promise.all(
    [...shards(gsi1.open), ...OPEN.map((s) => gsi1.status(s))].map(async (partition) => {
      let count = 0;
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dynamoCall(`Query count of ${partition}`, () =>
          ctx.client.send(
            new QueryCommand({
              TableName: ctx.tableName,
              IndexName: GSI1,
              Select: "COUNT",
              KeyConditionExpression: "gsi1pk = :p",
              ExpressionAttributeValues: { ":p": partition },
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
          ),
        );
        count += page.Count ?? 0;
        start = page.LastEvaluatedKey as Record<string, unknown> | undefined;
      } while (start);
      return count;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * The claim item: the record's fields as top-level attributes. A served claim's `dfid` (`dfidOf(claim_id)`) and
 * `root_dfid` (the same) follow from its claim id: `toRecord` fills them in when an item has none, so a later release
 * may stop writing them (~95 bytes off every claim write and its gsi1 entry; issue 37). This one still writes them:
 * a handler of the release before, still running during the deploy, would read a claim without them as another
 * decision flow's (its kernel would refuse the claim's proposal). Readers first, writers a release later.
 *
 * A structured claim's `claim` is its `input.claim` (intake stores the submitted claim as both): it is left out when
 * it is the same, and `toRecord` reads it from `input` (issue 37: the claim's reason sealed twice kept every settled
 * claim write over a write unit). Only extraction sets `claim` later, on a free-text claim (no `input.claim`), and no
 * patch removes it.
 */
function claimItem(record: ClaimRecord): Record<string, unknown> {
  const { claim, ...rest } = stripUndefined(record);
  const submitted = "claim" in rest.input ? rest.input.claim : undefined;
  const same = claim !== undefined && submitted !== undefined && canonicalize(claim) === canonicalize(submitted);
  return {
    ...(same ? rest : stripUndefined(record)),
    ...keys.claim(record.claim_id),
    entity: "claim",
    ...claimIndexAttributes(record),
  };
}

function toRecord(item: Record<string, unknown> | undefined): ClaimRecord | undefined {
  if (!item) return undefined;
  const { claim_id, dfid, root_dfid, ...rest } = withoutTableAttributes(item);
  if (typeof claim_id !== "string" || typeof rest.status !== "string")
    throw new StoredItemError(`stored claim ${String(item.pk)} has no claim_id or status`);
  const ownDfid = dfid ?? dfidOf(claim_id);
  const input = rest.input as ClaimRecord["input"] | undefined;
  const claim = rest.claim ?? (input !== undefined && "claim" in input ? input.claim : undefined);
  return {
    claim_id,
    dfid: ownDfid,
    root_dfid: root_dfid ?? ownDfid,
    ...rest,
    ...(claim === undefined ? {} : { claim }),
  } as ClaimRecord;
}

/**
 * Whether a stored claim is this very submission (repaired by a racer from the idempotency item). When the stored one
 * reads erased — its claim erased between the two writes (issue 38) — the inputs are compared with the customer's
 * words blanked: the retry is still the same request, not a conflict; otherwise byte for byte.
 */
function sameSubmission(a: ClaimRecord, b: ClaimRecord): boolean {
  if (a.claim_id !== b.claim_id || a.received_at !== b.received_at) return false;
  if (canonicalize(a.input) === canonicalize(b.input)) return true;
  return (
    erasedPaths(a.input).length > 0 &&
    canonicalize(withPersonalErased(a.input)) === canonicalize(withPersonalErased(b.input))
  );
}

function checkRecord(record: ClaimRecord): void {
  if (typeof record?.claim_id !== "string" || record.claim_id === "")
    throw new InvalidArgumentError("createClaim: record.claim_id must be a non-empty string");
  if (typeof record.status !== "string" || typeof record.updated_at !== "string")
    throw new InvalidArgumentError(`createClaim ${record.claim_id}: record.status and record.updated_at are required`);
}

/** A ClaimRepository on the single table. */
export function createDynamoClaimRepository(ctx: DynamoContext, options: DynamoClaimOptions = {}): ClaimRepository {
  const ttlMs = options.idempotencyTtlMs ?? 24 * 3600_000;
  const { client, tableName } = ctx;

  const getClaim = async (claimId: string): Promise<ClaimRecord | undefined> => {
    const out = await dynamoCall(`GetItem claim ${claimId}`, () =>
      client.send(new GetCommand({ TableName: tableName, Key: keys.claim(claimId), ConsistentRead: true })),
    );
    return toRecord(out.Item);
  };

  /** Puts the claim unless one with its id exists; returns the stored claim when it did. */
  const putClaimOnce = async (record: ClaimRecord): Promise<{ created: boolean; record: ClaimRecord }> => {
    try {
      await dynamoCall(`PutItem claim ${record.claim_id}`, () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: claimItem(record),
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        ),
      );
      return { created: true, record: stripUndefined(record) };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const existing = await getClaim(record.claim_id);
      if (!existing)
        throw new StoredItemError(`claim ${record.claim_id} exists by condition but cannot be read`, { cause: error });
      return { created: false, record: existing };
    }
  };

  return {
    async createClaim(record, idempotency): Promise<CreateClaimResult> {
      checkRecord(record);
      if (!idempotency) {
        const put = await putClaimOnce(record);
        return put.created
          ? { created: true, record: put.record }
          : { created: false, record: put.record, sameRequest: false };
      }
      const now = ctx.clock.now();
      const idemKey = keys.idempotency(idempotency.key);
      // 1. Claim the key; the item carries the whole first record so that a crash before step 2 is repaired.
      try {
        await dynamoCall(`PutItem idempotency key ${idempotency.key}`, () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: {
                ...idemKey,
                entity: "idempotency",
                claim_id: record.claim_id,
                request_hash: idempotency.requestHash,
                record: stripUndefined(record),
                expires_at: epochSeconds(now + ttlMs),
              },
              ConditionExpression: "attribute_not_exists(pk) OR expires_at <= :now",
              ExpressionAttributeValues: { ":now": epochSeconds(now) },
            }),
          ),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const out = await dynamoCall(`GetItem idempotency key ${idempotency.key}`, () =>
          client.send(new GetCommand({ TableName: tableName, Key: idemKey, ConsistentRead: true })),
        );
        const seen = out.Item;
        if (!seen || isExpired(seen, now) || typeof seen.claim_id !== "string")
          throw new StoredItemError(`idempotency key ${idempotency.key} is taken but its item cannot be read`, {
            cause: error,
          });
        const sameRequest = seen.request_hash === idempotency.requestHash;
        // The first request may have crashed between its two writes: finish it with its own record.
        const first = (await getClaim(seen.claim_id)) ?? (await putClaimOnce(seen.record as ClaimRecord)).record;
        return { created: false, record: first, sameRequest };
      }
      // 2. The claim itself.
      const put = await putClaimOnce(record);
      // Created by us, or by a racer that repaired this very request from the idempotency item.
      if (put.created || sameSubmission(put.record, record)) return { created: true, record: put.record };
      // An unrelated claim holds this id: release the key again, as if it had never been taken.
      await dynamoCall(`DeleteItem idempotency key ${idempotency.key}`, () =>
        client.send(
          new DeleteCommand({
            TableName: tableName,
            Key: idemKey,
            ConditionExpression: "claim_id = :id AND request_hash = :h",
            ExpressionAttributeValues: { ":id": record.claim_id, ":h": idempotency.requestHash },
          }),
        ),
      ).catch((error: unknown) => {
        if (!isConditionalCheckFailed(error)) throw error;
      });
      return { created: false, record: put.record, sameRequest: false };
    },

    getClaim,

    async updateClaim(claimId, patch, onlyFrom) {
      const entries = Object.entries(patch);
      for (const [name] of entries) {
        if (TABLE_ONLY_ATTRIBUTES.includes(name))
          throw new InvalidArgumentError(`updateClaim ${claimId}: "${name}" is a table attribute, not a claim field`);
      }
      if (entries.length === 0 || (onlyFrom && onlyFrom.length === 0)) {
        // Nothing to write: an empty patch "changes" an allowed claim, an empty onlyFrom allows none.
        const record = await getClaim(claimId);
        const allowed =
          record !== undefined && (onlyFrom ? onlyFrom.includes(record.status) : !FINAL.includes(record.status));
        return { record, changed: allowed };
      }
      const names: Record<string, string> = { "#status": "status" };
      const values: Record<string, unknown> = {};
      const sets: string[] = [];
      const removes: string[] = [];
      entries.forEach(([name, value], i) => {
        names[`#f${i}`] = name;
        if (value === undefined) removes.push(`#f${i}`);
        else {
          values[`:f${i}`] = stripUndefined(value);
          sets.push(`#f${i} = :f${i}`);
        }
      });
      // A final claim moves to the final listing; an open one keeps its entry where it is (a rare reopening is fixed below).
      if (patch.status !== undefined && FINAL.includes(patch.status)) {
        names["#gpk"] = "gsi1pk";
        values[":gpk"] = gsi1.done(claimIndexShard(claimId));
        sets.push("#gpk = :gpk");
      }
      const allowed = onlyFrom ?? OPEN;
      allowed.forEach((s, i) => (values[`:s${i}`] = s));
      const condition = `attribute_exists(pk) AND #status IN (${allowed.map((_, i) => `:s${i}`).join(", ")})`;
      const expression = [
        sets.length ? `SET ${sets.join(", ")}` : "",
        removes.length ? `REMOVE ${removes.join(", ")}` : "",
      ]
        .filter(Boolean)
        .join(" ");
      let item: Record<string, unknown>;
      try {
        const out = await dynamoCall(`UpdateItem claim ${claimId}`, () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.claim(claimId),
              UpdateExpression: expression,
              ConditionExpression: condition,
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: values,
              ReturnValues: "ALL_NEW",
            }),
          ),
        );
        item = out.Attributes as Record<string, unknown>;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        return { record: await getClaim(claimId), changed: false };
      }
      const record = toRecord(item)!;
      await syncIndex(item, record);
      return { record, changed: true };
    },

    async listClaims(query) {
      checkClaimQuery(query);
      const statuses = query.statuses ?? [...OPEN, ...FINAL];
      const open = statuses.some((st) => OPEN.includes(st)) && query.verdict === undefined;
      const final = statuses.some((st) => FINAL.includes(st));
      // Sort keys are `<received_at>#<claim_id>`: `since` is a lower bound, the cursor and `before` upper bounds (exclusive).
      const upper = [query.cursor, query.before].filter((u): u is string => u !== undefined).sort()[0];
      // Nothing lies between a lower bound above the upper one (and BETWEEN would refuse the bounds).
      if (query.since !== undefined && upper !== undefined && query.since >= upper) return { items: [] };
      const range =
        query.since !== undefined && upper !== undefined
          ? { expr: "gsi1sk BETWEEN :lo AND :hi", values: { ":lo": query.since, ":hi": upper } }
          : query.since !== undefined
            ? { expr: "gsi1sk >= :lo", values: { ":lo": query.since } }
            : upper !== undefined
              ? { expr: "gsi1sk < :hi", values: { ":hi": upper } }
              : undefined;
      const filter = {
        expr: [
          `#status IN (${statuses.map((_, i) => `:s${i}`).join(", ")})`,
          ...(query.verdict ? ["verdict = :v"] : []),
        ].join(" AND "),
        names: { "#status": "status" },
        values: {
          ...Object.fromEntries(statuses.map((st, i) => [`:s${i}`, st])),
          ...(query.verdict ? { ":v": query.verdict } : {}),
        },
      };
      const want = query.limit + 1;
      const keep = (item: Record<string, unknown>) => {
        const record = toRecord(item)!;
        // The index is eventually consistent on AWS: trust only what the item says.
        return matchesClaimQuery(record, query) ? record : undefined;
      };
      const partitionPage = async (partition: string): Promise<ClaimRecord[]> => {
        const found: ClaimRecord[] = [];
        let start: Record<string, unknown> | undefined;
        do {
          const input: QueryCommandInput = {
            TableName: tableName,
            IndexName: GSI1,
            ScanIndexForward: false,
            KeyConditionExpression: range ? `gsi1pk = :p AND ${range.expr}` : "gsi1pk = :p",
            FilterExpression: filter.expr,
            ExpressionAttributeNames: filter.names,
            ExpressionAttributeValues: { ":p": partition, ...range?.values, ...filter.values },
            Limit: ctx.pageSize ?? Math.max(want, 25),
            ...(start ? { ExclusiveStartKey: start } : {}),
          };
          const page = await dynamoCall(`Query claims in ${partition}`, () => client.send(new QueryCommand(input)));
          for (const item of (page.Items ?? []) as Record<string, unknown>[]) {
            const record = keep(item);
            if (record) found.push(record);
          }
          start = found.length >= want ? undefined : (page.LastEvaluatedKey as Record<string, unknown> | undefined);
        } while (start);
        return found;
      };
      // The first layout's partitions sort by updated_at: read them whole and filter here (they only shrink).
      const legacy = async (status: ClaimStatus) =>
        (
          await queryAll(ctx, `Query claims in ${gsi1.status(status)}`, {
            IndexName: GSI1,
            KeyConditionExpression: "gsi1pk = :p",
            ExpressionAttributeValues: { ":p": gsi1.status(status) },
          })
        )
          .map(keep)
          .filter((r): r is ClaimRecord => r !== undefined);
      const pages = await Promise.all([
        ...(open ? shards(gsi1.open).map(partitionPage) : []),
        ...(final ? shards(gsi1.done).map(partitionPage) : []),
        ...(open ? OPEN.filter((st) => statuses.includes(st)).map(legacy) : []),
      ]);
      const merged = [...new Map(pages.flat().map((r) => [r.claim_id, r])).values()].sort((a, b) =>
        claimListKey(a) < claimListKey(b) ? 1 : -1,
      );
      const items = merged.slice(0, query.limit);
      return {
        items,
        ...(merged.length > query.limit ? { nextCursor: claimListKey(items.at(-1)!) } : {}),
      } satisfies ClaimPage;
    },
  };

  /** Moves the listing entry of a claim a patch reopened, or one the first layout listed; an entry already in place is never rewritten. */
  async function syncIndex(item: Record<string, unknown>, record: ClaimRecord): Promise<void> {
    const want = claimIndexAttributes(record);
    if (item.gsi1pk === want.gsi1pk && item.gsi1sk === want.gsi1sk) return;
    try {
      await dynamoCall(`UpdateItem claim ${record.claim_id} index`, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.claim(record.claim_id),
            UpdateExpression: "SET gsi1pk = :gpk, gsi1sk = :gsk",
            ConditionExpression: "#status = :s AND updated_at = :u",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ":s": record.status,
              ":u": record.updated_at,
              ":gpk": want.gsi1pk,
              ":gsk": want.gsi1sk,
            },
          }),
        ),
      );
    } catch (error) {
      // A later update changed status or updated_at and keeps the index itself.
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}
