// ReviewRepository on DynamoDB: one item per claim (`CLAIM#<id>`/`REVIEW`), the review as one JSON document
// plus `version` and `status` attributes. Every change is a put conditioned on the version it read, so two
// reviewers racing on one review never both win. Reviews are listed by status through gsi1
// (`REVIEW#<status>`, sort key `<requested_at>#<claim_id>`, oldest first): a decided review moves out of
// the PENDING partition in the same write that decides it.
import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { ReviewRecordSchema } from "../../core/kernel/review.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import type { ReviewRepository } from "../../pipeline/ports.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { InvalidArgumentError, isConditionalCheckFailed, StoredItemError } from "./errors.ts";
import { GSI1, gsi1, keys } from "./table.ts";

function toItem(review: ReviewRecord): Record<string, unknown> {
  return {
    ...keys.review(review.claim_id),
    entity: "review",
    gsi1pk: gsi1.reviews(review.status),
    gsi1sk: gsi1.reviewSort(review.requested_at, review.claim_id),
    status: review.status,
    version: review.version,
    review: JSON.stringify(review),
  };
}

function toReview(item: Record<string, unknown>): ReviewRecord {
  const parsed = ReviewRecordSchema.safeParse(typeof item.review === "string" ? JSON.parse(item.review) : undefined);
  if (!parsed.success)
    throw new StoredItemError(
      `stored review ${String(item.pk)} cannot be read: ${parsed.error.issues[0]?.message ?? "invalid"}`,
    );
  return parsed.data;
}

/** A ReviewRepository on the single table. */
export function createDynamoReviewRepository(ctx: DynamoContext): ReviewRepository {
  const { client, tableName } = ctx;

  const getReview = async (claimId: string): Promise<ReviewRecord | undefined> => {
    const out = await dynamoCall(`GetItem review ${claimId}`, () =>
      client.send(new GetCommand({ TableName: tableName, Key: keys.review(claimId), ConsistentRead: true })),
    );
    return out.Item ? toReview(out.Item) : undefined;
  };

  const put = (
    review: ReviewRecord,
    condition: { ConditionExpression: string; ExpressionAttributeValues?: Record<string, unknown> },
  ) =>
    dynamoCall(`PutItem review ${review.claim_id}`, () =>
      client.send(new PutCommand({ TableName: tableName, Item: toItem(review), ...condition })),
    );

  return {
    getReview,

    async openReview(review) {
      const parsed = ReviewRecordSchema.safeParse(review);
      if (!parsed.success)
        throw new InvalidArgumentError(`openReview: the review is invalid: ${parsed.error.issues[0]?.message ?? ""}`);
      try {
        await put(parsed.data, { ConditionExpression: "attribute_not_exists(pk)" });
        return parsed.data;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const stored = await getReview(review.claim_id);
        if (!stored)
          throw new StoredItemError(`review of ${review.claim_id} exists by condition but cannot be read`, {
            cause: error,
          });
        return stored;
      }
    },

    async updateReview(next) {
      const parsed = ReviewRecordSchema.safeParse(next);
      if (!parsed.success)
        throw new InvalidArgumentError(`updateReview: the review is invalid: ${parsed.error.issues[0]?.message ?? ""}`);
      try {
        await put(parsed.data, {
          ConditionExpression: "version = :v",
          ExpressionAttributeValues: { ":v": next.version - 1 },
        });
        return { changed: true, review: parsed.data };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        return { changed: false, review: await getReview(next.claim_id) };
      }
    },

    async listReviews({ status, limit, cursor }) {
      if (!Number.isInteger(limit) || limit < 1)
        throw new InvalidArgumentError(`listReviews: limit must be a positive integer, got ${String(limit)}`);
      const out = await dynamoCall(`Query reviews ${status}`, () =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: GSI1,
            KeyConditionExpression: cursor ? "gsi1pk = :p AND gsi1sk > :c" : "gsi1pk = :p",
            ExpressionAttributeValues: { ":p": gsi1.reviews(status), ...(cursor ? { ":c": cursor } : {}) },
            Limit: limit + 1,
            ScanIndexForward: true,
          }),
        ),
      );
      const items = (out.Items ?? []).map(toReview).filter((r) => r.status === status);
      const page = items.slice(0, limit);
      return {
        items: page,
        ...(items.length > limit
          ? { nextCursor: gsi1.reviewSort(page.at(-1)!.requested_at, page.at(-1)!.claim_id) }
          : {}),
      };
    },
  };
}
