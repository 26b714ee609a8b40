// VerdictRepository on DynamoDB: one item per proposal idempotency key (`VERDICT#<key>`/`VERDICT`).
// putVerdictOnce is a put with `attribute_not_exists(pk)`; recordExecution an update conditioned on
// `execution = PENDING` (first writer wins); the documents are stored as JSON text so they round-trip exactly.
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { StoredVerdict, VerdictRepository } from "../../core/ports/claims.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { InvalidArgumentError, isConditionalCheckFailed, StoredItemError, VerdictNotFoundError } from "./errors.ts";
import { keys } from "./table.ts";

const json = (value: unknown) => JSON.stringify(value);

function verdictItem(v: StoredVerdict): Record<string, unknown> {
  return {
    ...keys.verdict(v.idempotency_key),
    entity: "verdict",
    idempotency_key: v.idempotency_key,
    claim_id: v.claim_id,
    record: json(v.record),
    layer: v.layer,
    checks: json(v.checks),
    execution: v.execution,
    ...(v.review === undefined ? {} : { review: json(v.review) }),
    events: json(v.events),
    ...(v.audit === undefined ? {} : { audit: json(v.audit) }),
    published: v.published,
  };
}

function toVerdict(item: Record<string, unknown>): StoredVerdict {
  try {
    return {
      idempotency_key: item.idempotency_key as string,
      claim_id: item.claim_id as string,
      record: JSON.parse(item.record as string),
      layer: item.layer as number,
      checks: JSON.parse(item.checks as string),
      execution: item.execution as StoredVerdict["execution"],
      ...(typeof item.review === "string" ? { review: JSON.parse(item.review) } : {}),
      events: JSON.parse(item.events as string),
      ...(typeof item.audit === "string" ? { audit: JSON.parse(item.audit) } : {}),
      published: item.published === true,
    };
  } catch (error) {
    throw new StoredItemError(`stored verdict ${String(item.pk)} cannot be read: ${(error as Error).message}`, { cause: error });
  }
}

/** A VerdictRepository on the single table. */
export function createDynamoVerdictRepository(ctx: DynamoContext): VerdictRepository {
  const { client, tableName } = ctx;
  const getVerdict = async (key: string): Promise<StoredVerdict | undefined> => {
    const out = await dynamoCall(`GetItem verdict ${key}`, () => client.send(new GetCommand({ TableName: tableName, Key: keys.verdict(key), ConsistentRead: true })));
    return out.Item ? toVerdict(out.Item) : undefined;
  };
  return {
    getVerdict,

    async putVerdictOnce(verdict) {
      if (typeof verdict?.idempotency_key !== "string" || verdict.idempotency_key === "") throw new InvalidArgumentError("putVerdictOnce: idempotency_key must be a non-empty string");
      const item = verdictItem(verdict);
      try {
        await dynamoCall(`PutItem verdict ${verdict.idempotency_key}`, () =>
          client.send(new PutCommand({ TableName: tableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" })),
        );
        return toVerdict(item);
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const stored = await getVerdict(verdict.idempotency_key);
        if (!stored) throw new StoredItemError(`verdict ${verdict.idempotency_key} exists by condition but cannot be read`, { cause: error });
        return stored;
      }
    },

    async recordExecution(key, outcome) {
      try {
        const out = await dynamoCall(`UpdateItem verdict ${key} execution`, () =>
          client.send(new UpdateCommand({
            TableName: tableName,
            Key: keys.verdict(key),
            UpdateExpression: `SET execution = :e, events = :ev${outcome.review === undefined ? "" : ", review = :r"}${outcome.audit === undefined ? "" : ", audit = :a"}`,
            ConditionExpression: "execution = :pending",
            ExpressionAttributeValues: {
              ":e": outcome.execution,
              ":ev": json(outcome.events),
              ":pending": "PENDING",
              ...(outcome.review === undefined ? {} : { ":r": json(outcome.review) }),
              ...(outcome.audit === undefined ? {} : { ":a": json(outcome.audit) }),
            },
            ReturnValues: "ALL_NEW",
          })),
        );
        return toVerdict(out.Attributes as Record<string, unknown>);
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
          client.send(new UpdateCommand({
            TableName: tableName,
            Key: keys.verdict(key),
            UpdateExpression: "SET published = :t",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeValues: { ":t": true },
          })),
        );
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },
  };
}
