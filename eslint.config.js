// Lint: typescript-eslint recommended everywhere, plus the layering rules of docs/architecture.md: core/ is pure, the
// application layer (pipeline/) and the report do no I/O of their own, and the shell's folders import
// only downwards. Each rule is tested in layering.test.ts.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const impureModules = [
  "@aws-sdk/*",
  "@aws-lambda-powertools/*",
  "sst",
  "sst/*",
  "openai",
  "openai/*",
  "node:fs",
  "node:fs/*",
  "node:http",
  "node:https",
  "node:net",
  "node:child_process",
  "node:process",
  "node:os",
  "node:dgram",
  "node:dns",
  "node:worker_threads",
  "node:crypto",
  "fs",
  "fs/*",
  "http",
  "https",
  "net",
  "child_process",
  "os",
  "crypto",
  "process",
  "dynalite",
  "fauxqs",
  "playwright-core",
];

/** A no-restricted-imports entry: importing any of `folders` (relative paths) is refused with `message`. */
const folders = (names, message) => ({ group: names.map((n) => `**/${n}/**`), message });

/** Files a rule guards: production code of `dir` (tests may use fixtures from anywhere). */
const production = (dir) => ({
  files: [`${dir}/**/*.ts`],
  ignores: [`${dir}/**/*.test.ts`, `${dir}/**/*.test-kit.ts`, `${dir}/**/testing/**`],
});

/** What every file of core/ may not import: I/O modules and the shell. */
const corePatterns = [
  {
    group: impureModules,
    message: "core/ stays pure: no AWS SDK, sst, openai or node I/O (see docs/architecture.md).",
  },
  folders(
    ["app", "pipeline", "adapters", "functions", "infra", "report", "cli", "local", "bench", "chaos"],
    "core/ depends on nothing outside core/: the shell depends on core, never the reverse.",
  ),
];

/**
 * The folders of core/ import only downwards (docs/architecture.md#the-rooms-of-core): the generic machinery at the
 * bottom (crew, then integrity on crew; llm on neither), then the claims domain's subjects, each on those below
 * it — claim and config, extraction, kernel and money, the crew's agents and model, history (audit, replay,
 * backtest). core/errors.ts is everyone's. A later config replaces the core rule for the folder, so it repeats it.
 */
const CORE_FOLDERS = ["crew", "integrity", "llm", "claim", "extraction", "kernel", "agents", "history"];
const coreFolder = (dir, forbidden, message) => ({
  ...production(`core/${dir}`),
  rules: { "no-restricted-imports": ["error", { patterns: [...corePatterns, folders(forbidden, message)] }] },
});
/** The rule of one subject folder: nothing above it in CORE_FOLDERS. */
const subjectFolder = (dir) => {
  const above = CORE_FOLDERS.slice(CORE_FOLDERS.indexOf(dir) + 1);
  return coreFolder(
    dir,
    above,
    `core/${dir} imports only the folders below it (${CORE_FOLDERS.slice(0, CORE_FOLDERS.indexOf(dir)).join(", ")}): ${above.join(", ")} build on it, not the reverse.`,
  );
};

export default tseslint.config(
  { ignores: ["node_modules/**", ".sst/**", ".claims/**", "dist/**", "bench/out/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    ...production("core"),
    rules: {
      "no-restricted-imports": ["error", { patterns: corePatterns }],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "core/ takes time from an injected clock." },
        { object: "Math", property: "random", message: "core/ takes ids from an injected source." },
        { object: "crypto", property: "randomUUID", message: "core/ takes ids from an injected source." },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: "core/ takes time from an injected clock: no new Date().",
        },
        {
          selector: "MemberExpression[object.name='process']",
          message: "core/ reads no environment: configuration comes in as plain values.",
        },
      ],
      "no-restricted-globals": [
        "error",
        { name: "fetch", message: "core/ does no I/O." },
        { name: "setTimeout", message: "core/ does not schedule: time comes from tick()." },
        { name: "setInterval", message: "core/ does not schedule: time comes from tick()." },
      ],
    },
  },
  coreFolder(
    "crew",
    CORE_FOLDERS.filter((f) => f !== "crew"),
    "core/crew is the bottom of core/: it imports no other folder of core/ (only core/errors.ts).",
  ),
  coreFolder(
    "integrity",
    CORE_FOLDERS.filter((f) => f !== "crew" && f !== "integrity"),
    "core/integrity imports only core/crew of core/: the claims domain builds on it, not the reverse.",
  ),
  coreFolder(
    "llm",
    CORE_FOLDERS.filter((f) => f !== "llm"),
    "core/llm is the model port: it imports no other folder of core/ (the claims crew and its rules model use it).",
  ),
  // core/history is the top: the core rule above is all it needs.
  ...["claim", "extraction", "kernel", "agents"].map(subjectFolder),
  {
    ...production("pipeline"),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: impureModules,
              message:
                "pipeline/ works through its ports: no AWS SDK, sst, openai or node I/O (adapters/ implement the ports).",
            },
            folders(
              ["app", "adapters", "functions", "infra", "report", "cli", "local", "bench", "chaos"],
              "pipeline/ depends only on core/: adapters, handlers and the local stack depend on it.",
            ),
          ],
        },
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "pipeline/ takes time from the injected Clock port." },
        { object: "Math", property: "random", message: "pipeline/ takes ids from the injected IdSource port." },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "MemberExpression[object.name='process']",
          message: "pipeline/ reads no environment: settings come in through PipelineDeps.",
        },
      ],
    },
  },
  {
    // The deciders return effects as plain data: they import core/ and, from the rest of pipeline/, types only
    // (the audit events' builder, itself pure, lives here as pipeline/decide/audit.ts); the services load, perform and save around them.
    ...production("pipeline/decide"),
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^\\.\\./[^/]+$",
              allowTypeImports: true,
              message:
                "pipeline/decide/ is pure: a decider imports core/ and only types from pipeline/ (no ports, perform or deps at run time); the services load -> decide -> perform.",
            },
          ],
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "MemberExpression[object.name='process']",
          message: "pipeline/ reads no environment: settings come in through PipelineDeps.",
        },
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: "a decider takes the time as an argument: no new Date().",
        },
      ],
    },
  },
  {
    ...production("report"),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: impureModules,
              message: "report/ is pure rendering: no I/O (the CLI writes files, the API serves them).",
            },
            folders(
              ["app", "pipeline", "adapters", "functions", "infra", "cli", "local", "bench", "chaos"],
              "report/ renders from core/ data only: the API and the CLI use it, not the reverse.",
            ),
          ],
        },
      ],
    },
  },
  {
    ...production("functions"),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            folders(
              ["local", "cli", "bench", "chaos"],
              "functions/ is deployed: it never imports the local stack, the CLI, the benches or the chaos runs.",
            ),
          ],
        },
      ],
    },
  },
  {
    // Of pipeline/, an adapter sees what it implements: the ports (ports.ts: the ports, their listing orders and
    // cursors), the messages it carries (messages.ts) and the errors the ports declare (errors.ts). The payment
    // provider's port is declared beside the service that drives it (payments.ts): its types only. Never a
    // service, a decider, the deps or the in-memory adapters; storage keys are the adapter's own (adapters/aws/table.ts).
    ...production("adapters"),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            folders(
              ["local", "cli", "bench", "chaos", "infra", "app", "functions"],
              "adapters/ implement ports with injected clients: they never import infra/, app/, functions/, the local stack, the CLI, the benches or the chaos runs.",
            ),
          ],
        },
      ],
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "(^|/)pipeline/(?!(ports|messages|errors|payments)\\.ts$)",
              message:
                "adapters/ import of pipeline/ only the ports (ports.ts), the messages (messages.ts) and the ports' errors (errors.ts): what an adapter needs of the application belongs in those, or in the adapter.",
            },
            {
              regex: "(^|/)pipeline/payments\\.ts$",
              allowTypeImports: true,
              message:
                "adapters/ import only the payment port's types from pipeline/payments.ts (its service is the application's); errors come from pipeline/errors.ts.",
            },
          ],
        },
      ],
    },
  },
  {
    // infra/ is the deployment (SST): it reads the app's manifest (app/) and core/, and nothing of the running shell.
    ...production("infra"),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            folders(
              ["functions", "local", "pipeline", "adapters", "report", "cli", "bench", "chaos"],
              "infra/ deploys the app: it depends only on app/ and core/, never on the code it deploys.",
            ),
          ],
        },
      ],
    },
  },
  {
    // app/ is the app's manifest (functions, queues, routes, links, rules, metrics): read by infra/ at deploy and by
    // functions/ and local/ at run time, so it depends only on core/ and knows nothing of SST.
    ...production("app"),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            folders(
              ["infra", "functions", "local", "pipeline", "adapters", "report", "cli", "bench", "chaos"],
              "app/ is the app's manifest: it depends only on core/; infra/, functions/ and local/ read it.",
            ),
          ],
        },
      ],
      "no-restricted-globals": [
        "error",
        { name: "sst", message: "app/ is SST-free: it is imported by functions/ and local/." },
        { name: "$app", message: "app/ is SST-free: stage settings belong in infra/settings.ts." },
        { name: "$config", message: "app/ is SST-free." },
        { name: "aws", message: "app/ is SST-free." },
      ],
    },
  },
  {
    // The manifest's facts are plain data (the policy's deployed format hashes with node:crypto).
    files: ["app/**/*.ts"],
    ignores: ["app/**/*.test.ts", "app/policy-format.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: impureModules, message: "app/ runs in Lambda and locally: plain data only." },
            folders(
              ["infra", "functions", "local", "pipeline", "adapters", "report", "cli", "bench", "chaos"],
              "app/ is the app's manifest: it depends only on core/; infra/, functions/ and local/ read it.",
            ),
          ],
        },
      ],
    },
  },
  {
    // chaos/ drives the whole shell (functions/ in process, local/ with --emulators) from the outside, like a
    // client: nothing imports it, and it does not lean on the CLI or the benches.
    ...production("chaos"),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            folders(
              ["cli", "bench"],
              "chaos/ drives the service from the outside: it uses functions/, pipeline/ and local/, never the CLI or the benches.",
            ),
          ],
        },
      ],
    },
  },
  {
    ...production("local"),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            folders(
              ["cli", "bench", "chaos"],
              "local/ is the embedded stack: the CLI and the chaos runs drive it, not the reverse.",
            ),
          ],
        },
      ],
    },
  },
);
