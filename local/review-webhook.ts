// Locally, being told a review waits (docs/reviews.md#the-desk): with CLAIMS_REVIEW_WEBHOOK_URL, `claims serve`
// POSTs every ReviewOpened the bus accepts to that URL as JSON — the event as events.jsonl holds it — for a chat
// webhook or a script. Best effort: a failed POST is a failed delivery the bus retries (then its dead letters),
// never holding up the claim. No credential of ours goes with it; redirects are not followed.
import { DETAIL_TYPES, KERNEL_SOURCE } from "../core/kernel/events.ts";
import type { BusEvent } from "./eventbridge/server.ts";
import { ReviewWebhookSettingError } from "./errors.ts";

/** The variable naming the URL. */
export const REVIEW_WEBHOOK_VAR = "CLAIMS_REVIEW_WEBHOOK_URL";

/** The local rule that delivers ReviewOpened to the webhook. */
export const REVIEW_WEBHOOK_RULE = {
  name: "review-webhook",
  pattern: { source: [KERNEL_SOURCE], "detail-type": [DETAIL_TYPES.reviewOpened] },
} as const;

/** The webhook URL of the environment, or undefined; throws ReviewWebhookSettingError for one that is not http(s). */
export function reviewWebhookUrlFrom(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const raw = env[REVIEW_WEBHOOK_VAR]?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ReviewWebhookSettingError(`${REVIEW_WEBHOOK_VAR}=${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ReviewWebhookSettingError(
      `${REVIEW_WEBHOOK_VAR} must be an http:// or https:// URL, got ${url.protocol}`,
    );
  return url.toString();
}

/** The bus target POSTing each event to `url` within `timeoutMs`; a non-2xx answer or no answer throws (the bus retries). */
export function reviewWebhookTarget(
  url: string,
  options: { timeoutMs?: number; fetch?: typeof fetch } = {},
): (event: BusEvent) => Promise<void> {
  const doFetch = options.fetch ?? fetch;
  return async (event) => {
    const response = await doFetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(event),
      redirect: "error",
      signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
    });
    await response.body?.cancel().catch(() => undefined);
    if (!response.ok)
      throw new ReviewWebhookSettingError(`the review webhook answered HTTP ${response.status} for ${event.id}`);
  };
}
