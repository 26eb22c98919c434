import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The files `latlab init` writes into a new experiments project. Each is a function of the few
 * things that vary (the project's name, latlab's version), so that tests can check them as text.
 */

/**
 * latlab's GitHub workflows, as shipped in the package (package.json "files" lists each): a new
 * project gets the very files latlab's own repository runs, byte for byte. scheduled.yml holds
 * the triggers and calls the reusable latlab-measure.yml (plan, measure, cleanup) and
 * latlab-history.yml; latlab-sweep.yml deletes expired groups every hour.
 */
export const LATLAB_WORKFLOW_FILES = ["scheduled.yml", "latlab-measure.yml", "latlab-history.yml", "latlab-sweep.yml"] as const;

/** Where the package keeps its workflows: .github/workflows/ at its root (src/ in a checkout, dist/ in the package, both two folders down). */
export const WORKFLOWS_DIR = new URL("../../../.github/workflows/", import.meta.url);

/** One of latlab's workflows as the package ships it; a clear error when the package lacks it. */
export function latlabWorkflow(name: (typeof LATLAB_WORKFLOW_FILES)[number], dir: URL = WORKFLOWS_DIR): string {
  const file = new URL(name, dir);
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`latlab's package has no .github/workflows/${name} (${fileURLToPath(file)}): it must ship every workflow \`latlab init\` copies (package.json "files")`, { cause: error });
  }
}

export interface TemplateContext {
  /** npm package name of the new project. */
  name: string;
  /** latlab's own version (its package.json): the project depends on it. */
  latlabVersion: string;
  /** typescript and @types/node ranges latlab itself is checked with, when known. */
  typescript?: string | undefined;
  typesNode?: string | undefined;
}

export interface TemplateFile {
  /** Path inside the project, with `/`. */
  path: string;
  content: (ctx: TemplateContext) => string;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

const packageJson = (ctx: TemplateContext) =>
  json({
    name: ctx.name,
    version: "0.1.0",
    private: true,
    type: "module",
    scripts: {
      experiment: "latlab run",
      typecheck: "tsc -p .",
    },
    dependencies: { latlab: `^${ctx.latlabVersion}` },
    devDependencies: {
      ...(ctx.typesNode ? { "@types/node": ctx.typesNode } : {}),
      ...(ctx.typescript ? { typescript: ctx.typescript } : {}),
    },
  });

/**
 * Stricter than latlab itself, libraries' declarations checked too (skipLibCheck off): the
 * package ships compiled JavaScript with declarations that pass these flags (a test installs the
 * packed package into a project made by this template). `allowImportingTsExtensions` (with
 * noEmit) lets experiments import their own helpers as `./x.ts`, as Node runs them.
 */
const tsconfigJson = () =>
  json({
    compilerOptions: {
      target: "ES2023",
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      noPropertyAccessFromIndexSignature: true,
      erasableSyntaxOnly: true,
      verbatimModuleSyntax: true,
      allowImportingTsExtensions: true,
      noEmit: true,
      skipLibCheck: false,
      types: ["node"],
    },
    include: ["experiments"],
  });

const exampleExperiment = () => `import { defineExperiment } from "latlab";

/**
 * An example to start from: how much slower is a round trip between two zones than within one?
 * Run it with \`npx latlab run example\` (or \`npm run experiment -- example\`); look at what it
 * would do first with \`npx latlab plan example\`. The file name is the experiment's name on the
 * command line; an experiment here hides one of latlab's own with the same name.
 */
export default defineExperiment({
  name: "example",
  description: "Same zone vs cross zone: round-trip time between two hosts.",
  // Placement for every host unless an axis or the host itself says otherwise.
  defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5", accelnet: true },
  // The variants are the product of the axes: here two, one per placement of the client.
  axes: { placement: ["same-zone", "cross-zone"] },
  // The variant the others are compared with.
  baseline: { placement: "same-zone" },
  // Roles. Without \`pairs\`, every role measures to the one called "server".
  hosts: { client: {}, server: {} },
  // Every tool runs on every variant's hosts. Parameters are checked: a typo fails before anything starts.
  measure: [
    { tool: "sockperf", params: { protocol: "tcp", messageSize: 64, duration: 5 } },
    // ICMP is not what applications see: never the only tool.
    { tool: "ping", params: { count: 20, interval: 0.1 } },
  ],
  // Independent host sets per variant (on Azure, separate draws of hardware): use 2 or more for
  // comparisons over replicas; tool runs per pair on the same hosts.
  replicas: 1,
  repetitions: 1,
});
`;

const gitignore = () => `node_modules/
# latlab writes each run's results.json, samples and raw tool output here.
results/
`;

const readme = (ctx: TemplateContext) => `# ${ctx.name}

Network-latency experiments run with latlab.

\`\`\`sh
npm install /path/to/latlab-<version>.tgz   # latlab is not on the npm registry yet: \`npm pack\` in a latlab clone makes it
npx latlab plan example     # what it would do: variants, hosts, cells, time
npx latlab run example      # run it (emulated hosts on this Linux machine; root needed)
npx latlab list             # this project's experiments, then latlab's own
\`\`\`

Each file in \`experiments/\` default-exports \`defineExperiment(...)\`; its file name is its name
on the command line. An experiment here with the name of one of latlab's own is used instead of
it. \`npx latlab run example --target azure\` runs the same experiment on Azure (it costs
money: \`npx latlab plan example --target azure\` shows the cost first). Results go to
\`results/<runId>/\`. \`npm run typecheck\` checks the experiments.

The workflows in \`.github/workflows/\` run the experiments on Azure in GitHub Actions:
\`scheduled.yml\` (the weekly schedule, and runs by hand) calls \`latlab-measure.yml\` (the plan,
one job per experiment, then a cleanup job that deletes whatever the run left in Azure) and
\`latlab-history.yml\` (every run added to the history in the branch \`latlab-history\` and judged
against it by \`latlab gate\`), then opens a GitHub issue per experiment on a regression (closed
once a run is back inside the band) and, with the variable \`LATLAB_PAGES=true\`, publishes the
trend page on GitHub Pages; \`latlab-sweep.yml\` deletes expired latlab resource groups every hour. They
measure this project's \`experiments/\` only; latlab's own experiments run when named (the
\`experiments\` input). \`max-cost\` caps each experiment's worst-case Azure cost and
\`max-total-cost\` all of them together: above it nothing is deployed. An experiment whose job
needs more than a GitHub-hosted runner's 6 hours is refused; give the \`runner\` input a
self-hosted runner's label for it. See "Scheduled runs in GitHub Actions" in latlab's README for
what they need (an Azure login through OpenID Connect, and latlab installable on the runner by
\`npm ci\`).
`;

/** Every file `latlab init` writes, in the order it lists them. */
export const TEMPLATES: readonly TemplateFile[] = [
  { path: "package.json", content: packageJson },
  { path: "tsconfig.json", content: tsconfigJson },
  { path: "experiments/example.ts", content: exampleExperiment },
  { path: ".gitignore", content: gitignore },
  { path: "README.md", content: readme },
  ...LATLAB_WORKFLOW_FILES.map((name): TemplateFile => ({ path: `.github/workflows/${name}`, content: () => latlabWorkflow(name) })),
];
