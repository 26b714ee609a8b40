// The policy's retention reaches the deployed sweep: `retention.customer_text_days` is carried into the pre-parsed
// policy JSON the deploy ships (app/policy-format.ts) and read back by the functions; a policy without it keeps none.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { policyFromConfig } from "../../app/policy-format.ts";
import { CONFIG_PATH, TEST_NOW } from "../../local/testing/stack-fixture.ts";
import { loadConfig } from "./config-file.ts";
import { loadPolicyFile } from "./policy.ts";

describe("the deployed policy's retention", () => {
  it("carries retention.customer_text_days from the policy file to the functions, and nothing when it is not set", () => {
    const dir = mkdtempSync(join(tmpdir(), "policy-retention-"));
    try {
      const text = readFileSync(CONFIG_PATH, "utf8");
      const config = loadConfig(CONFIG_PATH, TEST_NOW);
      const shipped = (retention?: { customerTextDays: number }) => {
        const path = join(dir, "claims-policy.json");
        const policy = policyFromConfig({ ...config, ...(retention ? { retention } : {}) }, text, {
          source: CONFIG_PATH,
          demo: false,
        });
        writeFileSync(path, JSON.stringify(policy));
        return loadPolicyFile(path);
      };
      expect(shipped({ customerTextDays: 365 }).retention).toEqual({ customerTextDays: 365 });
      expect(shipped().retention).toBeUndefined();
      expect(config.retention).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
