import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ERASED } from "../core/privacy/sealing.ts";
import { keyFileStore, servedVault } from "../adapters/vault/key-files.ts";
import { checkedKeyFileStore, servedLocalVault } from "./key-store.ts";

const dirs: string[] = [];
const keysDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "claims-key-store-"));
  dirs.push(dir);
  return join(dir, "keys");
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("serve's kept data keys", () => {
  it("seal and open as the key files do, the tokens of each readable by the other", async () => {
    const dir = keysDir();
    const kept = servedLocalVault(dir);
    const files = servedVault(dir);
    const token = await kept.seal("clm_1", "The screen is dead");
    expect(token).toEqual(await files.seal("clm_1", "The screen is dead"));
    expect(await files.open(token)).toBe("The screen is dead");
    expect(await kept.open(await files.seal("clm_1", "It was broken"))).toBe("It was broken");
  });

  it("forget a key another process erased, at the next use", async () => {
    const dir = keysDir();
    const kept = servedLocalVault(dir);
    const token = await kept.seal("clm_2", "my words");
    expect(await kept.open(token)).toBe("my words"); // read and kept
    // `claims erase` in another process: the key files' own store on the same directory.
    expect(await keyFileStore(dir).destroy("clm_2")).toBe("destroyed");
    expect(await kept.open(token)).toBeUndefined();
    expect(await kept.seal("clm_2", "more words")).toBe(ERASED);
    // Other claims' keys are untouched.
    const other = await kept.seal("clm_3", "still here");
    expect(await kept.open(other)).toBe("still here");
  });

  it("reads the key again when its file is another one than the key kept", async () => {
    const dir = keysDir();
    const store = checkedKeyFileStore(dir);
    const first = await store.key("clm_4", { create: true });
    expect(first.state).toBe("key");
    // The file replaced (a new inode): never done by the product, but the kept key must not outlive its file.
    const files = keyFileStore(dir);
    expect(await files.destroy("clm_4")).toBe("destroyed");
    expect(await store.key("clm_4", { create: true })).toEqual({ state: "erased" });
  });
});
