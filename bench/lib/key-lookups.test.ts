// The aws-requests bench's counted data keys (issue 37): each lookup counted against the invocation it ran in, and
// summarised per claim as the lookups, the keys made and the KMS Decrypts `kmsKeyStore` would need on AWS.
import { describe, expect, it } from "vitest";
import { countedKeyStore, countedVault } from "./key-lookups.ts";
import type { KeyLookupOutcome } from "./key-lookups.ts";
import { createUsageRecorder, summarise } from "./usage.ts";

describe("countedKeyStore", () => {
  it("tells each lookup what it found: a key made, the same key found, none, a tombstone", async () => {
    const seen: [string, KeyLookupOutcome][] = [];
    const store = countedKeyStore((subject, outcome) => seen.push([subject, outcome]));
    expect(await store.key("clm_a", { create: false })).toEqual({ state: "none" });
    const made = await store.key("clm_a", { create: true });
    const found = await store.key("clm_a", { create: false });
    expect(made.state === "key" && found.state === "key" && made.key.equals(found.key)).toBe(true);
    expect(await store.destroy("clm_a")).toBe("destroyed");
    expect(await store.key("clm_a", { create: true })).toEqual({ state: "erased" });
    expect(await store.destroy("clm_a")).toBe("already_erased");
    expect(seen).toEqual([
      ["clm_a", "none"],
      ["clm_a", "made"],
      ["clm_a", "found"],
      ["clm_a", "erased"],
    ]);
  });

  it("seals and opens through the envelope vault, one lookup per use", async () => {
    let lookups = 0;
    const vault = countedVault(() => {
      lookups += 1;
    });
    const token = await vault.seal("clm_b", "my parcel never came");
    expect(await vault.open(token)).toBe("my parcel never came");
    expect(lookups).toBe(2);
  });
});

describe("data-key lookups in the usage summary", () => {
  it("counts lookups per invocation and the Decrypts a container per invocation or per function would make", async () => {
    const recorder = createUsageRecorder(() => undefined);
    const vault = countedVault((subject, outcome) => recorder.noteKeyLookup(subject, outcome));
    // Intake seals (makes the key) and reads back: its container holds the key, no Decrypt.
    const token = await recorder.runAs("intakeApi", 1, async () => {
      const t = await vault.seal("clm_c", "broken on arrival");
      await vault.open(t);
      return t;
    });
    // Two worker invocations open it twice each: a Decrypt in each fresh container, one in a warm one.
    for (let i = 0; i < 2; i++)
      await recorder.runAs("worker", 1, async () => {
        await vault.open(token);
        await vault.open(token);
      });
    await vault.open(token); // outside any invocation: not counted
    const { calls, invocations } = recorder.take();
    const p = summarise("structured", 1, { calls, invocations, busDeliveries: {}, apiRequests: 1 });
    expect(p.invocations.intakeApi).toMatchObject({
      keyLookups: 2,
      keysMade: 1,
      keyDecryptsPerInvocation: 0,
      keyDecryptsPerFunction: 0,
    });
    expect(p.invocations.worker).toMatchObject({
      keyLookups: 4,
      keysMade: 0,
      keyDecryptsPerInvocation: 2,
      keyDecryptsPerFunction: 1,
    });
  });
});
