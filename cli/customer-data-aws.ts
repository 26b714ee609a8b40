// A customer's rights over a deployed stage (issue 38, docs/customer-data.md): `claims erase --table` and `claims
// export --table` against the stage's table (its `table` output) with the operator's AWS credentials. The claims are
// found through their audit — the decision path, in clear — read with every personal field as `[erased]`: erasing
// needs only the table (each claim's wrapped data key is replaced by a tombstone there), never a KMS call, and the
// operator running it never sees a customer's words. Export opens the customer's claims with the stage's KMS key.
import { KMSClient } from "@aws-sdk/client-kms";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createDynamoPorts } from "../adapters/aws/index.ts";
import { destroyDataKey, kmsDataKeys, kmsKeyStore } from "../adapters/aws/kms-keys.ts";
import { envelopeVault } from "../adapters/vault/envelope.ts";
import { sealTableClient } from "../adapters/vault/sealed-table.ts";
import { returnDfid } from "../core/kernel/claim-record.ts";
import { belongsTo, claimOwners } from "../core/history/customer-claims.ts";
import { ERASED } from "../core/privacy/sealing.ts";
import type { PersonalDataVault } from "../pipeline/ports.ts";
import type { CustomerExport, ErasureTarget } from "./customer-data.ts";
import { exportedClaim } from "./customer-data.ts";
import { eraseInStore } from "./customer-data-served.ts";
import type { ServedErasure } from "./customer-data-served.ts";
import { servedClaimsAudit } from "./served-store.ts";
import { tableClient } from "./table-client.ts";

/** A deployed table: its name, and the region or endpoint to reach it (default: the AWS configuration's). */
export interface DeployedTable {
  readonly table: string;
  readonly region?: string | undefined;
  readonly endpoint?: string | undefined;
}

/** What `claims export --table` names its claims' source (`simulation_id` of each exported claim). */
export const DEPLOYED = "deployed";

/** Reads every sealed field as erased and seals nothing but `[erased]`: finding claims never opens a customer's words. */
const BLIND: PersonalDataVault = {
  seal: async () => ERASED,
  open: async () => undefined,
  destroy: async () => {
    throw new Error("the blind vault destroys nothing: erasure goes through destroyDataKey");
  },
};

const clock = { now: () => Date.now() };

async function withTable<T>(
  t: DeployedTable,
  vault: PersonalDataVault,
  use: (ctx: {
    ports: ReturnType<typeof createDynamoPorts>;
    raw: DynamoDBDocumentClient;
    dynamo: DynamoDBClient;
  }) => Promise<T>,
): Promise<T> {
  const dynamo = tableClient(t);
  const raw = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  // A document client of its own for the sealing one: document clients share their DynamoDB client's middleware.
  const sealedDynamo = tableClient(t);
  const sealed = sealTableClient(
    DynamoDBDocumentClient.from(sealedDynamo, { marshallOptions: { removeUndefinedValues: true } }),
    vault,
  );
  try {
    return await use({ ports: createDynamoPorts({ client: sealed, tableName: t.table, clock }), raw, dynamo });
  } finally {
    dynamo.destroy();
    sealedDynamo.destroy();
  }
}

/** Erases the target's claims in a deployed table: each claim's wrapped data key becomes a tombstone; audited. */
export function eraseInTable(t: DeployedTable, target: ErasureTarget, now: Date): Promise<ServedErasure> {
  return withTable(t, BLIND, ({ ports, raw }) => {
    const ctx = { client: raw, tableName: t.table, clock: { now: () => now.getTime() }, pageSize: undefined };
    return eraseInStore({ ports, source: `table ${t.table}` }, (claimId) => destroyDataKey(ctx, claimId), target, now);
  });
}

/**
 * Everything a deployed table holds about `customerId`, opened with the stage's KMS key `kmsKeyId` (its alias, output
 * `personalDataKey`; `[erased]` where erased). Bus events are not kept by the stage (the bus's consumers hold them).
 */
export async function exportFromTable(
  t: DeployedTable,
  kmsKeyId: string,
  customerId: string,
): Promise<CustomerExport["claims"]> {
  // First the customer's claims, read blind; then only their audit, opened.
  const owners = await withTable(t, BLIND, async ({ ports }) =>
    claimOwners(await servedClaimsAudit({ ports }, { all: true })).filter((o) => belongsTo(o, customerId)),
  );
  if (owners.length === 0) return [];
  const kms = new KMSClient(t.region ? { region: t.region } : {});
  try {
    const keysDynamo = tableClient(t);
    const keys = kmsKeyStore(
      { client: DynamoDBDocumentClient.from(keysDynamo), tableName: t.table, clock, pageSize: undefined },
      kmsDataKeys(kms),
      kmsKeyId,
    );
    try {
      return await withTable(t, envelopeVault(keys), async ({ ports }) => {
        const claims: CustomerExport["claims"] = [];
        for (const o of owners) {
          const record = await ports.claims.getClaim(o.claimId);
          if (record === undefined) continue;
          const own = await ports.audit.byDfid(record.dfid);
          const returned = record.return ? await ports.audit.byDfid(returnDfid(o.claimId)) : [];
          claims.push(exportedClaim(o, DEPLOYED, [...own, ...returned], []));
        }
        return claims;
      });
    } finally {
      keysDynamo.destroy();
    }
  } finally {
    kms.destroy();
  }
}
