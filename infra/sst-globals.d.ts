// Loose stand-ins for SST's globals, so the repository-wide `tsc --noEmit` accepts sst.config.ts and
// infra/ without SST's generated platform. The real types live in `.sst/platform/config.d.ts`:
// `npm run check:infra` type-checks against them and leaves this file out (infra/tsconfig.check.json).
/* eslint-disable @typescript-eslint/no-explicit-any -- deliberately untyped; check:infra has the real types */

declare const sst: any;
declare const aws: any;
declare const $config: (config: {
  app(input: { stage: string } | undefined): Record<string, unknown>;
  run(): Promise<Record<string, unknown> | void>;
}) => any;
declare const $app: { readonly name: string; readonly stage: string };
declare const $dev: boolean;
declare const $jsonStringify: (value: unknown) => any;
declare const $interpolate: (strings: TemplateStringsArray, ...values: unknown[]) => any;
