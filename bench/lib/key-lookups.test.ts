// The aws-requests bench's counted data keys (issue 37): each lookup counted against the invocation it ran in, and
// summarised per claim as the lookups, the keys made and the KMS Decrypts `kmsKeyStore` would need on AWS.
import { describe, expect, it } from "vitest";
import { countedKeyStore, countedVault } from "./key-lookups.ts";
import type { KeyLookupOutcome } from "./key-lookups.ts";
import { createUsageRecorder, summarise } from "./usage.ts";
import { inKeyInvocation, newSubjectInInvocation } from "../../adapters/vault/invocation-keys.ts";

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

  it("seals and opens through the envelope vault, one lookup per use outside an invocation", async () => {
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
  it("counts the store's lookups per invocation (one per subject, the vault remembering it), and the invocations with any", async () => {
    const recorder = createUsageRecorder(() => undefined);
    const vault = countedVault((subject, outcome) => recorder.noteKeyLookup(subject, outcome));
    // As measured handlers run: the invocation's own key scope inside the recorder's.
    const run = <T>(fn: "intakeApi" | "worker", body: () => Promise<T>) =>
      recorder.runAs(fn, 1, () => inKeyInvocation(body));
    // Intake seals (makes the key) and reads back: one lookup; its container holds the key, no Decrypt.
    const token = await run("intakeApi", async () => {
      const t = await vault.seal("clm_c", "broken on arrival");
      await vault.open(t);
      return t;
    });
    // Two worker invocations open it twice each: one lookup each; a Decrypt in each fresh container, one in a warm one.
    for (let i = 0; i < 2; i++)
      await run("worker", async () => {
        await vault.open(token);
        await vault.open(token);
      });
    await vault.open(token); // outside any invocation: not counted
    const { calls, invocations } = recorder.take();
    const p = summarise("structured", 1, { calls, invocations, busDeliveries: {}, apiRequests: 1 });
    expect(p.invocations.intakeApi).toMatchObject({
      keyLookups: 1,
      keysMade: 1,
      keyDecryptsPerInvocation: 0,
      keyDecryptsPerFunction: 0,
      keyInvocations: 1,
    });
    expect(p.invocations.worker).toMatchObject({
      keyLookups: 2,
      keysMade: 0,
      keyDecryptsPerInvocation: 2,
      keyDecryptsPerFunction: 1,
      keyInvocations: 2,
    });
  });

  it("counts a key put for a claim id its invocation drew as a key made with no lookup (no read of its item)", async () => {
    const recorder = createUsageRecorder(() => undefined);
    const vault = countedVault((subject, outcome) => recorder.noteKeyLookup(subject, outcome));
    await recorder.runAs("intakeApi", 1, () =>
      inKeyInvocation(async () => {
        newSubjectInInvocation("clm_d"); // as compose.ts's id source does for the ids it draws
        const t = await vault.seal("clm_d", "broken on arrival");
        await vault.open(t);
      }),
    );
    const { calls, invocations } = recorder.take();
    const p = summarise("structured", 1, { calls, invocations, busDeliveries: {}, apiRequests: 1 });
    expect(p.invocations.intakeApi).toMatchObject({ keyLookups: 0, keysMade: 1, keyInvocations: 1 });
  });
});
