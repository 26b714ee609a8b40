// The SST component behind each link name of infra/facts.ts, so every function links exactly the
// resources facts.ts lists for it (least privilege, stated once).
import { bus } from "./bus.ts";
import { FUNCTIONS, LINKS } from "./facts.ts";
import type { FunctionKey, LinkName } from "./facts.ts";
import { agentStepsQueue, crewEventsQueue, extractionQueue, proposalsQueue, timersQueue } from "./queues.ts";
import { apiToken, llmApiKey, reviewerToken } from "./secrets.ts";
import { table } from "./storage.ts";

const RESOURCES: Record<LinkName, unknown> = {
  [LINKS.table]: table,
  [LINKS.bus]: bus,
  [LINKS.llmApiKey]: llmApiKey,
  [LINKS.apiToken]: apiToken,
  [LINKS.reviewerToken]: reviewerToken,
  [LINKS.queues.crewEvents]: crewEventsQueue,
  [LINKS.queues.agentSteps]: agentStepsQueue,
  [LINKS.queues.proposals]: proposalsQueue,
  [LINKS.queues.extraction]: extractionQueue,
  [LINKS.queues.timers]: timersQueue,
};

/** The SST components `key`'s handler is linked to. */
export function linksOf(key: FunctionKey): unknown[] {
  return FUNCTIONS[key].links.map((name) => RESOURCES[name]);
}
