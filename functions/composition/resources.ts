// Typed, validated reads of SST links (`Resource.<Name>`, names from app/manifest.ts): the only place handlers read them.
// Each read happens when a port first needs it, so a function only touches the links it was given.
import { Resource } from "sst";
import * as z from "zod";
import { FUNCTIONS, LINKS, linksOf } from "../../app/manifest.ts";
import type { FunctionKey, QueueRole } from "../../app/manifest.ts";
import type { LinkedChoices } from "../../app/manifest.ts";
import type { OrderSourceSecretLink } from "../../app/order-source.ts";
import type { ProviderSecretLink } from "../../app/payment-provider.ts";
import { ResourceLinkError } from "./errors.ts";

/** Reads the raw link properties of `Resource.<name>` (throws when the link is absent). */
type ResourceReader = (name: string) => unknown;

/** The SST reader: `Resource.<name>` from the `sst` package (SST_RESOURCE_* variables locally). */
export const sstResources: ResourceReader = (name) => (Resource as unknown as Record<string, unknown>)[name];

const Named = z.object({ name: z.string().min(1) });
const Queue = z.object({ url: z.string().regex(/^https?:\/\/\S+$/) });
const Secret = z.object({ value: z.string().min(1) });
const KmsKey = z.object({ keyId: z.string().min(1) });

function read<T>(reader: ResourceReader, name: string, schema: z.ZodType<T>, what: string): T {
  let raw: unknown;
  try {
    raw = reader(name);
  } catch (cause) {
    throw new ResourceLinkError(
      `Resource.${name} is not available to this function (link it in infra/): ${(cause as Error).message}`,
      { cause },
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new ResourceLinkError(
      `Resource.${name} must carry ${what}, got ${raw === undefined ? "nothing" : "other properties"}`,
    );
  return parsed.data;
}

/** Whether reading `name` failed because the function is not linked to it (SST's Resource throws for those). */
function linked(reader: ResourceReader, name: string): boolean {
  try {
    return reader(name) !== undefined;
  } catch {
    return false;
  }
}

/** Accessors over a reader: each call reads and validates one link. */
export function linkedResources(reader: ResourceReader = sstResources) {
  return {
    tableName: () => read(reader, LINKS.table, Named, "{ name }").name,
    busName: () => read(reader, LINKS.bus, Named, "{ name }").name,
    queueUrl: (role: QueueRole) => read(reader, LINKS.queues[role], Queue, "{ url }").url,
    /**
     * The stage's KMS key of personal data (its ARN), or undefined for a function not linked to it: only the functions
     * that write no personal data (the authorizer, the timer) are not (app/functions.ts). A link of another shape throws.
     */
    personalDataKeyId: (): string | undefined =>
      linked(reader, LINKS.personalDataKey)
        ? read(reader, LINKS.personalDataKey, KmsKey, "{ keyId }").keyId
        : undefined,
    secret: (
      name:
        | typeof LINKS.llmApiKey
        | typeof LINKS.apiToken
        | typeof LINKS.reviewerToken
        | OrderSourceSecretLink
        | ProviderSecretLink,
    ) => read(reader, name, Secret, "{ value }").value,
  };
}

/** The accessors' type. */
export type LinkedResources = ReturnType<typeof linkedResources>;

/**
 * A reader that refuses names a function is not linked to, as `Resource` does on AWS (with the order source and
 * payment provider `choices` as deployed).
 */
export function restrictedReader(base: ResourceReader, fn: FunctionKey, choices: LinkedChoices = {}): ResourceReader {
  const allowed: readonly string[] = linksOf(fn, choices);
  return (name) => {
    if (!allowed.includes(name))
      throw new Error(`"${name}" is not linked to ${FUNCTIONS[fn].handler} (its links: ${allowed.join(", ")})`);
    return base(name);
  };
}
