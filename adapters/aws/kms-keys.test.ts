// The vault's data keys through the real `@aws-sdk/client-kms` and the real DynamoDB SDK (dynalite): each claim's key
// wrapped under the day's branch key, which KMS made and wraps (issue 37), and the items KMS wrapped per claim before.
// KMS itself is a stand-in speaking its JSON 1.1 wire format (local/testing/kms-standin.ts), only because no KMS can
// run here: it refuses other credentials and checks the encryption context on Decrypt, as KMS does.
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
import { BRANCH_KEY_KEPT_MS, KMS_CONTEXT_PURPOSE, kmsDataKeys, kmsKeyStore } from "./kms-keys.ts";
import type { KmsDataKeys } from "./kms-keys.ts";
import { legacyKmsKeyStore } from "./kms-keys.test-kit.ts";
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

async function store(keyId = kms.alias, kmsClient = client, clock = { now: () => 0 }) {
  const ctx = { client: aws.doc, tableName: await aws.newTable(), clock, pageSize: undefined };
  return { ctx, store: kmsKeyStore(ctx, kmsDataKeys(kmsClient), keyId) };
}

const rawItems = async (tableName: string) =>
  (await aws.doc.send(new ScanCommand({ TableName: tableName }))).Items ?? [];

describe("the KMS data keys over the real SDK client", () => {
  it("seal and open round trip: a new process unwraps the day's branch key once, then opens every claim without KMS", async () => {
    const { ctx, store: keys } = await store();
    const token = await envelopeVault(keys).seal("clm_1", TEXT);
    expect(token).not.toContain("Fromentin");
    expect(kms.calls).toContain("GenerateDataKey");
    const before = kms.calls.length;
    // Another process (a new store: nothing unwrapped yet) opens it with the wrapped keys and one Decrypt.
    const other = envelopeVault(kmsKeyStore(ctx, kmsDataKeys(client), kms.keyArn), { cacheKeys: false });
    expect(await other.open(token)).toBe(TEXT);
    expect(await other.open(token)).toBe(TEXT);
    // More claims the same day: no KMS call to make their keys, none to open them.
    const more = await envelopeVault(keys).seal("clm_2", "a second claim");
    expect(await other.open(more)).toBe("a second claim");
    expect(kms.calls.slice(before)).toEqual(["Decrypt"]);
    expect(KMS_CONTEXT_PURPOSE).toBe(PERSONAL_DATA_KMS_PURPOSE);
    const items = await rawItems(ctx.tableName);
    expect(items.map((i) => `${i.pk} ${i.branch ?? "-"}`).sort()).toEqual([
      "BRANCHKEY#1970-01-01 -",
      "DATAKEY#clm_1 1970-01-01",
      "DATAKEY#clm_2 1970-01-01",
    ]);
  });

  it("opens the keys KMS wrapped per claim before the branch keys, one Decrypt each, the claim as their context", async () => {
    const { ctx, store: keys } = await store();
    const old = envelopeVault(legacyKmsKeyStore(ctx, kmsDataKeys(client), kms.alias));
    const tokens = [await old.seal("clm_old1", TEXT), await old.seal("clm_old2", "older words")];
    const item = (await rawItems(ctx.tableName)).find((i) => i.pk === "DATAKEY#clm_old1");
    expect(Object.keys(item ?? {}).sort()).toEqual(["entity", "pk", "sk", "wrapped"]);
    const before = kms.calls.length;
    const vault = envelopeVault(keys, { cacheKeys: false });
    expect(await vault.open(tokens[0]!)).toBe(TEXT);
    expect(await vault.open(tokens[1]!)).toBe("older words");
    expect(await vault.open(tokens[0]!)).toBe(TEXT);
    expect(kms.calls.slice(before)).toEqual(["Decrypt", "Decrypt"]);
    // Erased as any other: the tombstone replaces the old item.
    expect(await vault.destroy("clm_old1")).toBe("destroyed");
    expect(await vault.open(tokens[0]!)).toBeUndefined();
    // A legacy key moved to another claim: KMS refuses it (its context is the claim).
    const moved = (await rawItems(ctx.tableName)).find((i) => i.pk === "DATAKEY#clm_old2");
    await aws.doc.send(new PutCommand({ TableName: ctx.tableName, Item: { ...moved, pk: "DATAKEY#clm_old3" } }));
    const victim = await envelopeVault(legacyKmsKeyStore(ctx, kmsDataKeys(client), kms.alias)).seal("clm_x", TEXT);
    // The pd2 token with its subject written out (header 2, the subject's length, its bytes): clm_x's text, named clm_old3.
    const bytes = Buffer.from(victim.slice("pd2:".length), "base64url");
    expect([bytes[0], bytes.subarray(2, 2 + 5).toString()]).toEqual([2, "clm_x"]);
    const forged = `pd2:${Buffer.concat([Buffer.of(2, 8), Buffer.from("clm_old3"), bytes.subarray(2 + 5)]).toString("base64url")}`;
    await expect(vault.open(forged)).rejects.toThrow(/KMS Decrypt of clm_old3's data key failed: .*InvalidCiphertext/);
  });

  it("refuses a wrapped key moved to another claim: the claim is its wrapping's associated data", async () => {
    const { ctx, store: keys } = await store();
    const mine = await envelopeVault(keys).seal("clm_a", TEXT);
    const victim = await envelopeVault(keys).seal("clm_b", "someone else's words");
    const a = await aws.doc.send(
      new GetCommand({ TableName: ctx.tableName, Key: { pk: "DATAKEY#clm_a", sk: "DATAKEY" } }),
    );
    await aws.doc.send(
      new PutCommand({ TableName: ctx.tableName, Item: { ...a.Item, pk: "DATAKEY#clm_b", sk: "DATAKEY" } }),
    );
    const fresh = envelopeVault(kmsKeyStore(ctx, kmsDataKeys(client), kms.alias));
    await expect(fresh.open(victim)).rejects.toBeInstanceOf(VaultUnavailableError);
    await expect(fresh.open(victim)).rejects.toThrow(
      /the data key of clm_b does not authenticate under branch key 1970-01-01/,
    );
    // Nor with its bytes changed, nor naming a branch that is not there.
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ wrapped: Buffer.alloc(60, 7) }, /the data key of clm_a does not authenticate under branch key 1970-01-01/],
      [{ wrapped: Buffer.alloc(12, 7) }, /the data key of clm_a does not authenticate/],
      [{ branch: "1970-01-02" }, /branch key 1970-01-02 is not in the table/],
    ];
    for (const [change, message] of cases) {
      await aws.doc.send(new PutCommand({ TableName: ctx.tableName, Item: { ...a.Item, ...change } }));
      const opened = envelopeVault(kmsKeyStore(ctx, kmsDataKeys(client), kms.alias)).open(mine);
      await expect(opened).rejects.toThrow(message);
      await expect(opened).rejects.toBeInstanceOf(VaultUnavailableError);
    }
  });

  it("makes a fresh subject's key by one conditional put, no read; a fresh lookup of a stored key or tombstone finds it", async () => {
    const { ctx } = await store();
    const sent: string[] = [];
    const counted = {
      ...ctx,
      client: {
        send: (command: { constructor: { name: string } }) => {
          sent.push(command.constructor.name.replace(/Command$/, ""));
          return aws.doc.send(command as never);
        },
      } as unknown as typeof ctx.client,
    };
    const keys = kmsKeyStore(counted, kmsDataKeys(client), kms.alias);
    await keys.key("clm_warm", { create: true }); // the day's branch key made and kept
    sent.length = 0;
    const made = await keys.key("clm_new", { create: true, fresh: true } as { create: boolean });
    expect(made.state).toBe("key");
    expect(sent).toEqual(["Put"]);
    // The key it put is the one stored: another store opens what the fresh key sealed.
    const token = await envelopeVault({ key: async () => made, destroy: keys.destroy }).seal("clm_new", TEXT);
    expect(await envelopeVault(kmsKeyStore(ctx, kmsDataKeys(client), kms.alias)).open(token)).toBe(TEXT);
    // Told fresh, but a key is there (an id drawn twice): the put loses and the stored key is read and kept.
    sent.length = 0;
    const again = await keys.key("clm_new", { create: true, fresh: true } as { create: boolean });
    expect(sent).toEqual(["Put", "Get"]);
    expect(again.state === "key" && made.state === "key" && again.key.equals(made.key)).toBe(true);
    // Told fresh, but erased: the tombstone wins, no key is made.
    expect(await keys.destroy("clm_new")).toBe("destroyed");
    expect(await keys.key("clm_new", { create: true, fresh: true } as { create: boolean })).toEqual({
      state: "erased",
    });
    expect((await rawItems(ctx.tableName)).find((i) => i.pk === "DATAKEY#clm_new")?.wrapped).toBeUndefined();
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
    // The day's branch key stays: it opens nothing without a claim's wrapped key.
    expect((await rawItems(ctx.tableName)).some((i) => i.pk === "BRANCHKEY#1970-01-01")).toBe(true);
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
      await expect(put()).rejects.toThrow(/KMS GenerateDataKey of branch key 1970-01-01 failed: .*KMS is down/);
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

  it("never stores a plaintext key: the table holds the branch key as KMS wrapped it, each data key wrapped by it", async () => {
    const { ctx, store: keys } = await store();
    const vault = envelopeVault(keys);
    const plain: Buffer[] = [];
    for (const id of ["clm_p1", "clm_p2", "clm_p3"]) {
      await vault.seal(id, TEXT);
      const k = await keys.key(id, { create: false });
      if (k.state === "key") plain.push(k.key);
    }
    expect(plain).toHaveLength(3);
    const items = await rawItems(ctx.tableName);
    expect(items).toHaveLength(4);
    const stored = items.map((i) => Buffer.from(i.wrapped as Uint8Array));
    for (const key of [...kms.plaintextKeys.map((p) => Buffer.from(p, "base64")), ...plain]) {
      for (const bytes of stored) expect(bytes.includes(key)).toBe(false);
      expect(JSON.stringify(items)).not.toContain(key.toString("base64"));
    }
    const shapes = items.map((i) => Object.keys(i).sort().join()).sort();
    expect(shapes).toEqual([
      "branch,entity,pk,sk,wrapped",
      "branch,entity,pk,sk,wrapped",
      "branch,entity,pk,sk,wrapped",
      "entity,pk,sk,wrapped",
    ]);
  });

  it("makes one branch key a day when two containers race: the loser wraps its claim under the winner's", async () => {
    const { ctx } = await store();
    const sdk = kmsDataKeys(client);
    const first = envelopeVault(kmsKeyStore(ctx, sdk, kms.alias));
    // The second container's GenerateDataKey answers only after the first has made and stored the day's branch key.
    const late: KmsDataKeys = {
      ...sdk,
      generateDataKey: async (input) => {
        const out = await sdk.generateDataKey(input);
        await first.seal("clm_r1", "first container's claim");
        return out;
      },
    };
    const token = await envelopeVault(kmsKeyStore(ctx, late, kms.alias)).seal("clm_r2", "second container's claim");
    const items = await rawItems(ctx.tableName);
    expect(items.filter((i) => i.entity === "branch_key")).toHaveLength(1);
    // A third container opens both claims with the one branch key: one Decrypt.
    const third = envelopeVault(kmsKeyStore(ctx, sdk, kms.alias));
    const before = kms.calls.length;
    expect(await third.open(token)).toBe("second container's claim");
    expect(await third.open(await first.seal("clm_r1", "first container's claim"))).toBe("first container's claim");
    expect(kms.calls.slice(before)).toEqual(["Decrypt"]);
  });

  it("keeps an unwrapped branch key for BRANCH_KEY_KEPT_MS: past it, KMS is asked again, and a refusal stops the opening", async () => {
    let now = Date.parse("2026-12-07T10:00:00Z");
    const { ctx, store: keys } = await store(kms.alias, client, { now: () => now });
    const vault = envelopeVault(keys, { cacheKeys: false });
    const token = await vault.seal("clm_t", TEXT);
    kms.denied.add("Decrypt");
    try {
      now += BRANCH_KEY_KEPT_MS - 1;
      expect(await vault.open(token)).toBe(TEXT); // kept: no KMS call
      now += 1;
      await expect(vault.open(token)).rejects.toThrow(/KMS Decrypt of branch key 2026-12-07 failed: .*AccessDenied/);
      kms.denied.clear();
      expect(await vault.open(token)).toBe(TEXT);
      // A new day: a new branch key for new claims; yesterday's still opens yesterday's claims.
      now = Date.parse("2026-12-08T00:00:01Z");
      const next = await vault.seal("clm_t2", "the next day");
      expect(await vault.open(next)).toBe("the next day");
      expect(await vault.open(token)).toBe(TEXT);
      const branchItems = (await rawItems(ctx.tableName)).filter((i) => i.entity === "branch_key").map((i) => i.pk);
      expect(branchItems.sort()).toEqual(["BRANCHKEY#2026-12-07", "BRANCHKEY#2026-12-08"]);
    } finally {
      kms.denied.clear();
    }
  });
});
