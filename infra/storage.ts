// The single DynamoDB table (single-table design, access patterns documented in adapters/aws/).
import { settings } from "./settings.ts";

/** Claims, session snapshots, audit, orders, ledger and verdicts; gsi1 serves audit by simulation and claims by status. */
export const table = new sst.aws.Dynamo("Table", {
  fields: { pk: "string", sk: "string", gsi1pk: "string", gsi1sk: "string" },
  primaryIndex: { hashKey: "pk", rangeKey: "sk" },
  globalIndexes: { gsi1: { hashKey: "gsi1pk", rangeKey: "gsi1sk" } },
  // Epoch seconds; DynamoDB deletes expired items within days, so readers still filter on it (as the local stack does).
  ttl: "expires_at",
  deletionProtection: settings.isProduction,
  transform: {
    // Both are SST's Dynamo defaults today; stated so a change of default cannot drop backups or pin capacity.
    table: { billingMode: "PAY_PER_REQUEST", pointInTimeRecovery: { enabled: true } },
  },
});
