// The key states remembered for one handler invocation: one read of a subject's key per invocation, none shared
// between invocations, nothing remembered outside one or after it ended.
import { describe, expect, it } from "vitest";
import type { DataKeyState, DataKeyStore } from "./envelope.ts";
import { envelopeVault } from "./envelope.ts";
import {
  inKeyInvocation,
  keyInvocationHandler,
  newSubjectInInvocation,
  rememberedPerInvocation,
} from "./invocation-keys.ts";
import type { KeyLookup } from "./invocation-keys.ts";

/** Keys in memory, each read counted by subject. */
function countingStore(): DataKeyStore & { reads: string[] } {
  const keys = new Map<string, Buffer | "erased">();
  const reads: string[] = [];
  return {
    reads,
    async key(subject, { create }): Promise<DataKeyState> {
      reads.push(subject);
      await Promise.resolve();
      const kept = keys.get(subject);
      if (kept === "erased") return { state: "erased" };
      if (kept) return { state: "key", key: kept };
      if (!create) return { state: "none" };
      const key = Buffer.alloc(32, reads.length);
      keys.set(subject, key);
      return { state: "key", key };
    },
    async destroy(subject) {
      const had = keys.get(subject);
      keys.set(subject, "erased");
      return had === undefined ? "unknown" : had === "erased" ? "already_erased" : "destroyed";
    },
  };
}

describe("a store remembered per invocation", () => {
  it("reads each subject's key once per invocation, concurrent lookups sharing the read", async () => {
    const store = countingStore();
    const vault = envelopeVault(rememberedPerInvocation(store), { cacheKeys: false });
    await inKeyInvocation(async () => {
      const tokens = await Promise.all([vault.seal("clm_1", "a"), vault.seal("clm_1", "b"), vault.seal("clm_2", "c")]);
      for (const t of tokens) await vault.open(t);
    });
    expect(store.reads.sort()).toEqual(["clm_1", "clm_2"]);
    await inKeyInvocation(async () => {
      await vault.seal("clm_1", "again");
      await vault.seal("clm_1", "and again");
    });
    expect(store.reads.filter((s) => s === "clm_1")).toHaveLength(2);
  });

  it("reads the store on every use outside an invocation, and after the invocation ended", async () => {
    const store = countingStore();
    const vault = envelopeVault(rememberedPerInvocation(store), { cacheKeys: false });
    await vault.seal("clm_1", "a");
    await vault.seal("clm_1", "b");
    expect(store.reads).toHaveLength(2);
    let leftRunning: (() => Promise<unknown>) | undefined;
    await inKeyInvocation(async () => {
      await vault.seal("clm_1", "c");
      leftRunning = () => vault.seal("clm_1", "d"); // work the invocation left behind (a timer, a lazy loop)
    });
    await leftRunning?.();
    expect(store.reads).toHaveLength(4);
  });

  it("does not remember 'none': a later lookup in the invocation may make the key", async () => {
    const store = countingStore();
    const remembered = rememberedPerInvocation(store);
    await inKeyInvocation(async () => {
      expect(await remembered.key("clm_n", { create: false })).toEqual({ state: "none" });
      expect((await remembered.key("clm_n", { create: true })).state).toBe("key");
      expect((await remembered.key("clm_n", { create: false })).state).toBe("key");
    });
    expect(store.reads).toEqual(["clm_n", "clm_n"]);
  });

  it("shares the opening's scope with the handler it wraps (handOn), and gives a handler called inside another its own", async () => {
    const store = countingStore();
    const vault = envelopeVault(rememberedPerInvocation(store), { cacheKeys: false });
    const inner = keyInvocationHandler(async () => vault.seal("clm_h", "inner"));
    // openingSqsHandler's shape: opening records, then the (measured) handler it wraps: one invocation.
    await keyInvocationHandler(
      async () => {
        await vault.seal("clm_h", "opening");
        await inner();
      },
      { handOn: true },
    )();
    expect(store.reads).toEqual(["clm_h"]);
    // A handler invoked from inside another handler's invocation (not handed on): its own scope, its own read.
    await keyInvocationHandler(async () => {
      await vault.seal("clm_h", "outer");
      await inner();
    })();
    expect(store.reads).toEqual(["clm_h", "clm_h", "clm_h"]);
  });

  it("asks for a fresh key only for a subject its own invocation drew, once, and only when the lookup may make it", async () => {
    const store = countingStore();
    const asked: string[] = [];
    const spy: DataKeyStore = {
      key: (subject, opts: KeyLookup) => {
        asked.push(`${subject}${opts.fresh ? " fresh" : ""}${opts.create ? " create" : ""}`);
        return store.key(subject, opts);
      },
      destroy: (subject) => store.destroy(subject),
    };
    const remembered = rememberedPerInvocation(spy);
    newSubjectInInvocation("clm_outside"); // outside an invocation: nothing to tell
    await inKeyInvocation(async () => {
      newSubjectInInvocation("clm_new");
      expect(await remembered.key("clm_new", { create: false })).toEqual({ state: "none" }); // an open: no key made
      expect((await remembered.key("clm_new", { create: true })).state).toBe("key");
      await remembered.key("clm_old", { create: true });
      await remembered.key("clm_outside", { create: true });
    });
    await inKeyInvocation(async () => {
      await remembered.key("clm_new", { create: true }); // another invocation: the subject is not new to it
    });
    expect(asked).toEqual([
      "clm_new",
      "clm_new fresh create",
      "clm_old create",
      "clm_outside create",
      "clm_new create",
    ]);
  });
});
