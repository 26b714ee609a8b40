// What the deployed sweep needs to apply the retention policy (pipeline/retention.ts, docs/customer-data.md#retention):
// the policy's `retention.customer_text_days` (the deployed policy JSON), the function's vault (its destroy is the one
// `claims erase` uses) and the watermark item of the table, read through a client that does not seal (the item holds
// no personal field).
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createDynamoRetentionWatermark } from "../../adapters/aws/dynamo-retention.ts";
import type { PersonalDataVault, RetentionWatermark } from "../../pipeline/ports.ts";
import { productionVault } from "./compose.ts";
import { once } from "./lazy.ts";
import { loadPolicyFile, policyPathFrom } from "./policy.ts";
import { linkedResources } from "./resources.ts";

/** The retention policy of a sweep: its days, the vault whose keys it destroys (undefined: none linked), the watermark. */
export interface SweepRetention {
  readonly days: number;
  readonly vault: PersonalDataVault | undefined;
  readonly watermark: RetentionWatermark;
}

/** The deployed sweep's retention, read once per cold start; undefined when the policy keeps the customers' words. */
export const productionRetention: () => SweepRetention | undefined = once(() => {
  const days = loadPolicyFile(policyPathFrom(process.env)).retention?.customerTextDays;
  if (days === undefined) return undefined;
  return {
    days,
    vault: productionVault(),
    watermark: createDynamoRetentionWatermark({
      client: DynamoDBDocumentClient.from(new DynamoDBClient({})),
      tableName: linkedResources().tableName(),
    }),
  };
});
