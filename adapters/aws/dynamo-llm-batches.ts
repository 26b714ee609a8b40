// The Batch API journal on DynamoDB (`LLMBATCH#<custom_id>` / `BATCH`): which OpenAI batch holds a model request,
// so a step tried again on another worker finds its batch instead of sending another (LLM_BATCH_MODE=batch,
// adapters/llm/batch.ts). An item is kept two days (the batch window is 24 h; TTL `expires_at`).
import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { BatchJournal } from "../../core/llm/port.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { isConditionalCheckFailed } from "./errors.ts";
import { epochSeconds, isExpired, keys } from "./table.ts";

/** How long a journal entry is kept after it is written: the 24 h window and a day more. */
const KEEP_MS = 2 * 86_400_000;

/** The Batch API journal on the single table. */
export function createDynamoBatchJournal(ctx: Pick<DynamoContext, "client" | "tableName" | "clock">): BatchJournal {
  const { client, tableName, clock } = ctx;
  return {
    async get(customId) {
      const out = await dynamoCall("read the batch of a model request", () =>
        client.send(new GetCommand({ TableName: tableName, Key: keys.llmBatch(customId), ConsistentRead: true })),
      );
      const item = out.Item;
      if (item === undefined || isExpired(item, clock.now())) return undefined;
      return typeof item.batch_id === "string" ? item.batch_id : undefined;
    },
    async put(customId, batchId) {
      await dynamoCall("record the batch of a model request", () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...keys.llmBatch(customId), batch_id: batchId, expires_at: epochSeconds(clock.now() + KEEP_MS) },
          }),
        ),
      );
    },
    async forget(customId, batchId) {
      try {
        await dynamoCall("forget the batch of a model request", () =>
          client.send(
            new DeleteCommand({
              TableName: tableName,
              Key: keys.llmBatch(customId),
              ConditionExpression: "batch_id = :b",
              ExpressionAttributeValues: { ":b": batchId },
            }),
          ),
        );
      } catch (error) {
        // Another batch was recorded since (a newer try): it stays.
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },
  };
}
