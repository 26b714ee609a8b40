// The data keys of personal data on AWS (issues 38, 37): envelope encryption under KMS, with a branch key between
// (KMS's Hierarchical keyring pattern). A claim's AES-256 data key is 32 random bytes, kept only wrapped in the table
// (`DATAKEY#<claim_id>`): AES-256-GCM under the day's branch key, the branch and the claim as associated data. The
// branch key (one per stage and UTC day, `BRANCHKEY#<day>`) is made by KMS GenerateDataKey under the stage's key and
// kept KMS-wrapped; a container unwraps it once (KMS Decrypt) and keeps it BRANCH_KEY_KEPT_MS, so a claim costs no KMS
// call. Items made before (no `branch`: the data key KMS-wrapped itself) still open with a Decrypt. Destroying
// replaces the claim's item by a tombstone (`erased_at`, no key): the plaintext key never left memory, so the sealed
// text — in the audit and in every backup of the table — is gone; the branch key stays (it opens nothing without
// the claim's wrapped key). The item is read with a consistent read on every lookup (kmsKeyStore does not remember
// it; functions/composition/compose.ts remembers it per invocation), except a fresh subject's: a claim id its
// invocation just drew gets its key by one conditional put, read only when that put loses.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { DecryptCommand, GenerateDataKeyCommand } from "@aws-sdk/client-kms";
import type { KMSClient } from "@aws-sdk/client-kms";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { VaultUnavailableError } from "../../pipeline/errors.ts";
import type { DestroyOutcome } from "../../pipeline/ports.ts";
import type { DataKeyState, DataKeyStore } from "../vault/envelope.ts";
import type { KeyLookup } from "../vault/invocation-keys.ts";
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

/** How many unwrapped data keys a process keeps (by claim and wrapped bytes); the oldest goes first. */
const UNWRAPPED_KEPT = 1000;

/**
 * How long a container keeps a branch key it unwrapped (or made) before asking KMS again: 10 minutes, the bound on
 * how long a revoked KMS grant (or a disabled key) keeps opening claims in a warm container.
 */
export const BRANCH_KEY_KEPT_MS = 10 * 60_000;

/** The branch of a data key made at `nowMs`: its UTC day (`2026-12-07`). */
export const branchOf = (nowMs: number): string => new Date(nowMs).toISOString().slice(0, 10);

/** What a data key's wrapping binds it to: a wrapped key moved to another claim or branch does not authenticate. */
const wrappingAad = (branch: string, subject: string) =>
  Buffer.from(`${KMS_CONTEXT_PURPOSE}\u0000${branch}\u0000${subject}`, "utf8");

/** `key` wrapped under `branchKey`: a random 96-bit IV, the ciphertext, the 128-bit tag (60 bytes). */
function wrapLocally(branchKey: Buffer, branch: string, subject: string, key: Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", branchKey, iv);
  cipher.setAAD(wrappingAad(branch, subject));
  return Buffer.concat([iv, cipher.update(key), cipher.final(), cipher.getAuthTag()]);
}

/** The data key in `wrapped`, or undefined when it does not authenticate under `branchKey` for this claim. */
function unwrapLocally(branchKey: Buffer, branch: string, subject: string, wrapped: Uint8Array): Buffer | undefined {
  const bytes = Buffer.from(wrapped);
  if (bytes.length !== 60) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", branchKey, bytes.subarray(0, 12));
    decipher.setAAD(wrappingAad(branch, subject));
    decipher.setAuthTag(bytes.subarray(44));
    return Buffer.concat([decipher.update(bytes.subarray(12, 44)), decipher.final()]);
  } catch {
    return undefined;
  }
}

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

/**
 * Data keys in the table, wrapped under the day's branch key, which the KMS key `keyId` wraps (its encryption context
 * the purpose and the branch); items made before, wrapped by KMS itself (the claim as context), still open.
 */
export function kmsKeyStore(ctx: DynamoContext, kms: KmsDataKeys, keyId: string): DataKeyStore {
  const unwrapped = new Map<string, Buffer>();
  const keep = (id: string, key: Buffer) => {
    if (unwrapped.size >= UNWRAPPED_KEPT) unwrapped.delete(unwrapped.keys().next().value as string);
    unwrapped.set(id, key);
  };
  const kmsCall = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw new VaultUnavailableError(`KMS ${what} failed: ${describeError(error)}`, { cause: error });
    }
  };
  const branches = branchKeys(ctx, kms, keyId, kmsCall);
  const read = async (subject: string): Promise<DataKeyState> => {
    const out = await dynamoCall(`GetItem data key ${subject}`, () =>
      ctx.client.send(new GetCommand({ TableName: ctx.tableName, Key: keys.dataKey(subject), ConsistentRead: true })),
    );
    const item = out.Item;
    if (!item) return { state: "none" };
    if (item.erased_at !== undefined || !(item.wrapped instanceof Uint8Array)) return { state: "erased" };
    const wrapped = item.wrapped;
    const branch = typeof item.branch === "string" ? item.branch : undefined;
    const id = `${subject}\u0000${branch ?? ""}\u0000${Buffer.from(wrapped).toString("base64")}`;
    // The branch key first, even for a data key kept unwrapped: no claim opens past the branch key's lifetime here.
    const branchKey = branch === undefined ? undefined : await branches.key(branch, false);
    const known = unwrapped.get(id);
    if (known) return { state: "key", key: known };
    let key: Buffer;
    if (branch !== undefined && branchKey !== undefined) {
      const found = unwrapLocally(branchKey, branch, subject, wrapped);
      if (found === undefined)
        throw new VaultUnavailableError(`the data key of ${subject} does not authenticate under branch key ${branch}`);
      key = found;
    } else {
      // Made before the branch keys: KMS wrapped this claim's key itself, the claim as its encryption context.
      const plain = await kmsCall(`Decrypt of ${subject}'s data key`, () =>
        kms.decrypt({
          KeyId: keyId,
          CiphertextBlob: wrapped,
          EncryptionContext: { purpose: KMS_CONTEXT_PURPOSE, subject },
        }),
      );
      if (plain.Plaintext?.length !== 32) throw new VaultUnavailableError(`KMS gave no 256-bit key for ${subject}`);
      key = Buffer.from(plain.Plaintext);
    }
    keep(id, key);
    return { state: "key", key };
  };
  return {
    async key(subject, { create, fresh }: KeyLookup) {
      // A fresh subject (one its invocation just drew: adapters/vault/invocation-keys.ts) has no item: its key is put
      // at once, and the item read only when the put loses (a key or a tombstone there after all: what is stored wins).
      if (!(create && fresh === true)) {
        const found = await read(subject);
        if (found.state !== "none" || !create) return found;
      }
      const branch = branchOf(ctx.clock.now());
      const key = randomBytes(32);
      const wrapped = wrapLocally(await branches.key(branch, true), branch, subject, key);
      try {
        await dynamoCall(`PutItem data key ${subject}`, () =>
          ctx.client.send(
            new PutCommand({
              TableName: ctx.tableName,
              Item: { ...keys.dataKey(subject), entity: "data_key", branch, wrapped },
              ConditionExpression: "attribute_not_exists(pk)",
            }),
          ),
        );
      } catch (error) {
        // Another writer made it first, or an erasure left its tombstone: what is stored wins.
        if (isConditionalCheckFailed(error)) return read(subject);
        throw error;
      }
      keep(`${subject}\u0000${branch}\u0000${wrapped.toString("base64")}`, key);
      return { state: "key", key };
    },
    destroy: (subject) => destroyDataKey(ctx, subject),
  };
}

/**
 * The branch keys as one container sees them: each read from its item (or made by KMS GenerateDataKey and put, the
 * loser of a race reading the winner's), unwrapped by KMS Decrypt once, and kept BRANCH_KEY_KEPT_MS.
 */
function branchKeys(
  ctx: DynamoContext,
  kms: KmsDataKeys,
  keyId: string,
  kmsCall: <T>(what: string, call: () => Promise<T>) => Promise<T>,
): { key(branch: string, create: boolean): Promise<Buffer> } {
  const kept = new Map<string, { key: Promise<Buffer>; until: number }>();
  const context = (branch: string) => ({ purpose: KMS_CONTEXT_PURPOSE, branch });
  const plainKey = (plain: Uint8Array | undefined, branch: string): Buffer => {
    if (plain?.length !== 32) throw new VaultUnavailableError(`KMS gave no 256-bit branch key ${branch}`);
    return Buffer.from(plain);
  };
  const stored = async (branch: string): Promise<Buffer | undefined> => {
    const out = await dynamoCall(`GetItem branch key ${branch}`, () =>
      ctx.client.send(new GetCommand({ TableName: ctx.tableName, Key: keys.branchKey(branch), ConsistentRead: true })),
    );
    const wrapped = out.Item?.wrapped;
    if (!(wrapped instanceof Uint8Array)) return undefined;
    const plain = await kmsCall(`Decrypt of branch key ${branch}`, () =>
      kms.decrypt({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: context(branch) }),
    );
    return plainKey(plain.Plaintext, branch);
  };
  const load = async (branch: string, create: boolean): Promise<Buffer> => {
    const found = await stored(branch);
    if (found !== undefined) return found;
    if (!create) throw new VaultUnavailableError(`branch key ${branch} is not in the table`);
    const made = await kmsCall(`GenerateDataKey of branch key ${branch}`, () =>
      kms.generateDataKey({ KeyId: keyId, KeySpec: "AES_256", EncryptionContext: context(branch) }),
    );
    const key = plainKey(made.Plaintext, branch);
    if (!made.CiphertextBlob) throw new VaultUnavailableError(`KMS gave no wrapped branch key ${branch}`);
    try {
      await dynamoCall(`PutItem branch key ${branch}`, () =>
        ctx.client.send(
          new PutCommand({
            TableName: ctx.tableName,
            Item: { ...keys.branchKey(branch), entity: "branch_key", wrapped: made.CiphertextBlob },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // Another container made the day's branch key first: its key is the one every claim of the day is wrapped by.
      const winner = await stored(branch);
      if (winner === undefined) throw new VaultUnavailableError(`branch key ${branch} lost its race and is not stored`);
      return winner;
    }
    return key;
  };
  return {
    key(branch, create) {
      const now = ctx.clock.now();
      const known = kept.get(branch);
      if (known !== undefined && known.until > now) return known.key;
      const key = load(branch, create);
      kept.set(branch, { key, until: now + BRANCH_KEY_KEPT_MS });
      // A failed load is not kept: the next lookup asks again.
      key.catch(() => {
        if (kept.get(branch)?.key === key) kept.delete(branch);
      });
      return key;
    },
  };
}
