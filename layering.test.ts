// The layering lint rules (eslint.config.js) are what keep the tree's architecture true; these cases prove
// each rule fires where STYLE.md says it must, and stays quiet where the import is allowed.
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: new URL(".", import.meta.url).pathname });

async function lintAs(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

const importOf = (spec: string) => `import { x } from "${spec}";\nexport const y = x;`;

describe("the core/ purity rule", () => {
  it.each([
    [
      "an AWS SDK import",
      'import { DynamoDBClient } from "@aws-sdk/client-dynamodb";\nexport const c = DynamoDBClient;',
      /no-restricted-imports.*core\/ stays pure/,
    ],
    ["an sst import", 'import { Resource } from "sst";\nexport const r = Resource;', /no-restricted-imports/],
    ["an openai import", 'import OpenAI from "openai";\nexport const o = OpenAI;', /no-restricted-imports/],
    ["node:fs", 'import { readFileSync } from "node:fs";\nexport const f = readFileSync;', /no-restricted-imports/],
    ["Date.now()", "/** now */\nexport const now = () => Date.now();", /no-restricted-properties.*clock/],
    ["new Date()", "/** now */\nexport const now = () => new Date();", /no-restricted-syntax.*clock/],
    ["Math.random()", "/** id */\nexport const id = () => Math.random();", /no-restricted-properties.*injected source/],
    ["process.env", "/** env */\nexport const env = () => process.env.X;", /no-restricted-syntax.*environment/],
    ["an import of the local stack", importOf("../../local/emulators.ts"), /no-restricted-imports.*shell/],
    ["an import of the application layer", importOf("../../pipeline/ports.ts"), /no-restricted-imports.*shell/],
    ["an import of the report", importOf("../../report/render.ts"), /no-restricted-imports.*shell/],
  ])("rejects %s in core/", async (_name, code, expected) => {
    expect((await lintAs("core/claims/example.ts", code)).join("\n")).toMatch(expected);
  });

  it("accepts pure code inside core/, and the same impure code outside it", async () => {
    expect(
      await lintAs(
        "core/claims/example.ts",
        "/** doubled */\nexport const double = (n: number) => new Date(n * 2).toISOString();",
      ),
    ).toEqual([]);
    expect(
      await lintAs(
        "local/example.ts",
        'import { readFileSync } from "node:fs";\nexport const f = () => [readFileSync, Date.now()];',
      ),
    ).toEqual([]);
  });
});

describe("the shell's layering rules", () => {
  it.each([
    ["functions/kernel.ts", "../local/stack.ts", /functions\/ is deployed/],
    ["functions/lib/compose.ts", "../../cli/batch.ts", /functions\/ is deployed/],
    ["functions/kernel.ts", "../bench/harness.ts", /functions\/ is deployed/],
    ["adapters/aws/table.ts", "../../local/emulators.ts", /adapters\/ implement ports/],
    ["adapters/aws/table.ts", "../../cli/main.ts", /adapters\/ implement ports/],
    ["adapters/aws/table.ts", "../../bench/harness.ts", /adapters\/ implement ports/],
    ["adapters/aws/eventbridge-publisher.ts", "../../infra/facts.ts", /adapters\/ implement ports/],
    ["adapters/llm/openai.ts", "../../functions/lib/llm.ts", /adapters\/ implement ports/],
    ["pipeline/kernel-service.ts", "../adapters/aws/index.ts", /pipeline\/ depends only on core/],
    ["pipeline/intake.ts", "../infra/facts.ts", /pipeline\/ depends only on core/],
    ["pipeline/intake.ts", "@aws-sdk/client-sqs", /pipeline\/ works through its ports/],
    ["report/render.ts", "node:fs", /report\/ is pure rendering/],
    ["report/render.ts", "../pipeline/in-process.ts", /report\/ renders from core/],
    ["infra/facts.ts", "../functions/lib/resources.ts", /infra\/facts.ts depends only on core/],
    ["infra/policy.ts", "../functions/lib/policy.ts", /infra\/ depends only on core\/: functions\/ and local\/ import/],
    ["infra/lambda.ts", "../local/stack.ts", /infra\/ depends only on core\/: functions\/ and local\/ import/],
    ["infra/metrics-catalog.ts", "../functions/lib/metrics.ts", /infra\/facts.ts depends only on core/],
    ["local/stack.ts", "../cli/batch.ts", /local\/ is the embedded stack/],
    ["local/stack.ts", "../chaos/flow.ts", /local\/ is the embedded stack/],
    ["functions/kernel.ts", "../chaos/flow.ts", /functions\/ is deployed/],
    ["pipeline/intake.ts", "../chaos/flow.ts", /pipeline\/ depends only on core/],
    ["chaos/flow.ts", "../cli/main.ts", /chaos\/ drives the service from the outside/],
    ["chaos/flow.ts", "../bench/run.ts", /chaos\/ drives the service from the outside/],
  ])("rejects %s importing %s", async (file, spec, expected) => {
    expect((await lintAs(file, importOf(spec))).join("\n")).toMatch(expected);
  });

  it("keeps infra/facts.ts free of SST globals", async () => {
    expect((await lintAs("infra/facts.ts", "export const stage = $app.stage;")).join("\n")).toMatch(
      /no-restricted-globals.*SST-free/,
    );
    expect((await lintAs("infra/facts.ts", 'export const q = new sst.aws.Queue("Q");')).join("\n")).toMatch(
      /no-restricted-globals.*SST-free/,
    );
  });

  it.each([
    ["functions/kernel.ts", "../pipeline/kernel-service.ts"],
    ["functions/lib/intake-routes.ts", "../../report/render.ts"],
    ["functions/lib/resources.ts", "../../infra/facts.ts"],
    ["adapters/aws/dynamo-claims.ts", "../../pipeline/ports.ts"],
    ["local/stack.ts", "../functions/kernel.ts"],
    ["local/stack.ts", "../infra/facts.ts"],
    ["functions/lib/policy.ts", "../../infra/policy-format.ts"],
    ["infra/policy.ts", "../core/claims/config.ts"],
    ["cli/main.ts", "../local/stack.ts"],
    ["pipeline/intake.ts", "../core/claims/claim.ts"],
    ["functions/kernel.test.ts", "../local/stack-fixture.ts"],
    ["chaos/flow.ts", "../functions/kernel.ts"],
    ["chaos/emulators.ts", "../local/stack.ts"],
  ])("allows %s to import %s", async (file, spec) => {
    expect(await lintAs(file, importOf(spec))).toEqual([]);
  });
});

describe("the deciders' purity rule", () => {
  it.each([
    ["pipeline/decide/intake.ts", "../perform.ts"],
    ["pipeline/decide/kernel-decision.ts", "../ports.ts"],
    ["pipeline/decide/review-decision.ts", "../deps.ts"],
    ["pipeline/decide/crew-completion.ts", "../intake.ts"],
    ["pipeline/decide/needs-review.ts", "../in-memory.ts"],
  ])("rejects %s importing %s at run time", async (file, spec) => {
    expect((await lintAs(file, importOf(spec))).join("\n")).toMatch(
      /no-restricted-imports.*pipeline\/decide\/ is pure/,
    );
  });

  it("rejects a decider reading the clock itself", async () => {
    expect(
      (await lintAs("pipeline/decide/intake.ts", "/** now */\nexport const now = () => new Date();")).join("\n"),
    ).toMatch(/no-restricted-syntax.*takes the time as an argument/);
  });

  it.each([
    [
      "pipeline/decide/kernel-decision.ts",
      'import type { StoredVerdict } from "../ports.ts";\nexport type S = StoredVerdict;',
    ],
    [
      "pipeline/decide/kernel-decision.ts",
      'import type { PipelineDeps } from "../deps.ts";\nexport type D = PipelineDeps;',
    ],
    ["pipeline/decide/needs-review.ts", importOf("../audit-events.ts")],
    ["pipeline/decide/review-decision.ts", importOf("./needs-review.ts")],
    ["pipeline/decide/intake.ts", importOf("../../core/claims/claim.ts")],
    ["pipeline/kernel-service.ts", importOf("./perform.ts")],
    ["pipeline/decide/intake.test.ts", importOf("../in-memory.ts")],
  ])("allows %s: %s", async (file, code) => {
    expect(await lintAs(file, code)).toEqual([]);
  });
});
