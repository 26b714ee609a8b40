// The endpoint check before the first claim (docs/llm.md): a few seconds at most, naming the URL, the model
// and the error, and a guard that makes every call fail at once with that message while the endpoint
// is known to be down (re-checked now and then), so a dead model never costs a claim its full budget.
import { isModelUnavailable } from "../../core/llm/errors.ts";
import type { LlmPort, LlmRequest, LlmResult } from "../../core/llm/port.ts";
import type { LlmConfig } from "./config.ts";

/** How long the check may take at most (capped by the configured LLM timeout). */
const PREFLIGHT_TIMEOUT_MS = 3_000;

/** How long a failed check stands before the next call checks again. */
export const PREFLIGHT_RECHECK_MS = 30_000;

/** What the check found: usable (with notes), or down with the failure code every call then reports. */
export type PreflightResult =
  | {
      readonly ok: true;
      readonly url: string;
      readonly model: string;
      readonly ms: number;
      readonly detail: string;
      readonly warnings: readonly string[];
    }
  | {
      readonly ok: false;
      readonly code: "LLM_UNREACHABLE" | "LLM_AUTH_FAILED";
      readonly url: string;
      readonly model: string;
      readonly ms: number;
      readonly message: string;
    };

/** What the check may be given besides the configuration. */
interface PreflightOptions {
  readonly timeoutMs?: number | undefined;
  readonly fetch?: typeof fetch | undefined;
}

/**
 * Checks the configured endpoint with one `GET {baseURL}/models`: unreachable, silent past the budget
 * or refusing the credentials is a failure; anything that answers is usable, with a warning when the
 * model is not among those it lists (llama.cpp serves any name, so that alone is not fatal).
 */
export async function preflightLlm(config: LlmConfig, options: PreflightOptions = {}): Promise<PreflightResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  if (config.provider === "rules")
    return {
      ok: true,
      url: "(none)",
      model: "rules-v1",
      ms: 0,
      detail: "the rules model needs no endpoint",
      warnings: [],
    };
  const url = config.baseURL;
  const model = config.model;
  const budget = Math.max(1, Math.min(options.timeoutMs ?? PREFLIGHT_TIMEOUT_MS, config.timeoutMs));
  const down = (code: "LLM_UNREACHABLE" | "LLM_AUTH_FAILED", why: string): PreflightResult => ({
    ok: false,
    code,
    url,
    model,
    ms: ms(),
    message: `LLM endpoint ${url} (model ${model}) ${why}`,
  });
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(`${url}/models`, {
      headers: { authorization: `Bearer ${config.apiKey}` },
      signal: AbortSignal.timeout(budget),
    });
  } catch (error) {
    if ((error as { name?: string }).name === "TimeoutError")
      return down("LLM_UNREACHABLE", `did not answer within ${budget} ms`);
    return down("LLM_UNREACHABLE", `is unreachable: ${errnoOf(error)}`);
  }
  if (response.status === 401 || response.status === 403)
    return down("LLM_AUTH_FAILED", `refused the credentials (${response.status}): check LLM_API_KEY`);
  const text = await response.text().catch(() => "");
  if (!response.ok) {
    return {
      ok: true,
      url,
      model,
      ms: ms(),
      detail: `answered ${response.status} to GET /models`,
      warnings: [
        `could not list the models (${response.status}); the first call will show whether model ${model} is served`,
      ],
    };
  }
  const ids = modelIds(text);
  if (ids === undefined)
    return {
      ok: true,
      url,
      model,
      ms: ms(),
      detail: "answered",
      warnings: [`GET ${url}/models did not return a model list; is ${url} an OpenAI-compatible API root?`],
    };
  if (ids.includes(model))
    return { ok: true, url, model, ms: ms(), detail: `answered in ${ms()} ms; model ${model} is listed`, warnings: [] };
  const listed = ids.length === 0 ? "none" : `${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", …" : ""}`;
  return {
    ok: true,
    url,
    model,
    ms: ms(),
    detail: `answered in ${ms()} ms`,
    warnings: [
      `model ${model} is not among the models it lists (${listed}); calls may fail (for Ollama: ollama pull ${model})`,
    ],
  };
}

/** A one-line account of a check for a console. */
export function describePreflight(result: PreflightResult): string {
  if (!result.ok) return `FAILED: ${result.message}`;
  return [`ok: ${result.url} ${result.detail}`, ...result.warnings.map((w) => `warning: ${w}`)].join("; ");
}

/** An LlmPort behind a preflight check, and the check itself. */
interface GuardedLlm {
  readonly port: LlmPort;
  /** Runs the check now (concurrent callers share one run) and remembers the result. */
  check(): Promise<PreflightResult>;
  /** The last result, if any check ran or a call found the model unavailable. */
  last(): PreflightResult | undefined;
  /**
   * Whether the model is known to be unavailable now (what `/health` says). Asked often: a failure older than the
   * recheck interval starts a check in the background (not awaited), so the answer follows the model back to ok.
   */
  unreachable(): boolean;
}

/**
 * Puts `port` behind `probe`: the first call waits for the check; while the endpoint is known to be
 * down every call fails at once (not retryable) with the check's message, and after `recheckMs` the
 * next call checks again. A call that finds the model unavailable marks it down the same way.
 */
export function guardWithPreflight(
  port: LlmPort,
  probe: () => Promise<PreflightResult>,
  options: { recheckMs?: number; now?: () => number } = {},
): GuardedLlm {
  const recheckMs = options.recheckMs ?? PREFLIGHT_RECHECK_MS;
  const now = options.now ?? (() => performance.now());
  let last: { result: PreflightResult; at: number } | undefined;
  let running: Promise<PreflightResult> | undefined;

  const check = (): Promise<PreflightResult> =>
    (running ??= probe()
      .then((result) => {
        last = { result, at: now() };
        return result;
      })
      .finally(() => {
        running = undefined;
      }));

  const current = async (): Promise<PreflightResult> => {
    if (last === undefined || (!last.result.ok && now() - last.at >= recheckMs)) return check();
    return last.result;
  };

  let rechecked: number | undefined;
  const unreachable = (): boolean => {
    if (last === undefined || last.result.ok) return false;
    const at = now();
    if (at - Math.max(last.at, rechecked ?? -Infinity) >= recheckMs) {
      rechecked = at;
      void check().catch(() => undefined);
    }
    return true;
  };

  return {
    check,
    last: () => last?.result,
    unreachable,
    port: {
      provider: port.provider,
      model: port.model,
      async complete<T = string>(request: LlmRequest<T>): Promise<LlmResult<T>> {
        const state = await current();
        if (!state.ok)
          return {
            ok: false,
            code: state.code,
            message: state.message,
            attempts: 0,
            model: port.model,
            retryable: false,
          };
        const result = await port.complete(request);
        if (!result.ok && isModelUnavailable(result.code)) {
          const previous = last?.result;
          const url = previous?.url ?? "(endpoint)";
          last = {
            result: {
              ok: false,
              code: result.code as "LLM_UNREACHABLE" | "LLM_AUTH_FAILED",
              url,
              model: port.model,
              ms: 0,
              message: result.message,
            },
            at: now(),
          };
        }
        return result;
      },
    },
  };
}

function modelIds(text: string): string[] | undefined {
  try {
    const body = JSON.parse(text) as { data?: unknown };
    if (!Array.isArray(body.data)) return undefined;
    return body.data
      .map((m) => (m !== null && typeof m === "object" ? String((m as { id?: unknown }).id ?? "") : ""))
      .filter((id) => id !== "");
  } catch {
    return undefined;
  }
}

/** The errno code (ECONNREFUSED, ENOTFOUND…) in an error's cause chain, else its innermost message. */
function errnoOf(error: unknown): string {
  let e: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let i = 0; i < 8 && e !== null && typeof e === "object"; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+/.test(code)) return code;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const first = errors[0] as { code?: unknown } | undefined;
      if (typeof first?.code === "string") return first.code;
    }
    if (e instanceof Error) message = e.message;
    e = (e as { cause?: unknown }).cause;
  }
  return message;
}
