// Typed, validated reads of SST links (`Resource.<Name>`): the only place handlers learn resource names.
// Each read happens when a port first needs it, so a function only touches the links it was given.
import { Resource } from "sst";
import * as z from "zod";
import { ResourceLinkError } from "./errors.ts";

/** Reads the raw link properties of `Resource.<name>` (throws when the link is absent). */
export type ResourceReader = (name: string) => unknown;

/** The SST reader: `Resource.<name>` from the `sst` package (SST_RESOURCE_* variables locally). */
export const sstResources: ResourceReader = (name) => (Resource as unknown as Record<string, unknown>)[name];

const Named = z.object({ name: z.string().min(1) });
const Queue = z.object({ url: z.string().regex(/^https?:\/\/\S+$/) });
const Secret = z.object({ value: z.string().min(1) });

function read<T>(reader: ResourceReader, name: string, schema: z.ZodType<T>, what: string): T {
  let raw: unknown;
  try {
    raw = reader(name);
  } catch (cause) {
    throw new ResourceLinkError(`Resource.${name} is not available to this function (link it in infra/): ${(cause as Error).message}`, { cause });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ResourceLinkError(`Resource.${name} must carry ${what}, got ${raw === undefined ? "nothing" : "other properties"}`);
  return parsed.data;
}

/** The link names the handlers use, as declared in infra/ (queues.ts, storage.ts, bus.ts, secrets.ts). */
export const LINKS = {
  table: "Table",
  bus: "Bus",
  llmApiKey: "LlmApiKey",
  apiToken: "ApiToken",
  queues: {
    crewEvents: "CrewEventsQueue",
    agentSteps: "AgentStepsQueue",
    proposals: "ProposalsQueue",
    extraction: "ExtractionQueue",
    timers: "TimersQueue",
  },
} as const;

/** A work queue by its role. */
export type QueueRole = keyof typeof LINKS.queues;

/** Accessors over a reader: each call reads and validates one link. */
export function linkedResources(reader: ResourceReader = sstResources) {
  return {
    tableName: () => read(reader, LINKS.table, Named, "{ name }").name,
    busName: () => read(reader, LINKS.bus, Named, "{ name }").name,
    queueUrl: (role: QueueRole) => read(reader, LINKS.queues[role], Queue, "{ url }").url,
    secret: (name: typeof LINKS.llmApiKey | typeof LINKS.apiToken) => read(reader, name, Secret, "{ value }").value,
  };
}

/** The accessors' type. */
export type LinkedResources = ReturnType<typeof linkedResources>;

/** The links each function gets in infra/ (functions.ts, api.ts, schedules.ts): a handler may read only these. */
export const FUNCTION_LINKS = {
  "intake-api": [LINKS.table, LINKS.queues.extraction, LINKS.queues.crewEvents],
  authorizer: [LINKS.apiToken],
  "intake-extract": [LINKS.table, LINKS.queues.crewEvents, LINKS.llmApiKey, LINKS.bus],
  orchestrator: [LINKS.table, LINKS.queues.agentSteps, LINKS.queues.proposals, LINKS.queues.timers, LINKS.bus],
  worker: [LINKS.table, LINKS.queues.crewEvents, LINKS.llmApiKey],
  kernel: [LINKS.table, LINKS.bus],
  timer: [LINKS.queues.crewEvents, LINKS.queues.timers],
  sweep: [LINKS.table, LINKS.queues.crewEvents, LINKS.queues.extraction],
  batch: [LINKS.table, LINKS.queues.extraction, LINKS.queues.crewEvents],
} as const satisfies Record<string, readonly string[]>;

/** A function of the app, by its handler file name. */
export type FunctionName = keyof typeof FUNCTION_LINKS;

/** A reader that refuses names a function is not linked to, as `Resource` does on AWS. */
export function restrictedReader(base: ResourceReader, fn: FunctionName): ResourceReader {
  const allowed: readonly string[] = FUNCTION_LINKS[fn];
  return (name) => {
    if (!allowed.includes(name)) throw new Error(`"${name}" is not linked to functions/${fn}.handler (its links: ${allowed.join(", ")})`);
    return base(name);
  };
}
