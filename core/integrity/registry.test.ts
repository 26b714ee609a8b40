import { describe, expect, it } from "vitest";
import { ResponsibilityContractSchema } from "./contracts.ts";
import {
  createAgentRegistry,
  findRegisteredAgent,
  handshakeAgent,
  emptyRegistry,
  parseSemver,
  type HandshakeErrorCode,
} from "./registry.ts";

const contract = {
  agent_id: "claims_agent_v1",
  role: "EXECUTOR",
  allowed_policy_types: ["REFUND", "REPLACE", "ESCALATE"],
  escalate_on_uncertainty: 0.7,
};

describe("handshake", () => {
  it.each([["1.0.0"], ["1.2.3"], ["1.10.0"], ["1.0.1-beta.1"], ["1.3.0-rc.2"], ["1.2.3+build.7"], ["1.0.0+sha.abc"]])(
    "accepts version %s",
    (version) => {
      const registry = createAgentRegistry({ acceptedMajor: 1 });
      expect(registry.handshake({ agent_id: "claims_agent_v1", version, contract })).toMatchObject({
        ok: true,
        agent: { version, status: "ACTIVE" },
      });
      expect(findRegisteredAgent(registry, "claims_agent_v1")?.contract).toEqual(
        ResponsibilityContractSchema.parse(contract),
      );
    },
  );

  it.each<[string, HandshakeErrorCode]>([
    ["2.0.0", "INCOMPATIBLE_VERSION"],
    ["0.9.0", "INCOMPATIBLE_VERSION"],
    ["1.0.0-rc.1", "INCOMPATIBLE_VERSION"],
    ["2.0.0-alpha", "INCOMPATIBLE_VERSION"],
    ["0.9", "INVALID_VERSION"],
    ["banana", "INVALID_VERSION"],
    ["1", "INVALID_VERSION"],
    ["1.0", "INVALID_VERSION"],
    ["v1.0.0", "INVALID_VERSION"],
    ["01.0.0", "INVALID_VERSION"],
    ["1.0.0-", "INVALID_VERSION"],
    ["1.0.0-01", "INVALID_VERSION"],
    ["", "INVALID_VERSION"],
    [" 1.0.0", "INVALID_VERSION"],
  ])("refuses version %j with %s and registers nothing", (version, code) => {
    const registry = createAgentRegistry({ acceptedMajor: 1 });
    const result = registry.handshake({ agent_id: "claims_agent_v1", version, contract });
    expect(result).toMatchObject({ ok: false, code });
    if (!result.ok) expect(result.message).toContain("claims_agent_v1");
    expect(registry.agents).toEqual({});
  });

  it("refuses a version that is not a string", () => {
    const registry = createAgentRegistry({ acceptedMajor: 1 });
    expect(
      registry.handshake({ agent_id: "a", version: 1 as unknown as string, contract: { ...contract, agent_id: "a" } }),
    ).toMatchObject({ ok: false, code: "INVALID_VERSION" });
  });

  it.each([
    ["a contract without allowed_policy_types", { ...contract, allowed_policy_types: undefined }],
    ["an unknown policy type", { ...contract, allowed_policy_types: ["REFUND", "DELETE_DB"] }],
    ["an unknown field", { ...contract, superuser: true }],
    ["a contract naming another agent", { ...contract, agent_id: "someone_else" }],
    ["no contract", undefined],
  ])("refuses %s as INVALID_CONTRACT", (_name, bad) => {
    const registry = createAgentRegistry({ acceptedMajor: 1 });
    expect(registry.handshake({ agent_id: "claims_agent_v1", version: "1.0.0", contract: bad })).toMatchObject({
      ok: false,
      code: "INVALID_CONTRACT",
    });
  });

  it("refuses an empty agent id", () => {
    expect(
      createAgentRegistry({ acceptedMajor: 1 }).handshake({ agent_id: "", version: "1.0.0", contract }),
    ).toMatchObject({ ok: false, code: "INVALID_CONTRACT" });
  });

  it("repeating the identical handshake succeeds; another version or contract under the same id is DUPLICATE_AGENT", () => {
    const registry = createAgentRegistry({ acceptedMajor: 1 });
    expect(registry.handshake({ agent_id: "claims_agent_v1", version: "1.0.0", contract }).ok).toBe(true);
    expect(registry.handshake({ agent_id: "claims_agent_v1", version: "1.0.0", contract }).ok).toBe(true);
    expect(registry.handshake({ agent_id: "claims_agent_v1", version: "1.1.0", contract })).toMatchObject({
      ok: false,
      code: "DUPLICATE_AGENT",
    });
    expect(
      registry.handshake({
        agent_id: "claims_agent_v1",
        version: "1.0.0",
        contract: { ...contract, escalate_on_uncertainty: 0.1 },
      }),
    ).toMatchObject({ ok: false, code: "DUPLICATE_AGENT" });
    expect(findRegisteredAgent(registry, "claims_agent_v1")?.version).toBe("1.0.0");
  });

  it("a revoked agent stays known and cannot re-register", () => {
    const registry = createAgentRegistry({ acceptedMajor: 1 });
    registry.handshake({ agent_id: "claims_agent_v1", version: "1.0.0", contract });
    registry.revoke("claims_agent_v1");
    expect(findRegisteredAgent(registry, "claims_agent_v1")?.status).toBe("REVOKED");
    expect(registry.handshake({ agent_id: "claims_agent_v1", version: "1.0.0", contract })).toMatchObject({
      ok: false,
      code: "DUPLICATE_AGENT",
    });
  });

  it("is pure on snapshots and the snapshot round-trips through JSON", () => {
    const empty = emptyRegistry(1);
    const { result, snapshot } = handshakeAgent(empty, { agent_id: "claims_agent_v1", version: "1.0.0", contract });
    expect(result.ok).toBe(true);
    expect(empty.agents).toEqual({});
    const revived = createAgentRegistry({ acceptedMajor: 1, snapshot: JSON.parse(JSON.stringify(snapshot)) });
    expect(revived.snapshot()).toEqual(snapshot);
    expect(() => createAgentRegistry({ acceptedMajor: 2, snapshot })).toThrow(/major 1/);
  });

  it("finds no agent through inherited names", () => {
    const registry = createAgentRegistry({ acceptedMajor: 1 });
    expect(findRegisteredAgent(registry, "constructor")).toBeUndefined();
    expect(findRegisteredAgent(registry, "__proto__")).toBeUndefined();
  });
});

describe("parseSemver", () => {
  it("splits prerelease and build", () => {
    expect(parseSemver("1.2.3-rc.1+b.5")).toEqual({
      major: 1,
      minor: 2,
      patch: 3,
      prerelease: ["rc", "1"],
      build: ["b", "5"],
    });
  });
});
