// What each function may touch: the SST component behind each link name of app/manifest.ts, and the exact IAM
// actions app/manifest.ts grants each function on it. SST's own links grant whole services (`sqs:*`, `dynamodb:*`,
// `events:*`), so the table, the queues and the bus are re-wrapped to link their properties only
// (`Resource.<Name>` stays as SST builds it) and every permission is a statement of app/manifest.ts `FUNCTIONS[…].access`.
import { bus } from "./bus.ts";
import { FUNCTIONS, LINKS, linksOf as linkNamesOf, PERSONAL_DATA_KMS_PURPOSE } from "../app/manifest.ts";
import type { FunctionKey, IamAction, LinkName, ScopedGrant } from "../app/manifest.ts";
import { agentStepsQueue, crewEventsQueue, extractionQueue, proposalsQueue, timersQueue } from "./queues.ts";
import { ORDER_SOURCE_SECRET_LINKS } from "../app/order-source.ts";
import type { OrderSourceSecretLink } from "../app/order-source.ts";
import { PROVIDER_SECRET_LINKS } from "../app/payment-provider.ts";
import type { ProviderSecretLink } from "../app/payment-provider.ts";
import { apiToken, llmApiKey, orderSourceSecrets, paymentProviderSecrets } from "./secrets.ts";
import { personalDataKey, personalDataKms } from "./keys.ts";
import { settings } from "./settings.ts";
import { table } from "./storage.ts";

// The properties SST's own links carry (queue: url; table: name; bus: name and arn), without their permissions.
sst.Linkable.wrap(sst.aws.Queue, (queue: { url: unknown }) => ({ properties: { url: queue.url } }));
sst.Linkable.wrap(sst.aws.Dynamo, (dynamo: { name: unknown }) => ({ properties: { name: dynamo.name } }));
sst.Linkable.wrap(sst.aws.Bus, (eventBus: { name: unknown; arn: unknown }) => ({
  properties: { name: eventBus.name, arn: eventBus.arn },
}));

/** The secrets the registries name: the configured order source's and payment provider's (undefined for the others, which linksOf never names). */
type DeclaredSecretLink = OrderSourceSecretLink | ProviderSecretLink;
const DECLARED_SECRETS = Object.fromEntries([
  ...ORDER_SOURCE_SECRET_LINKS.map((link) => [link, orderSourceSecrets[link]]),
  ...PROVIDER_SECRET_LINKS.map((link) => [link, paymentProviderSecrets[link]]),
]) as Record<DeclaredSecretLink, unknown>;

const RESOURCES: Record<LinkName, unknown> = {
  [LINKS.table]: table,
  [LINKS.bus]: bus,
  [LINKS.llmApiKey]: llmApiKey,
  [LINKS.apiToken]: apiToken,
  // Local only: on AWS the review routes use the JWT authorizer (infra/reviewers.ts) and no function links it.
  [LINKS.reviewerToken]: undefined,
  [LINKS.personalDataKey]: personalDataKey,
  [LINKS.queues.crewEvents]: crewEventsQueue,
  [LINKS.queues.agentSteps]: agentStepsQueue,
  [LINKS.queues.proposals]: proposalsQueue,
  [LINKS.queues.extraction]: extractionQueue,
  [LINKS.queues.timers]: timersQueue,
  ...DECLARED_SECRETS,
} as const satisfies Record<Exclude<LinkName, DeclaredSecretLink>, unknown>;

/** The SST components `key`'s handler is linked to. */
export function linksOf(key: FunctionKey) {
  return linkNamesOf(key, { orderSource: settings.orders.source, paymentProvider: settings.paymentProvider })
    .map((name) => RESOURCES[name])
    .filter((resource) => resource !== undefined);
}

/** An ARN as the components hand them out (a Pulumi Output<string> under SST's real types). */
type Arn = ReturnType<typeof $interpolate>;

/** One IAM statement of a function's role (SST's FunctionPermissionArgs). */
export interface Permission {
  actions: IamAction[];
  resources: Arn[];
  conditions?: { test: string; variable: string; values: string[] }[];
}

/** The ARNs an action on `name` applies to: the table's index takes only Query. */
function statementsFor(name: LinkName, actions: readonly IamAction[]): Permission[] {
  if (actions.length === 0) return [];
  if (name === LINKS.table) {
    const onIndex = actions.filter((a) => a === "dynamodb:Query");
    return [
      { actions: [...actions], resources: [table.arn] },
      ...(onIndex.length === 0 ? [] : [{ actions: onIndex, resources: [$interpolate`${table.arn}/index/*`] }]),
    ];
  }
  // The KMS key: only for data keys of personal data (the encryption context every data key carries).
  if (name === LINKS.personalDataKey)
    return [
      {
        actions: [...actions],
        resources: [personalDataKms.arn],
        conditions: [
          { test: "StringEquals", variable: "kms:EncryptionContext:purpose", values: [PERSONAL_DATA_KMS_PURPOSE] },
        ],
      },
    ];
  const resource = RESOURCES[name] as unknown as { arn: Arn };
  return [{ actions: [...actions], resources: [resource.arn] }];
}

/** The IAM statements `key` gets: exactly the actions of app/manifest.ts on exactly its linked resources. */
export function permissionsOf(key: FunctionKey): Permission[] {
  const spec: (typeof FUNCTIONS)[FunctionKey] = FUNCTIONS[key];
  const access = spec.access as Partial<Record<LinkName, readonly IamAction[]>>;
  const scoped: readonly ScopedGrant[] = "scoped" in spec ? spec.scoped : [];
  return [
    ...Object.entries(access).flatMap(([name, actions]) => statementsFor(name as LinkName, actions ?? [])),
    // Actions on some items only: their partition key must match (every key of the request, ForAllValues).
    ...scoped.map((grant) => ({
      actions: [...grant.actions],
      resources: [table.arn],
      conditions: [
        { test: "ForAllValues:StringLike", variable: "dynamodb:LeadingKeys", values: [...grant.leadingKeys] },
      ],
    })),
  ];
}
