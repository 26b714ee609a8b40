// SettlementRepository on DynamoDB: one item per claim (`CLAIM#<id>`/`SETTLEMENT`), the record as one JSON
// document plus `version`; every change is a put conditioned on the version it read. In gsi1 a settlement whose
// failed refund awaits a person sits in `REFUND_REVIEW#PENDING` (sort key `<review.requested_at>#<claim_id>`, the
// reviews' listing key), every other one in `SETTLEMENTS` (sort key `<requested_at>#<claim_id>`): the put that
// opens or decides the review moves the item, so the pending reviews are one Query of their own partition that
// reads nothing else; a decided review whose effects are not yet marked performed sits in
// `REFUND_REVIEW#UNPERFORMED` until the put that marks it (the sweep reads only that partition); any other refund not
// settled yet sits in `SETTLEMENTS#UNSETTLED` (the refund-due alarm reads it with the two review partitions), and
// reconciliation lists all four.
import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { SettlementRecordSchema } from "../../core/kernel/settlement.ts";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import { VersionConflictError } from "../../core/errors.ts";
import { byRequest, hasUnperformedReview, isUnsettled } from "../../pipeline/ports.ts";
import type { SettlementRepository } from "../../pipeline/ports.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { InvalidArgumentError, isConditionalCheckFailed, StoredItemError } from "./errors.ts";
import { GSI1, gsi1, keys } from "./table.ts";

function toItem(record: SettlementRecord): Record<string, unknown> {
  return {
    ...keys.settlement(record.claim_id),
    entity: "settlement",
    ...gsi1Of(record),
    version: record.version,
    settlement: JSON.stringify(record),
  };
}

/** The settlement's place in gsi1: the pending refund reviews' partition while its review is PENDING. */
function gsi1Of(record: SettlementRecord): { gsi1pk: string; gsi1sk: string } {
  if (record.review?.status === "PENDING")
    return { gsi1pk: gsi1.refundReviewsPending, gsi1sk: gsi1.reviewSort(record.review.requested_at, record.claim_id) };
  const partition = hasUnperformedReview(record)
    ? gsi1.refundReviewsUnperformed
    : isUnsettled(record)
      ? gsi1.settlementsUnsettled
      : gsi1.settlements;
  return { gsi1pk: partition, gsi1sk: gsi1.settlementSort(record.requested_at, record.claim_id) };
}

function toRecord(item: Record<string, unknown>): SettlementRecord {
  const parsed = SettlementRecordSchema.safeParse(
    typeof item.settlement === "string" ? JSON.parse(item.settlement) : undefined,
  );
  if (!parsed.success)
    throw new StoredItemError(
      `stored settlement ${String(item.pk)} cannot be read: ${parsed.error.issues[0]?.message ?? "invalid"}`,
    );
  return parsed.data;
}

function valid(record: SettlementRecord, what: string): SettlementRecord {
  const parsed = SettlementRecordSchema.safeParse(record);
  if (!parsed.success)
    throw new InvalidArgumentError(`${what}: the settlement is invalid: ${parsed.error.issues[0]?.message ?? ""}`);
  return parsed.data;
}

/** A SettlementRepository on the single table. */
export function createDynamoSettlementRepository(ctx: DynamoContext): SettlementRepository {
  const { client, tableName } = ctx;
  const get = async (claimId: string) => {
    const out = await dynamoCall(`GetItem settlement ${claimId}`, () =>
      client.send(new GetCommand({ TableName: tableName, Key: keys.settlement(claimId), ConsistentRead: true })),
    );
    return out.Item ? toRecord(out.Item) : undefined;
  };
  return {
    get,
    async create(record) {
      const item = valid(record, "create");
      try {
        await dynamoCall(`PutItem settlement ${record.claim_id}`, () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: toItem(item),
              ConditionExpression: "attribute_not_exists(pk)",
            }),
          ),
        );
        return item;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const stored = await get(record.claim_id);
        if (!stored) throw new StoredItemError(`settlement of ${record.claim_id} exists but cannot be read`);
        return stored;
      }
    },
    async update(next) {
      const item = valid(next, "update");
      try {
        await dynamoCall(`PutItem settlement ${next.claim_id}`, () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: toItem(item),
              ConditionExpression: "version = :v",
              ExpressionAttributeValues: { ":v": next.version - 1 },
            }),
          ),
        );
      } catch (error) {
        if (isConditionalCheckFailed(error))
          throw new VersionConflictError("settlement", next.claim_id, next.version - 1, { cause: error });
        throw error;
      }
    },
    async list() {
      const partitions = await Promise.all(
        [gsi1.settlements, gsi1.settlementsUnsettled, gsi1.refundReviewsPending, gsi1.refundReviewsUnperformed].map(
          (partition) =>
            queryAll(ctx, `Query settlements ${partition}`, {
              IndexName: GSI1,
              KeyConditionExpression: "gsi1pk = :p",
              ExpressionAttributeValues: { ":p": partition },
            }),
        ),
      );
      return partitions.flat().map(toRecord).sort(byRequest);
    },
    async listUnsettled() {
      const partitions = await Promise.all(
        [gsi1.settlementsUnsettled, gsi1.refundReviewsPending, gsi1.refundReviewsUnperformed].map((partition) =>
          queryAll(ctx, `Query unsettled ${partition}`, {
            IndexName: GSI1,
            KeyConditionExpression: "gsi1pk = :p",
            ExpressionAttributeValues: { ":p": partition },
          }),
        ),
      );
      return partitions.flat().map(toRecord).filter(isUnsettled).sort(byRequest);
    },
    async listUnperformedReviews() {
      const items = await queryAll(ctx, "Query unperformed refund reviews", {
        IndexName: GSI1,
        KeyConditionExpression: "gsi1pk = :p",
        ExpressionAttributeValues: { ":p": gsi1.refundReviewsUnperformed },
      });
      // Each index item is a whole copy, so its record agrees with its partition; one that does not is not listed.
      return items.map(toRecord).filter(hasUnperformedReview);
    },
    async listPendingReviews({ limit, cursor }) {
      if (!Number.isInteger(limit) || limit < 1)
        throw new InvalidArgumentError(`listPendingReviews: limit must be a positive integer, got ${String(limit)}`);
      const out = await dynamoCall("Query pending refund reviews", () =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: GSI1,
            KeyConditionExpression: cursor ? "gsi1pk = :p AND gsi1sk > :c" : "gsi1pk = :p",
            ExpressionAttributeValues: { ":p": gsi1.refundReviewsPending, ...(cursor ? { ":c": cursor } : {}) },
            Limit: limit + 1,
            ScanIndexForward: true,
          }),
        ),
      );
      const raw = out.Items ?? [];
      const page = raw.slice(0, limit);
      // Each index item is a whole copy, so its record agrees with its partition; a record that does not is not listed.
      const items = page.map(toRecord).filter((r) => r.review?.status === "PENDING");
      return { items, ...(raw.length > limit ? { nextCursor: String(page.at(-1)!.gsi1sk) } : {}) };
    },
  };
}
