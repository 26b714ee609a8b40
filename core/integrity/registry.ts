// Agent registry handshake: an agent registers with its contract and a semver version; the registry is plain data.
import * as z from "zod";
import { canonicalize } from "../crew/canonical.ts";
import { ResponsibilityContractSchema, type ResponsibilityContract } from "./contracts.ts";

/** Why a handshake was refused. */
export type HandshakeErrorCode = "INCOMPATIBLE_VERSION" | "INVALID_VERSION" | "INVALID_CONTRACT" | "DUPLICATE_AGENT";

/** A registered agent: its id, the version it announced, the contract it registered with, and whether it may still act. */
type RegisteredAgent = {
  agent_id: string;
  version: string;
  contract: ResponsibilityContract;
  status: "ACTIVE" | "REVOKED";
};

/** What the kernel reads from a registry: registered agents by id (plain data, JSON round-trips). */
export type RegistryView = { readonly agents: Readonly<Record<string, RegisteredAgent>> };

/** The whole registry as plain data. */
type RegistrySnapshot = { accepted_major: number; agents: Record<string, RegisteredAgent> };

/** An agent's handshake: its id, its semver version and its responsibility contract (validated here). */
type HandshakeRequest = { agent_id: string; version: string; contract: unknown };

/** The handshake answer: registered, or refused with a stable code and a message naming the problem. */
export type HandshakeResult =
  | { ok: true; agent: RegisteredAgent }
  | { ok: false; code: HandshakeErrorCode; message: string };

/** A parsed semantic version (semver 2.0.0); build metadata is kept but never affects compatibility. */
type Semver = { major: number; minor: number; patch: number; prerelease: string[]; build: string[] };

// The regular expression of semver.org, anchored; numeric parts without leading zeros.
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Parses a full `MAJOR.MINOR.PATCH[-prerelease][+build]` version; `undefined` for anything else ("0.9", "v1.0.0", "banana"). */
export function parseSemver(version: string): Semver | undefined {
  if (typeof version !== "string" || version.length > 256) return undefined;
  const m = SEMVER.exec(version);
  if (!m) return undefined;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined;
  return { major, minor, patch, prerelease: m[4] ? m[4].split(".") : [], build: m[5] ? m[5].split(".") : [] };
}

/**
 * Whether a version honours contract major `acceptedMajor`. Rules: the major must equal it; a prerelease
 * of a later release in that major is accepted (`1.3.0-beta.2`), but a prerelease of `M.0.0` itself is
 * refused because it precedes the first release of the major (`1.0.0-rc.1` < `1.0.0`); build metadata
 * is ignored (`1.2.3+sha.abc` is `1.2.3`).
 */
function isCompatibleVersion(v: Semver, acceptedMajor: number): boolean {
  if (v.major !== acceptedMajor) return false;
  return !(v.prerelease.length > 0 && v.minor === 0 && v.patch === 0);
}

/** An empty registry snapshot accepting agents of contract major `acceptedMajor`. */
export function emptyRegistry(acceptedMajor: number): RegistrySnapshot {
  if (!Number.isSafeInteger(acceptedMajor) || acceptedMajor < 0)
    throw new RangeError(`acceptedMajor must be a non-negative integer, got ${String(acceptedMajor)}`);
  return { accepted_major: acceptedMajor, agents: {} };
}

/** The registered agent with this id, if any (own members only, so "constructor" is never an agent by accident). */
export function findRegisteredAgent(view: RegistryView, agentId: string): RegisteredAgent | undefined {
  return Object.hasOwn(view.agents, agentId) ? view.agents[agentId] : undefined;
}

/**
 * Pure handshake: validates version and contract and returns the answer with the next snapshot (the same
 * snapshot when refused). Checks run in this order: version syntax, version compatibility, contract
 * (schema, and `contract.agent_id` equal to `agent_id`), duplicates. Repeating the identical handshake of
 * an active agent succeeds and changes nothing (cold starts re-register); any other handshake for a known
 * id — another version, another contract, or a revoked agent — is `DUPLICATE_AGENT`.
 */
export function handshakeAgent(
  snapshot: RegistrySnapshot,
  request: HandshakeRequest,
): { result: HandshakeResult; snapshot: RegistrySnapshot } {
  const refuse = (code: HandshakeErrorCode, message: string) => ({
    result: { ok: false as const, code, message },
    snapshot,
  });
  const agentId = request?.agent_id;
  if (typeof agentId !== "string" || agentId.trim() === "")
    return refuse("INVALID_CONTRACT", "agent_id must be a non-empty string");
  const version = parseSemver(request.version);
  if (!version) {
    return refuse(
      "INVALID_VERSION",
      `agent ${agentId}: version ${JSON.stringify(request.version)} is not a semantic version MAJOR.MINOR.PATCH (e.g. 1.0.0)`,
    );
  }
  if (!isCompatibleVersion(version, snapshot.accepted_major)) {
    return refuse(
      "INCOMPATIBLE_VERSION",
      `agent ${agentId}: version ${request.version} is incompatible; this registry accepts ${snapshot.accepted_major}.x.y releases (${snapshot.accepted_major}.0.0 or later)`,
    );
  }
  const contract = ResponsibilityContractSchema.safeParse(request.contract);
  if (!contract.success)
    return refuse("INVALID_CONTRACT", `agent ${agentId}: contract is invalid: ${z.prettifyError(contract.error)}`);
  if (contract.data.agent_id !== agentId) {
    return refuse(
      "INVALID_CONTRACT",
      `agent ${agentId}: contract.agent_id is ${JSON.stringify(contract.data.agent_id)}; it must name the registering agent`,
    );
  }
  const existing = findRegisteredAgent(snapshot, agentId);
  if (existing) {
    const same =
      existing.status === "ACTIVE" &&
      existing.version === request.version &&
      canonicalize(existing.contract) === canonicalize(contract.data);
    if (same) return { result: { ok: true, agent: existing }, snapshot };
    const why = existing.status === "REVOKED" ? "was revoked" : `is already registered (version ${existing.version})`;
    return refuse("DUPLICATE_AGENT", `agent ${agentId} ${why}; a different registration under the same id is refused`);
  }
  const agent: RegisteredAgent = {
    agent_id: agentId,
    version: request.version,
    contract: contract.data,
    status: "ACTIVE",
  };
  return {
    result: { ok: true, agent },
    snapshot: { accepted_major: snapshot.accepted_major, agents: withMember(snapshot.agents, agentId, agent) },
  };
}

/** Pure revocation: the agent stays known (so its id cannot be re-registered) but is no longer authorised. */
function revokeAgent(snapshot: RegistrySnapshot, agentId: string): RegistrySnapshot {
  const existing = findRegisteredAgent(snapshot, agentId);
  if (!existing || existing.status === "REVOKED") return snapshot;
  return {
    accepted_major: snapshot.accepted_major,
    agents: withMember(snapshot.agents, agentId, { ...existing, status: "REVOKED" }),
  };
}

/** A registry holding its snapshot; it is itself a `RegistryView`, so it can be handed to the kernel directly. */
export type AgentRegistry = RegistryView & {
  handshake(request: HandshakeRequest): HandshakeResult;
  revoke(agentId: string): void;
  snapshot(): RegistrySnapshot;
};

/** Creates a registry accepting contract major `acceptedMajor`, optionally starting from a stored snapshot. */
export function createAgentRegistry(options: { acceptedMajor: number; snapshot?: RegistrySnapshot }): AgentRegistry {
  let state: RegistrySnapshot = options.snapshot
    ? structuredClone(options.snapshot)
    : emptyRegistry(options.acceptedMajor);
  if (state.accepted_major !== options.acceptedMajor) {
    throw new RangeError(`registry snapshot accepts major ${state.accepted_major}, not ${options.acceptedMajor}`);
  }
  return {
    get agents() {
      return state.agents;
    },
    handshake(request) {
      const next = handshakeAgent(state, request);
      state = next.snapshot;
      return next.result;
    },
    revoke(agentId) {
      state = revokeAgent(state, agentId);
    },
    snapshot() {
      return structuredClone(state);
    },
  };
}

function withMember<T>(record: Record<string, T>, key: string, value: T): Record<string, T> {
  const next = { ...record };
  Object.defineProperty(next, key, { value: deepFreeze(value), enumerable: true, writable: true, configurable: true });
  return Object.freeze(next);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
