// The retention sweep's watermark on DynamoDB (`RETENTION#customer_text` / `WATERMARK`, pipeline/retention.ts): the
// instant before which every claim received had its personal data erased. A conditional write keeps it moving forward
// only, so two overlapping sweeps never move it back. It holds no personal field.
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { RetentionWatermark } from "../../pipeline/ports.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { isConditionalCheckFailed } from "./errors.ts";
import { keys } from "./table.ts";

/** The retention watermark on the single table. */
export function createDynamoRetentionWatermark(ctx: Pick<DynamoContext, "client" | "tableName">): RetentionWatermark {
  const { client, tableName } = ctx;
  return {
    async erasedBefore() {
      const out = await dynamoCall("read the retention watermark", () =>
        client.send(new GetCommand({ TableName: tableName, Key: keys.retentionWatermark(), ConsistentRead: true })),
      );
      const at = out.Item?.erased_before;
      return typeof at === "string" ? at : undefined;
    },
    async advance(instant) {
      try {
        await dynamoCall("advance the retention watermark", () =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: { ...keys.retentionWatermark(), erased_before: instant },
              ConditionExpression: "attribute_not_exists(erased_before) OR erased_before < :at",
              ExpressionAttributeValues: { ":at": instant },
            }),
          ),
        );
      } catch (error) {
        // A later watermark was recorded since (an overlapping run): it stays.
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },
  };
}
