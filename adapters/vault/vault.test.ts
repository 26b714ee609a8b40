// The personal-data vault's contract, run against both key stores: the local key files and KMS-wrapped keys in the
// table (dynalite through the real DynamoDB SDK; KMS is a fake that wraps with its own AES key and checks the
// encryption context: no KMS emulator is installed, see docs/customer-data.md).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ERASED, isSealed } from "../../core/privacy/sealing.ts";
import { SealedFieldError } from "../../pipeline/errors.ts";
import type { PersonalDataVault } from "../../pipeline/ports.ts";
import { useEmulatedAws } from "../aws/emulators.test-kit.ts";
import { kmsKeyStore } from "../aws/kms-keys.ts";
import type { KmsDataKeys } from "../aws/kms-keys.ts";
import { envelopeVault } from "./envelope.ts";
import type { DataKeyStore } from "./envelope.ts";
import { keyFileStore } from "./key-files.ts";

const TEXT = "Mein Name ist Anna Zwirbelmeyer, anna.zwirbel@example.com, IBAN DE89 3704 0044 0532 0130 00";

/** A fake KMS: data keys wrapped under its own master key with AES-GCM, the encryption context as associated data. */
function fakeKms(): KmsDataKeys & { calls: string[] } {
  const master = randomBytes(32);
  const calls: string[] = [];
  const aad = (c: Record<string, string>) => Buffer.from(JSON.stringify(Object.entries(c).sort()));
  return {
    calls,
    async generateDataKey({ EncryptionContext }) {
      calls.push("GenerateDataKey");
      const key = randomBytes(32);
      const iv = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", master, iv).setAAD(aad(EncryptionContext));
      const ct = Buffer.concat([c.update(key), c.final()]);
      return { Plaintext: key, CiphertextBlob: Buffer.concat([iv, c.getAuthTag(), ct]) };
    },
    async decrypt({ CiphertextBlob, EncryptionContext }) {
      calls.push("Decrypt");
      const blob = Buffer.from(CiphertextBlob);
      const d = createDecipheriv("aes-256-gcm", master, blob.subarray(0, 12)).setAAD(aad(EncryptionContext));
      d.setAuthTag(blob.subarray(12, 28));
      return { Plaintext: Buffer.concat([d.update(blob.subarray(28)), d.final()]) };
    },
  };
}

/** A pd2 token's parts, where the subject is written as its UTF-8 bytes (header 2: every subject of these tests). */
function pd2Parts(token: string): { subject: string; iv: Buffer; rest: Buffer } {
  const bytes = Buffer.from(token.slice("pd2:".length), "base64url");
  expect(bytes[0]).toBe(2);
  const n = bytes[1]!;
  return {
    subject: bytes.subarray(2, 2 + n).toString(),
    iv: bytes.subarray(2 + n, 14 + n),
    rest: bytes.subarray(14 + n),
  };
}

/** The pd2 token of `subject` with `iv` and `rest` (ciphertext and tag). */
const pd2Of = (subject: string, iv: Buffer, rest: Buffer) =>
  `pd2:${Buffer.concat([Buffer.of(2, Buffer.byteLength(subject)), Buffer.from(subject), iv, rest]).toString("base64url")}`;

function vaultContract(name: string, makeStore: () => Promise<DataKeyStore>): void {
  const make = async (): Promise<PersonalDataVault> => envelopeVault(await makeStore());
  describe(`the vault over ${name}`, () => {
    it("seals a text so that it reads back, never in clear, as the same token each time (synthetic IV)", async () => {
      const store = await makeStore();
      const a = await envelopeVault(store).seal("clm_1", TEXT);
      const b = await envelopeVault(store).seal("clm_1", TEXT);
      expect(isSealed(a)).toBe(true);
      expect(a).toBe(b);
      expect(a).not.toContain("Zwirbel");
      expect(await envelopeVault(store).open(a)).toBe(TEXT);
    });

    it("gives another text, or the same text of another claim, another IV and another token", async () => {
      const vault = await make();
      const ivOf = (token: string) => pd2Parts(token).iv.toString("hex");
      const a = await vault.seal("clm_1", TEXT);
      const b = await vault.seal("clm_1", `${TEXT}.`);
      const c = await vault.seal("clm_4", TEXT);
      expect(new Set([ivOf(a), ivOf(b), ivOf(c)]).size).toBe(3);
      expect(await vault.open(b)).toBe(`${TEXT}.`);
      expect(await vault.open(c)).toBe(TEXT);
    });

    it("opens in another vault over the same keys, and a key one vault destroys is gone for every new one", async () => {
      const store = await makeStore();
      const writer = envelopeVault(store);
      const token = await writer.seal("clm_9", TEXT);
      expect(await envelopeVault(store).open(token)).toBe(TEXT);
      expect(await envelopeVault(store).destroy("clm_9")).toBe("destroyed");
      expect(await envelopeVault(store).open(token)).toBeUndefined();
      expect(await envelopeVault(store).seal("clm_9", TEXT)).toBe(ERASED);
    });

    it("destroys one subject's key: its fields read as gone, another subject's still open", async () => {
      const vault = await make();
      const mine = await vault.seal("clm_2", TEXT);
      const other = await vault.seal("clm_3", "other text");
      expect(await vault.destroy("clm_2")).toBe("destroyed");
      expect(await vault.open(mine)).toBeUndefined();
      expect(await vault.open(other)).toBe("other text");
    });

    it("answers a second erasure and an unknown subject, and never seals anew after an erasure", async () => {
      const vault = await make();
      await vault.seal("clm_4", TEXT);
      expect(await vault.destroy("clm_4")).toBe("destroyed");
      expect(await vault.destroy("clm_4")).toBe("already_erased");
      expect(await vault.seal("clm_4", TEXT)).toBe(ERASED);
      expect(await vault.destroy("clm_never")).toBe("unknown");
      expect(await vault.seal("clm_never", TEXT)).toBe(ERASED);
    });

    it("refuses a token moved to another subject and a token that is not one", async () => {
      const vault = await make();
      const token = await vault.seal("clm_5", TEXT);
      await vault.seal("clm_6", "x");
      const { iv, rest } = pd2Parts(token);
      await expect(vault.open(pd2Of("clm_6", iv, rest))).rejects.toBeInstanceOf(SealedFieldError);
      await expect(vault.open("pd1:garbage")).rejects.toBeInstanceOf(SealedFieldError);
      await expect(vault.open("pd2:garbage")).rejects.toBeInstanceOf(SealedFieldError);
    });

    it("keeps a token it made for the subject, and seals any other text that looks like one (issue 38)", async () => {
      const vault = await make();
      const mine = await vault.seal("clm_10", TEXT);
      const others = await vault.seal("clm_11", "the other claim's words");
      const { iv, rest } = pd2Parts(mine);
      const forged = pd2Of("clm_10", iv, Buffer.concat([rest.subarray(0, -16), Buffer.alloc(16)]));
      const forgedPd1 = `pd1:${Buffer.from("clm_10").toString("base64url")}:${"A".repeat(16)}:AAAA:${"A".repeat(22)}`;
      expect(await vault.seal("clm_10", mine)).toBe(mine);
      for (const text of ["pd1:abc", "pd2:abc", forged, forgedPd1, others, ERASED]) {
        const token = await vault.seal("clm_10", text);
        expect(token).not.toBe(text);
        expect(await vault.open(token)).toBe(text);
      }
      // The other claim erased: its token, sealed as clm_10's text, still reads as written, never [erased].
      await vault.destroy("clm_11");
      expect(await vault.open(await vault.seal("clm_10", others))).toBe(others);
    });
  });
}

vaultContract("key files", async () => keyFileStore(join(mkdtempSync(join(tmpdir(), "vault-")), "keys")));

const aws = useEmulatedAws();
vaultContract("KMS-wrapped keys in the table", async () => {
  const ctx = { client: aws.doc, tableName: await aws.newTable(), clock: { now: () => 0 }, pageSize: undefined };
  return kmsKeyStore(ctx, fakeKms(), "alias/claims-personal-data");
});

describe("the key files", () => {
  it("are owner-only, named by a hash (no claim id), and a destroyed key leaves only its tombstone", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "vault-")), "keys");
    const vault = envelopeVault(keyFileStore(dir));
    await vault.seal("clm_7", TEXT);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f]{64}\.key$/);
    expect(statSync(join(dir, files[0]!)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, files[0]!))).toHaveLength(32);
    await vault.destroy("clm_7");
    expect(readdirSync(dir)).toEqual([files[0]!.replace(/\.key$/, ".erased")]);
  });
});

describe("the KMS-wrapped keys", () => {
  it("keep only the wrapped key in the table and ask KMS to unwrap the branch key that wraps it", async () => {
    const kms = fakeKms();
    const tableName = await aws.newTable();
    const ctx = { client: aws.doc, tableName, clock: { now: () => 0 }, pageSize: undefined };
    const vault = envelopeVault(kmsKeyStore(ctx, kms, "alias/k"));
    const token = await vault.seal("clm_8", TEXT);
    expect(await vault.open(token)).toBe(TEXT);
    expect(kms.calls).toEqual(["GenerateDataKey"]);
    // Another unit of work (a new vault and store: a new container) has only the wrapped keys: KMS unwraps the branch key.
    expect(await envelopeVault(kmsKeyStore(ctx, kms, "alias/k")).open(token)).toBe(TEXT);
    expect(kms.calls).toEqual(["GenerateDataKey", "Decrypt"]);
    const stored = await aws.doc.send(
      new (await import("@aws-sdk/lib-dynamodb")).GetCommand({
        TableName: tableName,
        Key: { pk: "DATAKEY#clm_8", sk: "DATAKEY" },
      }),
    );
    expect(Object.keys(stored.Item ?? {}).sort()).toEqual(["branch", "entity", "pk", "sk", "wrapped"]);
    await vault.destroy("clm_8");
    const after = await aws.doc.send(
      new (await import("@aws-sdk/lib-dynamodb")).GetCommand({
        TableName: tableName,
        Key: { pk: "DATAKEY#clm_8", sk: "DATAKEY" },
      }),
    );
    expect(after.Item?.wrapped).toBeUndefined();
    expect(after.Item?.erased_at).toBe("1970-01-01T00:00:00.000Z");
  });
});
