// SettlementRepository on DynamoDB: one item per claim (`CLAIM#<id>`/`SETTLEMENT`), the record as one JSON
// document plus `version`; every change is a put conditioned on the version it read. All settlements are listed
// through gsi1 (`SETTLEMENTS`, sort key `<requested_at>#<claim_id>`) for reconciliation.
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { SettlementRecordSchema } from "../../core/claims/settlement.ts";
import type { SettlementRecord } from "../../core/claims/settlement.ts";
import { VersionConflictError } from "../../core/errors.ts";
import type { SettlementRepository } from "../../pipeline/payments.ts";
import { dynamoCall, queryAll } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { InvalidArgumentError, isConditionalCheckFailed, StoredItemError } from "./errors.ts";
import { GSI1, gsi1, keys } from "./table.ts";

function toItem(record: SettlementRecord): Record<string, unknown> {
  return {
    ...keys.settlement(record.claim_id),
    entity: "settlement",
    gsi1pk: gsi1.settlements,
    gsi1sk: `${record.requested_at}#${record.claim_id}`,
    version: record.version,
    settlement: JSON.stringify(record),
  };
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
      const items = await queryAll(ctx, "Query settlements", {
        IndexName: GSI1,
        KeyConditionExpression: "gsi1pk = :p",
        ExpressionAttributeValues: { ":p": gsi1.settlements },
      });
      return items.map(toRecord);
    },
  };
}
