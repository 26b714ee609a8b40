// Test support: data keys made as kmsKeyStore made them before the branch keys (issue 37) — KMS GenerateDataKey per
// claim, the claim as encryption context, the KMS blob stored as `wrapped` without a `branch` — so tests can prove
// such items still open.
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import type { DataKeyStore } from "../vault/envelope.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { KMS_CONTEXT_PURPOSE } from "./kms-keys.ts";
import type { KmsDataKeys } from "./kms-keys.ts";
import { keys } from "./table.ts";

/** A store that makes each claim's key the old way (and keeps it in memory to seal); destroying is not its job. */
export function legacyKmsKeyStore(ctx: DynamoContext, kms: KmsDataKeys, keyId: string): DataKeyStore {
  const made = new Map<string, Buffer>();
  return {
    async key(subject) {
      const known = made.get(subject);
      if (known) return { state: "key", key: known };
      const out = await kms.generateDataKey({
        KeyId: keyId,
        KeySpec: "AES_256",
        EncryptionContext: { purpose: KMS_CONTEXT_PURPOSE, subject },
      });
      await ctx.client.send(
        new PutCommand({
          TableName: ctx.tableName,
          Item: { ...keys.dataKey(subject), entity: "data_key", wrapped: out.CiphertextBlob },
        }),
      );
      const key = Buffer.from(out.Plaintext!);
      made.set(subject, key);
      return { state: "key", key };
    },
    destroy: async () => {
      throw new Error("legacyKmsKeyStore only makes keys");
    },
  };
}
