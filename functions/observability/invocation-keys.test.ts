// The handler wrappers every deployed function goes through (measured; openingSqsHandler before a queue consumer)
// open one key scope per invocation (adapters/vault/invocation-keys.ts): a claim's key is read once per invocation.
import { describe, expect, it } from "vitest";
import { envelopeVault } from "../../adapters/vault/envelope.ts";
import type { DataKeyStore } from "../../adapters/vault/envelope.ts";
import { rememberedPerInvocation } from "../../adapters/vault/invocation-keys.ts";
import { openingSqsHandler } from "../../adapters/vault/sealed-table.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { measured, NO_METRICS } from "./metrics.ts";
import { randomIds } from "../composition/compose.ts";
import type { KeyLookup } from "../../adapters/vault/invocation-keys.ts";

function countedStore(): DataKeyStore & { reads: number } {
  const key = Buffer.alloc(32, 9);
  const self = {
    reads: 0,
    async key() {
      self.reads += 1;
      return { state: "key" as const, key };
    },
    destroy: async () => "destroyed" as const,
  };
  return self;
}

const noDeps = () => ({}) as PipelineDeps;

describe("a deployed handler's invocation", () => {
  it("reads each claim's key once, however often it seals and opens, and again in the next invocation", async () => {
    const store = countedStore();
    const vault = envelopeVault(rememberedPerInvocation(store), { cacheKeys: false });
    const handler = measured("intakeApi", noDeps, NO_METRICS, () => async (text: string) => {
      const token = await vault.seal("clm_1", text);
      await vault.open(token);
      return vault.seal("clm_1", `${text}!`);
    });
    await handler("the screen is dead");
    expect(store.reads).toBe(1);
    await handler("the screen is dead");
    expect(store.reads).toBe(2);
  });

  it("shares one read between the opening of a queue batch and the consumer it wraps", async () => {
    const store = countedStore();
    const vault = envelopeVault(rememberedPerInvocation(store), { cacheKeys: false });
    const token = await vault.seal("clm_2", "my parcel never came");
    const before = store.reads;
    const consumer = measured("worker", noDeps, NO_METRICS, () => async (event: { Records: { body: string }[] }) => {
      const body = JSON.parse(event.Records[0]!.body) as { note: string };
      return vault.seal("clm_2", body.note);
    });
    const handler = openingSqsHandler(consumer, vault);
    expect(await handler({ Records: [{ body: JSON.stringify({ note: token }) }] }, {})).toBe(token);
    expect(store.reads - before).toBe(1);
  });

  it("makes the key of a claim id its invocation drew without a read first; any other claim's key is read", async () => {
    const key = Buffer.alloc(32, 3);
    const asked: string[] = [];
    const store: DataKeyStore = {
      key: async (subject, opts: KeyLookup) => {
        asked.push(opts.fresh ? "fresh" : "read");
        return { state: "key", key };
      },
      destroy: async () => "destroyed",
    };
    const vault = envelopeVault(rememberedPerInvocation(store), { cacheKeys: false });
    const ids = randomIds();
    const handler = measured("intakeApi", noDeps, NO_METRICS, () => async () => {
      const claimId = ids.next("clm");
      await vault.seal(claimId, "the screen is dead");
      await vault.seal("clm_0123456789abcdef0123456789abcdef", "an older claim's note");
      return claimId;
    });
    const claimId = await handler();
    expect(claimId).toMatch(/^clm_[0-9a-f]{32}$/);
    expect(asked).toEqual(["fresh", "read"]);
  });
});
