import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

// The purity rule is what keeps core/ free of I/O; these cases prove it fires (and stays quiet on pure code).
const eslint = new ESLint({ cwd: new URL("..", import.meta.url).pathname });

async function lintAs(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe("the core/ purity lint rule", () => {
  it.each([
    ["an AWS SDK import", 'import { DynamoDBClient } from "@aws-sdk/client-dynamodb";\nexport const c = DynamoDBClient;', /no-restricted-imports.*core\/ stays pure/],
    ["an sst import", 'import { Resource } from "sst";\nexport const r = Resource;', /no-restricted-imports/],
    ["an openai import", 'import OpenAI from "openai";\nexport const o = OpenAI;', /no-restricted-imports/],
    ["node:fs", 'import { readFileSync } from "node:fs";\nexport const f = readFileSync;', /no-restricted-imports/],
    ["Date.now()", "/** now */\nexport const now = () => Date.now();", /no-restricted-properties.*clock/],
    ["new Date()", "/** now */\nexport const now = () => new Date();", /no-restricted-syntax.*clock/],
    ["Math.random()", "/** id */\nexport const id = () => Math.random();", /no-restricted-properties.*injected source/],
    ["process.env", "/** env */\nexport const env = () => process.env.X;", /no-restricted-syntax.*environment/],
    ["an import of the shell", 'import { startEmulators } from "../../local/emulators.ts";\nexport const s = startEmulators;', /no-restricted-imports.*shell/],
  ])("rejects %s in core/", async (_name, code, expected) => {
    const messages = await lintAs("core/claims/example.ts", code);
    expect(messages.join("\n")).toMatch(expected);
  });

  it("accepts the same code outside core/ and pure code inside it", async () => {
    expect(await lintAs("local/example.ts", 'import { readFileSync } from "node:fs";\nexport const f = () => [readFileSync, Date.now()];')).toEqual([]);
    expect(await lintAs("core/claims/example.ts", "/** doubled */\nexport const double = (n: number) => new Date(n * 2).toISOString();")).toEqual([]);
  });
});
