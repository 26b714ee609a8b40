import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { localOrderSourceSecrets } from "./order-source.ts";

/** The http source's token as the local stack reads it (its only secret, by its link). */
const localOrderApiToken = (env: Record<string, string>) => localOrderSourceSecrets("http", env).OrderApiToken;

describe("the order API token of the local stack", () => {
  it("is the http source's only secret, and the table has none", () => {
    expect(Object.keys(localOrderSourceSecrets("http", { ORDER_API_TOKEN: "t" }))).toEqual(["OrderApiToken"]);
    expect(localOrderSourceSecrets("table", {})).toEqual({});
  });

  const dir = mkdtempSync(join(tmpdir(), "order-token-"));
  const file = join(dir, "token");
  writeFileSync(file, "  from_the_file  \nsecond line\n");

  it("comes from ORDER_API_TOKEN, or the first line of ORDER_API_TOKEN_FILE", () => {
    expect(localOrderApiToken({ ORDER_API_TOKEN: " from_env " })).toBe("from_env");
    expect(localOrderApiToken({ ORDER_API_TOKEN_FILE: file, ORDER_API_TOKEN: "" })).toBe("from_the_file");
  });

  it.each([
    [{}, /ORDER_SOURCE=http needs the order API's token: set ORDER_API_TOKEN, or ORDER_API_TOKEN_FILE/],
    [{ ORDER_API_TOKEN: "a", ORDER_API_TOKEN_FILE: file }, /set ORDER_API_TOKEN or ORDER_API_TOKEN_FILE, not both/],
    [{ ORDER_API_TOKEN_FILE: join(dir, "missing") }, /ORDER_API_TOKEN_FILE=.*missing cannot be read/],
  ])("refuses %o naming what to set", (env, message) => {
    expect(() => localOrderApiToken(env)).toThrow(message);
  });

  it("refuses a file whose first line is empty", () => {
    const empty = join(dir, "empty");
    writeFileSync(empty, "\ntoken on the second line\n");
    expect(() => localOrderApiToken({ ORDER_API_TOKEN_FILE: empty })).toThrow(/its first line is empty/);
  });
});
