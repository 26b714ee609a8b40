// The one narrow port through which every agent step and the free-text extraction reach a model.
import type { ZodType } from "zod";
import type { LlmFailureCode } from "./errors.ts";

/** What a call is for; deterministic implementations dispatch on it, network models ignore it. */
export type LlmTask = "extract_claim" | "analyze_claim" | "decide_refund" | "decide_claim" | "fix_step";

/** A chat message after the system prompt; customer text only ever travels in `user` messages. */
export interface LlmMessage {
  readonly role: "user" | "assistant";
  readonly content: string;
}

/** A named zod schema the answer must satisfy; network models send it as `response_format: json_schema`. */
export interface LlmOutputSchema<T> {
  /** `[a-zA-Z0-9_-]{1,64}`, the name OpenAI's structured output requires. */
  readonly name: string;
  readonly zod: ZodType<T>;
}

/** The agent steps a fixer can stand in for. */
export type FixableTask = "analyze_claim" | "decide_refund";

/**
 * Structured facts behind a prompt, tagged with its task and carried beside it so a deterministic model needs
 * no prompt parsing; core/agents builds them with the prompt (its `LlmFacts`). Network models ignore them.
 */
export type LlmPromptFacts = { readonly task: LlmTask; readonly [field: string]: unknown };

/** Fields every request has. */
interface LlmRequestBase {
  readonly task: LlmTask;
  /** Trusted instructions only: role, contract boundaries, output format. Never customer text. */
  readonly system: string;
  readonly messages: readonly LlmMessage[];
  /** Structured facts for deterministic implementations; network models ignore them. */
  readonly facts?: LlmPromptFacts | undefined;
  /** Budget for the whole call including retries and a structured answer's repair round; the implementation's default when absent. */
  readonly timeoutMs?: number | undefined;
  /** Cancels the call; a cancelled call fails with `LLM_ABORTED`. */
  readonly signal?: AbortSignal | undefined;
}

/** A request whose answer is free text. */
export interface LlmTextRequest extends LlmRequestBase {
  readonly schema?: undefined;
}

/** A request whose answer must be JSON satisfying `schema`. */
export interface LlmStructuredRequest<T> extends LlmRequestBase {
  readonly schema: LlmOutputSchema<T>;
}

/** Either kind of request. */
export type LlmRequest<T = string> = LlmTextRequest | LlmStructuredRequest<T>;

/** Token counts of one call; `estimated` is true when they are chars/4 estimates, not the endpoint's figures. */
export interface LlmUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly estimated: boolean;
}

/** A successful call: the validated value, the raw text it came from, and what it cost. */
interface LlmSuccess<T> {
  readonly ok: true;
  readonly value: T;
  readonly text: string;
  readonly usage: LlmUsage;
  /** HTTP attempts made (1 without retries); 1 for the rules model. */
  readonly attempts: number;
  readonly model: string;
  /** Non-fatal notes, e.g. "JSON parsed from a fenced block" or what an extractor could not find. */
  readonly warnings: readonly string[];
  /** `batch`: answered through the OpenAI Batch API (priced at its discount); absent: a synchronous call. */
  readonly via?: "batch" | undefined;
}

/** A failed call, returned not thrown, with a stable code. */
export interface LlmFailure {
  readonly ok: false;
  readonly code: LlmFailureCode;
  /** Says what went wrong in words an operator understands; never contains the API key. */
  readonly message: string;
  readonly attempts: number;
  readonly model: string;
  /** Whether trying again later may help (timeouts, unreachable, 429, 5xx). */
  readonly retryable: boolean;
  /** Present when the endpoint answered (e.g. invalid JSON). */
  readonly usage?: LlmUsage | undefined;
  /** The raw answer when there was one (e.g. for LLM_INVALID_JSON), for the audit. */
  readonly text?: string | undefined;
}

/** The outcome of one call. */
export type LlmResult<T> = LlmSuccess<T> | LlmFailure;

/** The LLM port: one method, failures as values. */
export interface LlmPort {
  /** `rules` or `openai`, for audit and reports. */
  readonly provider: "rules" | "openai";
  /** Model name as configured, e.g. `gemma3:4b` or `rules-v1`. */
  readonly model: string;
  /**
   * Runs one completion. With `schema` the value is JSON validated against it (T is inferred from
   * the schema); without, the value is the answer's text (T defaults to string).
   */
  complete<T = string>(request: LlmRequest<T>): Promise<LlmResult<T>>;
}

/**
 * Which batch of the OpenAI Batch API holds a request (by its `custom_id`), kept across tries and workers so a step
 * that is tried again finds its batch instead of sending another (LLM_BATCH_MODE=batch, adapters/llm/batch.ts).
 */
export interface BatchJournal {
  get(customId: string): Promise<string | undefined>;
  put(customId: string, batchId: string): Promise<void>;
  /** Forgets a batch that ended without the answer (only if it is still the one recorded). */
  forget(customId: string, batchId: string): Promise<void>;
}
