import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { packageName, scaffold } from "../../../src/cli/init/scaffold.ts";
import { LATLAB_WORKFLOW_FILES, TEMPLATES, latlabWorkflow } from "../../../src/cli/init/templates.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const LATLAB = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
const WORKFLOWS = LATLAB_WORKFLOW_FILES.map((name) => `.github/workflows/${name}`);
const FILES = ["package.json", "tsconfig.json", "experiments/example.ts", ".gitignore", "README.md", ...WORKFLOWS];
const temp = tempDirs();

const cli = runMain;

/** bin/latlab.js in a folder of its own, as a user runs it (CI=true: no progress bar). */
const latlab = (args: string[], cwd: string) => spawnSync(process.execPath, [join(ROOT, "bin/latlab.js"), ...args], { cwd, encoding: "utf8", env: { ...process.env, CI: "true" } });

describe("latlab init", () => {
  it("writes the project's files and prints them and the next two commands", async () => {
    const dir = join(temp("latlab-init-"), "my-lab");
    const r = await cli(["init", dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `wrote in ${dir}:\n${FILES.map((f) => `  ${f}\n`).join("")}next:\n  cd ${dir} && npm install /path/to/latlab-<version>.tgz   # \`npm pack\` in a latlab clone makes it\n  npx latlab run example                       # as root: emulated hosts are network namespaces\n` +
        `  .github/workflows/scheduled.yml runs the experiments weekly on Azure: see latlab's README, "Scheduled runs in GitHub Actions"\n`,
    );
    for (const f of FILES) expect(existsSync(join(dir, f))).toBe(true);

    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ name: "my-lab", type: "module", scripts: { experiment: "latlab run" }, dependencies: { latlab: `^${LATLAB.version}` } });
    const ts = JSON.parse(readFileSync(join(dir, "tsconfig.json"), "utf8")).compilerOptions;
    expect(ts).toMatchObject({
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      noPropertyAccessFromIndexSignature: true,
      erasableSyntaxOnly: true,
      verbatimModuleSyntax: true,
      // latlab's declarations are checked under these flags too (the package ships .d.ts that pass them).
      skipLibCheck: false,
      module: "nodenext",
      moduleResolution: "nodenext",
      noEmit: true,
    });
    expect(readFileSync(join(dir, ".gitignore"), "utf8").split("\n")).toContain("results/");
    const example = readFileSync(join(dir, "experiments/example.ts"), "utf8");
    expect(example).toMatch(/^import \{ defineExperiment \} from "latlab";$/m);
    expect(example).toMatch(/^export default defineExperiment\(\{$/m);
    expect(readFileSync(join(dir, "README.md"), "utf8")).toMatch(/^# my-lab\n/);
    const readme = readFileSync(join(dir, "README.md"), "utf8");
    expect(readme).toContain('"Scheduled runs in GitHub Actions"');
    // The README names every workflow, the total budget input, and what the workflows measure.
    for (const name of LATLAB_WORKFLOW_FILES) expect(readme).toContain(`\`${name}\``);
    expect(readme).toContain("`max-total-cost`");
    expect(readme).toMatch(/measure this project's `experiments\/` only; latlab's own experiments run when named/);
    // latlab's own workflows, byte for byte (they work in both places: see their headers).
    for (const f of WORKFLOWS) expect(readFileSync(join(dir, f)), f).toEqual(readFileSync(join(ROOT, f)));
  });

  it("refuses to overwrite: lists the files that exist and changes nothing", async () => {
    const dir = temp("latlab-init-");
    writeFileSync(join(dir, "README.md"), "mine\n");
    mkdirSync(join(dir, "experiments"));
    writeFileSync(join(dir, "experiments/example.ts"), "// mine\n");
    const r = await cli(["init", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`latlab init: these files exist in ${dir}; nothing was written (--force overwrites them):\n  experiments/example.ts\n  README.md\n`);
    expect(r.stdout).toBe("");
    expect(existsSync(join(dir, "package.json"))).toBe(false);
    expect(readFileSync(join(dir, "README.md"), "utf8")).toBe("mine\n");
    expect(readFileSync(join(dir, "experiments/example.ts"), "utf8")).toBe("// mine\n");
  });

  it("--force overwrites, and says which files it replaced", async () => {
    const dir = temp("latlab-init-");
    writeFileSync(join(dir, "README.md"), "mine\n");
    const r = await cli(["init", dir, "--force"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("  README.md (overwritten)\n");
    expect(r.stdout).toContain("  package.json\n");
    expect(readFileSync(join(dir, "README.md"), "utf8")).not.toBe("mine\n");
  });

  it("scaffold() names the package after the folder and writes exactly the templates", async () => {
    expect(TEMPLATES.map((t) => t.path)).toEqual(FILES);
    expect(packageName("/x/My Latency Lab")).toBe("my-latency-lab");
    expect(packageName("/x/..")).not.toBe("");
    expect(packageName("/x/___")).toBe("latlab-experiments");
    const dir = join(temp("latlab-init-"), "Lab 2");
    const result = await scaffold(dir);
    expect(result).toEqual({ dir, written: FILES, existing: [] });
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name).toBe("lab-2");
    for (const f of WORKFLOWS) expect(readFileSync(join(dir, f), "utf8"), f).toBe(readFileSync(join(ROOT, f), "utf8"));
  });

  it("the workflows are the four latlab runs itself; a package without one says which, and init writes nothing", async () => {
    expect(LATLAB_WORKFLOW_FILES).toEqual(["scheduled.yml", "latlab-measure.yml", "latlab-history.yml", "latlab-sweep.yml"]);
    const empty = temp("latlab-init-workflows-");
    expect(() => latlabWorkflow("latlab-sweep.yml", pathToFileURL(`${empty}/`))).toThrow(/^latlab's package has no \.github\/workflows\/latlab-sweep\.yml \(.*\): it must ship every workflow `latlab init` copies \(package\.json "files"\)$/);
    const dir = join(temp("latlab-init-"), "lab");
    const missing = TEMPLATES.map((t) => (t.path === ".github/workflows/latlab-sweep.yml" ? { ...t, content: () => latlabWorkflow("latlab-sweep.yml", pathToFileURL(`${empty}/`)) } : t));
    await expect(scaffold(dir, { templates: missing })).rejects.toThrow(/latlab-sweep\.yml/);
    expect(existsSync(join(dir, "package.json"))).toBe(false);
  });

  it("the package ships the workflows init copies (package.json \"files\")", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { files: string[] };
    for (const f of WORKFLOWS) expect(pkg.files).toContain(f);
  });

  it("refuses a path that is a file", async () => {
    const file = join(temp("latlab-init-"), "f");
    writeFileSync(file, "");
    await expect(scaffold(file)).rejects.toThrow(/exists and is not a folder/);
  });

  it("the new project works: list shows both groups, plan finds its example and says which file it uses", () => {
    const dir = join(temp("latlab-init-"), "lab");
    expect(latlab(["init", dir], ROOT).status).toBe(0);

    const plan = latlab(["plan", "example"], dir);
    expect(plan.stderr).toBe("experiment example: ./experiments/example.ts\n");
    expect(plan.stdout).toMatch(/^example: /);
    expect(plan.status).toBe(0);

    // The project's file with a shipped experiment's name shadows it; the others stay reachable.
    writeFileSync(join(dir, "experiments/ppg-vs-zone.ts"), readFileSync(join(dir, "experiments/example.ts"), "utf8").replace('name: "example"', 'name: "ppg-vs-zone"'));
    const shadowing = latlab(["plan", "ppg-vs-zone", "--json"], dir);
    expect(shadowing.stderr).toBe("experiment ppg-vs-zone: ./experiments/ppg-vs-zone.ts (shadows latlab's own experiments/ppg-vs-zone.ts)\n");
    expect(JSON.parse(shadowing.stdout).experiment.description).toMatch(/^Same zone vs cross zone/);
    const shipped = latlab(["plan", "accelnet-on-off"], dir);
    expect(shipped.stderr).toBe("experiment accelnet-on-off: latlab's own experiments/accelnet-on-off.ts\n");
    expect(shipped.status).toBe(0);

    const list = latlab(["list"], dir);
    expect(list.status).toBe(0);
    const lines = list.stdout.split("\n");
    expect(lines[0]).toBe("./experiments:");
    expect(lines[1]).toMatch(/^ {2}example +Same zone vs cross zone/);
    expect(lines[2]).toMatch(/^ {2}ppg-vs-zone +Same zone vs cross zone.*\(shadows latlab's own\)$/);
    expect(lines[3]).toBe("latlab's own experiments:");
    expect(list.stdout).toMatch(/^ {2}ppg-vs-zone +Does a Proximity Placement Group pay off\?.*\(shadowed by \.\/experiments\/ppg-vs-zone\.ts\)$/m);
    expect(list.stdout).toMatch(/^ {2}accelnet-on-off +What does Accelerated Networking buy/m);
  });
});
