// Tokens come from the environment or a file; a token the server accepts has at least 16 characters, and an
// empty variable counts as unset.
import { describe, expect, it } from "vitest";
import { serverToken, tokenFromEnv } from "./tokens.ts";
import { TokenConfigError } from "./errors.ts";

describe("server tokens", () => {
  it("treats an empty or blank variable as unset", () => {
    expect(serverToken("CLAIMS_API_TOKEN", { CLAIMS_API_TOKEN: "" })).toBeUndefined();
    expect(serverToken("CLAIMS_API_TOKEN", { CLAIMS_API_TOKEN: "   " })).toBeUndefined();
    expect(tokenFromEnv("CLAIMS_API_TOKEN", {})).toBeUndefined();
  });

  it("accepts 16 characters and refuses 15 with a configuration error naming the variable", () => {
    expect(serverToken("CLAIMS_API_TOKEN", { CLAIMS_API_TOKEN: " 0123456789abcdef " })).toBe("0123456789abcdef");
    expect(() => serverToken("CLAIMS_REVIEWER_TOKEN", { CLAIMS_REVIEWER_TOKEN: "0123456789abcde" })).toThrow(
      /CLAIMS_REVIEWER_TOKEN is 15 characters long/,
    );
    expect(() => serverToken("CLAIMS_API_TOKEN", { CLAIMS_API_TOKEN: "short" })).toThrow(TokenConfigError);
  });

  it("refuses a token with a space or a control character inside", () => {
    expect(() => serverToken("CLAIMS_API_TOKEN", { CLAIMS_API_TOKEN: "0123456789 abcdef" })).toThrow(/one word/);
    expect(() => serverToken("CLAIMS_API_TOKEN", { CLAIMS_API_TOKEN: "0123456789\u0007abcdef" })).toThrow(/one word/);
  });
});
