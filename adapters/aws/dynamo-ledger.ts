// RefundLedger on DynamoDB: one item per order (`ORDER#<id>`/`LEDGER`) holding `refunded_cents` and a
// `claims` map. A reservation is ONE conditional UpdateItem:
//   ADD refunded_cents :c SET claims.#cid = :c
//   IF attribute_not_exists(claims.#cid) AND (attribute_not_exists(refunded_cents) OR refunded_cents <= :max)
// with :max = orderCents − cents. A nested SET needs the `claims` map to exist, so the first reservation
// on an order creates the empty entry (a put that only succeeds when absent) and tries again.
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { LedgerInvariantError } from "../../core/integrity/errors.ts";
import { assertLedgerEntry, emptyLedgerEntry, reserveRefund } from "../../core/integrity/ledger.ts";
import type { LedgerEntry } from "../../core/integrity/ledger.ts";
import type { RefundLedger } from "../../pipeline/ports.ts";
import type { ReserveResult } from "../../core/integrity/ledger.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { errorName, isConditionalCheckFailed, StoredItemError } from "./errors.ts";
import { keys } from "./table.ts";

function toEntry(orderId: string, item: Record<string, unknown>): LedgerEntry {
  const entry = { order_id: orderId, refunded_cents: item.refunded_cents ?? 0, claims: item.claims ?? {} } as LedgerEntry;
  try {
    assertLedgerEntry(entry);
  } catch (error) {
    throw new StoredItemError(`stored ledger entry of order ${orderId} is invalid: ${(error as Error).message}`, { cause: error });
  }
  return entry;
}

/** True for the ValidationException DynamoDB answers when `claims.#cid` is set on an item without `claims`. */
function isMissingDocumentPath(error: unknown): boolean {
  return errorName(error) === "ValidationException" && /document path/i.test((error as Error).message);
}

/** A RefundLedger on the single table. */
export function createDynamoRefundLedger(ctx: DynamoContext): RefundLedger {
  const { client, tableName } = ctx;

  const read = async (orderId: string): Promise<LedgerEntry | undefined> => {
    const out = await dynamoCall(`GetItem ledger ${orderId}`, () => client.send(new GetCommand({ TableName: tableName, Key: keys.ledger(orderId), ConsistentRead: true })));
    return out.Item ? toEntry(orderId, out.Item) : undefined;
  };

  const update = (orderId: string, claimId: string, cents: number, orderCents: number) =>
    dynamoCall(`UpdateItem ledger ${orderId} for ${claimId}`, () =>
      client.send(new UpdateCommand({
        TableName: tableName,
        Key: keys.ledger(orderId),
        UpdateExpression: "ADD refunded_cents :c SET claims.#cid = :c",
        ConditionExpression: "attribute_not_exists(claims.#cid) AND (attribute_not_exists(refunded_cents) OR refunded_cents <= :max)",
        ExpressionAttributeNames: { "#cid": claimId },
        ExpressionAttributeValues: { ":c": cents, ":max": orderCents - cents },
        ReturnValues: "ALL_NEW",
      })),
    );

  const createEmpty = async (orderId: string) => {
    try {
      await dynamoCall(`PutItem ledger ${orderId}`, () =>
        client.send(new PutCommand({
          TableName: tableName,
          Item: { ...keys.ledger(orderId), entity: "ledger", order_id: orderId, refunded_cents: 0, claims: {} },
          ConditionExpression: "attribute_not_exists(pk)",
        })),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error; // another reservation created it first
    }
  };

  /** The refusal for the entry as it stands now (refusals are permanent: claims are only added, totals only grow). */
  const refusal = async (orderId: string, claimId: string, cents: number, orderCents: number, cause?: unknown): Promise<ReserveResult> => {
    const entry = (await read(orderId)) ?? emptyLedgerEntry(orderId);
    const result = reserveRefund(entry, claimId, cents, orderCents);
    if (result.ok) throw new LedgerInvariantError(`ledger ${orderId}: the reservation for ${claimId} was refused by the condition but the stored entry allows it`, { cause });
    return result;
  };

  return {
    async get(orderId) {
      const entry = await read(orderId);
      // An entry created for a reservation that never landed (crash) holds nothing: same as no entry.
      return entry && Object.keys(entry.claims).length > 0 ? entry : undefined;
    },

    async reserve(orderId, claimId, cents, orderCents) {
      // The pure rule validates the arguments exactly like the in-memory ledger (throws LedgerInvariantError).
      const precheck = reserveRefund(emptyLedgerEntry(orderId), claimId, cents, orderCents);
      if (typeof orderId !== "string" || orderId === "") throw new LedgerInvariantError("reserve: orderId must be a non-empty string");
      // More than the whole order: no write can succeed (and on an absent item the condition would not see it).
      if (!precheck.ok) return refusal(orderId, claimId, cents, orderCents);
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          const out = await update(orderId, claimId, cents, orderCents);
          return { ok: true, entry: toEntry(orderId, out.Attributes as Record<string, unknown>) };
        } catch (error) {
          if (isConditionalCheckFailed(error)) return refusal(orderId, claimId, cents, orderCents, error);
          const cause = (error as { cause?: unknown }).cause;
          if (attempt > 0 || !isMissingDocumentPath(cause)) throw error;
          await createEmpty(orderId);
        }
      }
      throw new LedgerInvariantError(`ledger ${orderId}: the entry could not be created for ${claimId}`);
    },
  };
}
