// The data keys of personal data on AWS (issue 38): envelope encryption with KMS. A claim's AES-256 data key is made
// by KMS GenerateDataKey under the stage's key and kept only wrapped, in the table (`DATAKEY#<claim_id>`); opening a
// field asks KMS to Decrypt the wrapped key. Destroying replaces the item by a tombstone (`erased_at`, no key): the
// plaintext key never left memory, so the sealed text — in the audit and in every backup of the table — is gone.
// A process keeps a key KMS unwrapped for it by its wrapped bytes, and reads the item on every use (a consistent
// read): an erasure holds from the next read on, in every Lambda container, with one Decrypt per claim per container.
import { DecryptCommand, GenerateDataKeyCommand } from "@aws-sdk/client-kms";
import type { KMSClient } from "@aws-sdk/client-kms";
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

/** The two calls over the real SDK client (`@aws-sdk/client-kms`). */
export function kmsDataKeys(client: KMSClient): KmsDataKeys {
  return {
    generateDataKey: (input) => client.send(new GenerateDataKeyCommand(input)),
    decrypt: (input) => client.send(new DecryptCommand(input)),
  };
}

/** The `purpose` of every data key's encryption context: the functions' KMS grants require it (app/links.ts). */
export const KMS_CONTEXT_PURPOSE = "claims-personal-data";

/** How many unwrapped keys a process keeps (by their wrapped bytes); the oldest goes first. */
const UNWRAPPED_KEPT = 1000;

/**
 * Destroys `subject`'s data key: one put replaces the wrapped key by the tombstone, so no writer can slip a new key
 * in between. Needs the table only (no KMS call): `claims erase --table` runs it.
 */
export async function destroyDataKey(ctx: DynamoContext, subject: string): Promise<DestroyOutcome> {
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
}

/** Data keys wrapped by the KMS key `keyId`, kept in the table; the subject is bound as the encryption context. */
export function kmsKeyStore(ctx: DynamoContext, kms: KmsDataKeys, keyId: string): DataKeyStore {
  const context = (subject: string) => ({ purpose: KMS_CONTEXT_PURPOSE, subject });
  const unwrapped = new Map<string, Buffer>();
  const keep = (wrapped: Uint8Array, key: Buffer) => {
    if (unwrapped.size >= UNWRAPPED_KEPT) unwrapped.delete(unwrapped.keys().next().value as string);
    unwrapped.set(Buffer.from(wrapped).toString("base64"), key);
  };
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
    const known = unwrapped.get(Buffer.from(wrapped).toString("base64"));
    if (known) return { state: "key", key: known };
    const plain = await kmsCall(`Decrypt of ${subject}'s data key`, () =>
      kms.decrypt({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: context(subject) }),
    );
    if (plain.Plaintext?.length !== 32) throw new VaultUnavailableError(`KMS gave no 256-bit key for ${subject}`);
    const key = Buffer.from(plain.Plaintext);
    keep(wrapped, key);
    return { state: "key", key };
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
      const key = Buffer.from(made.Plaintext);
      keep(made.CiphertextBlob, key);
      return { state: "key", key };
    },
    destroy: (subject) => destroyDataKey(ctx, subject),
  };
}
