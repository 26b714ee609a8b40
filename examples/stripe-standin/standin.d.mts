// Types of standin.mjs (plain JavaScript, dependency-free, so a person runs it with node alone).
export declare function behaviourByName(ref: string): { kind: string; times?: number };
export declare function startStripeStandin(
  apiKey: string,
  behaviours?: Record<string, unknown>,
  options?: { port?: number; host?: string; byName?: boolean },
): Promise<{
  base: string;
  refunds: Array<Record<string, unknown>>;
  requests: Array<{ path: string; auth: string | undefined; idempotencyKey: string | undefined; form: Record<string, string> }>;
  close(): Promise<void>;
}>;
