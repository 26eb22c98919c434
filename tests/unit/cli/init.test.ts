import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { packageName, scaffold } from "../../../src/cli/init/scaffold.ts";
import { TEMPLATES } from "../../../src/cli/init/templates.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const LATLAB = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
const FILES = ["package.json", "tsconfig.json", "experiments/example.ts", ".gitignore", "README.md", ".github/workflows/scheduled.yml"];
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
    expect(readFileSync(join(dir, "README.md"), "utf8")).toContain('"Scheduled runs in GitHub Actions"');
    // latlab's own scheduled workflow, byte for byte (it works in both places: see its header).
    expect(readFileSync(join(dir, ".github/workflows/scheduled.yml"))).toEqual(readFileSync(join(ROOT, ".github/workflows/scheduled.yml")));
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

  it("scaffold() names the package after the folder and writes exactly the templates", () => {
    expect(TEMPLATES.map((t) => t.path)).toEqual(FILES);
    expect(packageName("/x/My Latency Lab")).toBe("my-latency-lab");
    expect(packageName("/x/..")).not.toBe("");
    expect(packageName("/x/___")).toBe("latlab-experiments");
    const dir = join(temp("latlab-init-"), "Lab 2");
    const result = scaffold(dir);
    expect(result).toEqual({ dir, written: FILES, existing: [] });
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name).toBe("lab-2");
    expect(readFileSync(join(dir, ".github/workflows/scheduled.yml"), "utf8")).toBe(readFileSync(join(ROOT, ".github/workflows/scheduled.yml"), "utf8"));
  });

  it("the package ships the workflow init copies (package.json \"files\")", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { files: string[] };
    expect(pkg.files).toContain(".github/workflows/scheduled.yml");
  });

  it("refuses a path that is a file", () => {
    const file = join(temp("latlab-init-"), "f");
    writeFileSync(file, "");
    expect(() => scaffold(file)).toThrow(/exists and is not a folder/);
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
