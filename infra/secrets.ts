// Secrets, set per stage with `npx sst secret set <Name> <value> --stage <stage>`; a missing one stops the deploy.
import { settings } from "./settings.ts";

/** The API key of the OpenAI-compatible LLM endpoint (any non-empty value for servers without auth, e.g. Ollama). */
export const llmApiKey = new sst.Secret("LlmApiKey");

/** The bearer token the HTTP API's authorizer accepts (locally CLAIMS_API_TOKEN). */
export const apiToken = new sst.Secret("ApiToken");

/** The bearer token reviewers use on the review routes (locally CLAIMS_REVIEWER_TOKEN); the intake token cannot decide reviews. */
export const reviewerToken = new sst.Secret("ReviewerToken");

/**
 * The bearer token of the shop's order API (locally ORDER_API_TOKEN): only with ORDER_SOURCE=http at deploy, and then
 * linked to the functions that read orders only (infra/order-source.ts ORDER_READERS).
 */
export const orderApiToken = settings.orders.source === "http" ? new sst.Secret("OrderApiToken") : undefined;
