// The vault's KMS data keys through the real `@aws-sdk/client-kms` and the real DynamoDB SDK (dynalite). KMS itself is
// a stand-in speaking its JSON 1.1 wire format (local/testing/kms-standin.ts), only because no KMS can run here: it
// refuses other credentials and checks the encryption context on Decrypt, as KMS does.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KMSClient } from "@aws-sdk/client-kms";
import { DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERASED } from "../../core/privacy/sealing.ts";
import { VaultUnavailableError } from "../../pipeline/errors.ts";
import { PERSONAL_DATA_KMS_PURPOSE } from "../../app/links.ts";
import { localClientConfig } from "../../local/emulators.ts";
import { envelopeVault } from "../vault/envelope.ts";
import { sealTableClient } from "../vault/sealed-table.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { KMS_CONTEXT_PURPOSE, kmsDataKeys, kmsKeyStore } from "./kms-keys.ts";
import { startKmsStandIn } from "../../local/testing/kms-standin.ts";
import type { KmsStandIn } from "../../local/testing/kms-standin.ts";

const TEXT = "Je m'appelle Léa Fromentin, lea.fromentin@example.fr, IBAN FR76 3000 6000 0112 3456 7890 189";
const aws = useEmulatedAws();
let kms: KmsStandIn;
let client: KMSClient;
beforeAll(async () => {
  kms = await startKmsStandIn();
  client = new KMSClient({ ...kms.clientConfig(), maxAttempts: 1 });
});
afterAll(async () => {
  client?.destroy();
  await kms?.stop();
});

async function store(keyId = kms.alias, kmsClient = client) {
  const ctx = { client: aws.doc, tableName: await aws.newTable(), clock: { now: () => 0 }, pageSize: undefined };
  return { ctx, store: kmsKeyStore(ctx, kmsDataKeys(kmsClient), keyId) };
}

const rawItems = async (tableName: string) =>
  (await aws.doc.send(new ScanCommand({ TableName: tableName }))).Items ?? [];

describe("the KMS data keys over the real SDK client", () => {
  it("seal and open round trip, a new process unwrapping the stored key through KMS Decrypt", async () => {
    const { ctx, store: keys } = await store();
    const token = await envelopeVault(keys).seal("clm_1", TEXT);
    expect(token).not.toContain("Fromentin");
    const before = kms.calls.length;
    // Another process (a new store: nothing unwrapped yet) opens it with the wrapped key and one Decrypt.
    const other = envelopeVault(kmsKeyStore(ctx, kmsDataKeys(client), kms.keyArn), { cacheKeys: false });
    expect(await other.open(token)).toBe(TEXT);
    expect(await other.open(token)).toBe(TEXT);
    expect(kms.calls.slice(before)).toEqual(["Decrypt"]);
    expect(KMS_CONTEXT_PURPOSE).toBe(PERSONAL_DATA_KMS_PURPOSE);
  });

  it("refuses a wrapped key moved to another claim: its encryption context is the claim", async () => {
    const { ctx, store: keys } = await store();
    await envelopeVault(keys).seal("clm_a", TEXT);
    const victim = await envelopeVault(keys).seal("clm_b", "someone else's words");
    const a = await aws.doc.send(
      new GetCommand({ TableName: ctx.tableName, Key: { pk: "DATAKEY#clm_a", sk: "DATAKEY" } }),
    );
    await aws.doc.send(
      new PutCommand({ TableName: ctx.tableName, Item: { ...a.Item, pk: "DATAKEY#clm_b", sk: "DATAKEY" } }),
    );
    const fresh = envelopeVault(kmsKeyStore(ctx, kmsDataKeys(client), kms.alias));
    await expect(fresh.open(victim)).rejects.toBeInstanceOf(VaultUnavailableError);
    await expect(fresh.open(victim)).rejects.toThrow(/KMS Decrypt of clm_b's data key failed: .*InvalidCiphertext/);
    expect(kms.calls.at(-1)).toMatch(/^Decrypt refused: the encryption context/);
  });

  it("erases by a tombstone: no wrapped key left, every sealed field of the claim opens as erased, none sealed anew", async () => {
    const { ctx, store: keys } = await store();
    const vault = envelopeVault(keys, { cacheKeys: false });
    const fields = [await vault.seal("clm_e", TEXT), await vault.seal("clm_e", "a reviewer's note quoting Léa")];
    const other = await vault.seal("clm_f", "another claim");
    expect(await vault.destroy("clm_e")).toBe("destroyed");
    const item = (await rawItems(ctx.tableName)).find((i) => i.pk === "DATAKEY#clm_e");
    expect(item).toEqual({
      pk: "DATAKEY#clm_e",
      sk: "DATAKEY",
      entity: "data_key",
      erased_at: "1970-01-01T00:00:00.000Z",
    });
    // Even the process that unwrapped the key before reads the tombstone first.
    for (const token of fields) expect(await vault.open(token)).toBeUndefined();
    expect(await vault.seal("clm_e", TEXT)).toBe(ERASED);
    expect(await vault.open(other)).toBe("another claim");
    expect(await vault.destroy("clm_e")).toBe("already_erased");
    expect(await vault.destroy("clm_never")).toBe("unknown");
  });

  it("turns KMS down, a denied action or wrong credentials into VaultUnavailableError, and nothing is written in clear", async () => {
    const { ctx, store: keys } = await store();
    // A client of its own: a document client shares its DynamoDB client's middleware, and the raw reads must not open.
    const doc = sealTableClient(
      DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(aws.emulators.dynamodbEndpoint)), {
        marshallOptions: { removeUndefinedValues: true },
      }),
      envelopeVault(keys, { cacheKeys: false }),
    );
    // A claim's item as the ports write it: the sealing middleware asks the vault (and KMS) before the put.
    const put = () =>
      doc.send(
        new PutCommand({
          TableName: ctx.tableName,
          Item: {
            pk: "CLAIM#clm_down",
            sk: "CLAIM",
            claim_id: "clm_down",
            claim: { order_id: "ord_001", reason: TEXT },
          },
        }),
      );
    kms.failing = true;
    try {
      await expect(put()).rejects.toBeInstanceOf(VaultUnavailableError);
      await expect(put()).rejects.toThrow(/KMS GenerateDataKey for clm_down failed: .*KMS is down/);
    } finally {
      kms.failing = false;
    }
    kms.denied.add("GenerateDataKey");
    try {
      await expect(envelopeVault(keys).seal("clm_denied", TEXT)).rejects.toThrow(/KMS GenerateDataKey .*AccessDenied/);
    } finally {
      kms.denied.clear();
    }
    const stranger = new KMSClient({
      ...kms.clientConfig(),
      credentials: { accessKeyId: "AKIDSTRANGER", secretAccessKey: "x".repeat(40) },
      maxAttempts: 1,
    });
    try {
      const strangers = kmsKeyStore(ctx, kmsDataKeys(stranger), kms.alias);
      await expect(envelopeVault(strangers).seal("clm_stranger", TEXT)).rejects.toThrow(/UnrecognizedClient/);
    } finally {
      stranger.destroy();
    }
    // Nothing of the text, and no key, was stored; KMS back, the same write goes through sealed.
    expect(JSON.stringify(await rawItems(ctx.tableName))).not.toContain("Fromentin");
    expect(await rawItems(ctx.tableName)).toEqual([]);
    await put();
    const stored = await rawItems(ctx.tableName);
    expect(JSON.stringify(stored)).not.toContain("Fromentin");
    const back = await doc.send(
      new GetCommand({ TableName: ctx.tableName, Key: { pk: "CLAIM#clm_down", sk: "CLAIM" } }),
    );
    expect(back.Item?.claim.reason).toBe(TEXT);
  });

  it("never stores a plaintext data key: the table holds only KMS's wrapped blobs", async () => {
    const { ctx, store: keys } = await store();
    const vault = envelopeVault(keys);
    for (const id of ["clm_p1", "clm_p2", "clm_p3"]) await vault.seal(id, TEXT);
    const items = await rawItems(ctx.tableName);
    expect(items).toHaveLength(3);
    const stored = items.map((i) => Buffer.from(i.wrapped as Uint8Array));
    for (const plain of kms.plaintextKeys) {
      const key = Buffer.from(plain, "base64");
      for (const bytes of stored) expect(bytes.includes(key)).toBe(false);
      expect(JSON.stringify(items)).not.toContain(plain);
    }
    expect(items.every((i) => Object.keys(i).sort().join() === "entity,pk,sk,wrapped")).toBe(true);
  });
});
