// Intake extraction (SQS extraction, one message per invocation): turns a free-text claim into a
// structured one with the LLM and starts the crew (pipeline: extractClaim). A retryable LLM failure is
// retried through the queue; on the queue's last receive it ends the claim in NEEDS_REVIEW instead,
// so a claim never dies silently in the DLQ.
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import { ExtractionMessageSchema } from "../pipeline/messages.ts";
import { extractClaim } from "../pipeline/intake.ts";
import { productionLlmDeps } from "./composition/llm.ts";
import { productionVault } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { RetryLaterError } from "./consumers/errors.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { QUEUES } from "../app/manifest.ts";
import { sqsConsumer } from "./consumers/sqs-consumer.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";

/** The extraction consumer over `getDeps`; `maxReceives` is the queue's maxReceiveCount (infra/queues.ts). */
export function createIntakeExtractHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics; maxReceives?: number } = {},
) {
  const maxReceives = options.maxReceives ?? QUEUES.extraction.maxReceives;
  return measured("intakeExtract", getDeps, options.metrics, (deps, metrics) =>
    sqsConsumer(
      {
        schema: ExtractionMessageSchema,
        handle: async (message, record) => {
          const finalAttempt = Number(record.attributes.ApproximateReceiveCount) >= maxReceives;
          const outcome = await extractClaim(message.claim_id, { finalAttempt }, await deps());
          if (outcome === "RETRY")
            throw new RetryLaterError(
              `extraction of ${message.claim_id} failed retryably (receive ${record.attributes.ApproximateReceiveCount} of ${maxReceives})`,
            );
          return outcome;
        },
      },
      options.logger ?? createLogger("claims-intake-extract"),
      undefined,
      { metrics, consumer: "intakeExtract" },
    ),
  );
}

/** The deployed handler (infra/functions.ts: intakeExtract on ExtractionQueue). */
// Lambda hands it the bodies as they were sent, sealed: it opens them with its vault (as the local stack does).
export const handler = openingSqsHandler(createIntakeExtractHandler(productionLlmDeps), productionVault);
