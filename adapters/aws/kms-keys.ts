// The data keys of personal data on AWS (issue 38): envelope encryption with KMS. A claim's AES-256 data key is made
// by KMS GenerateDataKey under the stage's key and kept only wrapped, in the table (`DATAKEY#<claim_id>`); opening a
// field asks KMS to Decrypt the wrapped key. Destroying replaces the item by a tombstone (`erased_at`, no key): the
// plaintext key never left memory, so the sealed text — in the audit and in every backup of the table — is gone.
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { VaultUnavailableError } from "../../pipeline/errors.ts";
import type { DestroyOutcome } from "../../pipeline/ports.ts";
import type { DataKeyState, DataKeyStore } from "../vault/envelope.ts";
import { dynamoCall } from "./dynamo-context.ts";
import type { DynamoContext } from "./dynamo-context.ts";
import { describeError, isConditionalCheckFailed } from "./errors.ts";
import { keys } from "./table.ts";

/**
 * The two KMS calls the vault makes, as `@aws-sdk/client-kms` answers them (`GenerateDataKeyCommand` with
 * `KeySpec: "AES_256"`, `DecryptCommand`); the composition root binds them to the SDK client.
 */
export interface KmsDataKeys {
  generateDataKey(input: {
    KeyId: string;
    KeySpec: "AES_256";
    EncryptionContext: Record<string, string>;
  }): Promise<{ Plaintext?: Uint8Array; CiphertextBlob?: Uint8Array }>;
  decrypt(input: {
    KeyId: string;
    CiphertextBlob: Uint8Array;
    EncryptionContext: Record<string, string>;
  }): Promise<{ Plaintext?: Uint8Array }>;
}

/** Data keys wrapped by the KMS key `keyId`, kept in the table; the subject is bound as the encryption context. */
export function kmsKeyStore(ctx: DynamoContext, kms: KmsDataKeys, keyId: string): DataKeyStore {
  const context = (subject: string) => ({ purpose: "claims-personal-data", subject });
  const kmsCall = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw new VaultUnavailableError(`KMS ${what} failed: ${describeError(error)}`, { cause: error });
    }
  };
  const read = async (subject: string): Promise<DataKeyState> => {
    const out = await dynamoCall(`GetItem data key ${subject}`, () =>
      ctx.client.send(new GetCommand({ TableName: ctx.tableName, Key: keys.dataKey(subject), ConsistentRead: true })),
    );
    const item = out.Item;
    if (!item) return { state: "none" };
    if (item.erased_at !== undefined || !(item.wrapped instanceof Uint8Array)) return { state: "erased" };
    const wrapped = item.wrapped;
    const plain = await kmsCall(`Decrypt of ${subject}'s data key`, () =>
      kms.decrypt({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: context(subject) }),
    );
    if (plain.Plaintext?.length !== 32) throw new VaultUnavailableError(`KMS gave no 256-bit key for ${subject}`);
    return { state: "key", key: Buffer.from(plain.Plaintext) };
  };
  return {
    async key(subject, { create }) {
      const found = await read(subject);
      if (found.state !== "none" || !create) return found;
      const made = await kmsCall(`GenerateDataKey for ${subject}`, () =>
        kms.generateDataKey({ KeyId: keyId, KeySpec: "AES_256", EncryptionContext: context(subject) }),
      );
      if (made.Plaintext?.length !== 32 || !made.CiphertextBlob)
        throw new VaultUnavailableError(`KMS GenerateDataKey gave no 256-bit key for ${subject}`);
      try {
        await dynamoCall(`PutItem data key ${subject}`, () =>
          ctx.client.send(
            new PutCommand({
              TableName: ctx.tableName,
              Item: { ...keys.dataKey(subject), entity: "data_key", wrapped: made.CiphertextBlob },
              ConditionExpression: "attribute_not_exists(pk)",
            }),
          ),
        );
      } catch (error) {
        // Another writer made it first, or an erasure left its tombstone: what is stored wins.
        if (isConditionalCheckFailed(error)) return read(subject);
        throw error;
      }
      return { state: "key", key: Buffer.from(made.Plaintext) };
    },
    async destroy(subject): Promise<DestroyOutcome> {
      // One put replaces the wrapped key by the tombstone: no writer can slip a new key in between.
      const out = await dynamoCall(`PutItem data key tombstone ${subject}`, () =>
        ctx.client.send(
          new PutCommand({
            TableName: ctx.tableName,
            Item: { ...keys.dataKey(subject), entity: "data_key", erased_at: new Date(ctx.clock.now()).toISOString() },
            ReturnValues: "ALL_OLD",
          }),
        ),
      );
      const old = out.Attributes;
      if (!old) return "unknown";
      return old.erased_at !== undefined ? "already_erased" : "destroyed";
    },
  };
}
