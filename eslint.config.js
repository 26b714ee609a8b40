// Lint: typescript-eslint recommended everywhere, plus the purity rule that guards core/.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const impureModules = [
  "@aws-sdk/*", "@aws-lambda-powertools/*", "sst", "sst/*", "openai", "openai/*",
  "node:fs", "node:fs/*", "node:http", "node:https", "node:net", "node:child_process",
  "node:process", "node:os", "node:dgram", "node:dns", "node:worker_threads", "node:crypto",
  "fs", "fs/*", "http", "https", "net", "child_process", "os", "crypto", "process",
  "dynalite", "fauxqs", "playwright-core",
];

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
    files: ["core/**/*.ts"],
    ignores: ["core/**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { group: impureModules, message: "core/ stays pure: no AWS SDK, sst, openai or node I/O (see STYLE.md)." },
          { group: ["**/adapters/**", "**/functions/**", "**/infra/**", "**/local/**", "**/bench/**"], message: "core/ depends on nothing outside core/: the shell depends on core, never the reverse." },
        ],
      }],
      "no-restricted-properties": ["error",
        { object: "Date", property: "now", message: "core/ takes time from an injected clock." },
        { object: "Math", property: "random", message: "core/ takes ids from an injected source." },
        { object: "crypto", property: "randomUUID", message: "core/ takes ids from an injected source." },
      ],
      "no-restricted-syntax": ["error",
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: "core/ takes time from an injected clock: no new Date()." },
        { selector: "MemberExpression[object.name='process']", message: "core/ reads no environment: configuration comes in as plain values." },
      ],
      "no-restricted-globals": ["error",
        { name: "fetch", message: "core/ does no I/O." },
        { name: "setTimeout", message: "core/ does not schedule: time comes from tick()." },
        { name: "setInterval", message: "core/ does not schedule: time comes from tick()." },
      ],
    },
  },
);
