import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Rehearsal } from "../lifecycle/azureTarget.ts";
import { LiveRunError } from "../lifecycle/destroyRun.ts";
import { parseFaults } from "./arm/faults.ts";
import { parseCapacity } from "./arm/subscriptionCapacity.ts";
import { readComputeCapacity, type HttpGet } from "../catalog/computeCapacity.ts";
import { readPlacementEvidence } from "../lifecycle/placementEvidence.ts";
import { request } from "node:http";
import type { Cloud } from "./arm/cloud.ts";
import { RESOURCE_GROUP_TYPE } from "./arm/resourceId.ts";
import { API_VERSIONS } from "./arm/typeRules.ts";
import { ArmClient } from "./provider/armClient.ts";
import { startEmulator, type RunningEmulator } from "./emulator.ts";

/** Faults for a rehearsal from the command line (tests, or a user checking latlab's handling): JSON, see arm/faults.ts. */
export const FAULTS_ENV = "LATLAB_EMULATOR_FAULTS";
/** Time (ms) every ARM operation stays in progress, to surface ordering bugs (default: arm/cloud.ts's). */
export const DELAY_ENV = "LATLAB_EMULATOR_DELAY_MS";
/** Seconds a VM may take to be ready; emulated VMs boot in seconds, so the default is short. */
export const READY_TIMEOUT_ENV = "LATLAB_EMULATOR_READY_TIMEOUT";
const DEFAULT_READY_TIMEOUT_S = 120;

/**
 * `latlab run … --target azure --rehearse`: an emulator for this run, in a folder of its own
 * under the system's temp dir (the ARM socket lives there, and Unix socket paths are limited to
 * 107 bytes). Its state survives a crash there; the run's state.json (runState.ts) names the folder,
 * and `latlab destroy` resumes it (resumeRehearsal).
 */
/** The subscription's vCPU limits and restricted sizes for a rehearsal (JSON, see arm/subscriptionCapacity.ts). */
export const CAPACITY_ENV = "LATLAB_EMULATOR_CAPACITY";

/** A rehearsal's emulator folder is `<system temp dir>/latlab-azemu-XXXXXX` (`latlab sweep --rehearse` looks for them). */
export const EMULATOR_HOME_PREFIX = "latlab-azemu-";

/** An HttpGet that sends ARM URLs to the emulator's Unix socket (path and query only). */
export function overSocket(socketPath: string): HttpGet {
  return (url, init) =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      const req = request({ socketPath, method: init.method, path: `${u.pathname}${u.search}`, headers: init.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ ok: status >= 200 && status < 300, status, text: async () => text });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
}

export async function startRehearsal(runDir: string, log: (message: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<Rehearsal> {
  const faults = env[FAULTS_ENV] ? parseFaults(env[FAULTS_ENV]!, FAULTS_ENV) : [];
  const capacity = env[CAPACITY_ENV] ? parseCapacity(env[CAPACITY_ENV]!, CAPACITY_ENV) : undefined;
  const delay = env[DELAY_ENV] !== undefined ? Number(env[DELAY_ENV]) : undefined;
  if (delay !== undefined && !(delay >= 0)) throw new Error(`${DELAY_ENV}: expected milliseconds, got "${env[DELAY_ENV]}"`);
  const ready = env[READY_TIMEOUT_ENV] !== undefined ? Number(env[READY_TIMEOUT_ENV]) : DEFAULT_READY_TIMEOUT_S;
  if (!(ready > 0)) throw new Error(`${READY_TIMEOUT_ENV}: expected seconds, got "${env[READY_TIMEOUT_ENV]}"`);
  const home = await mkdtemp(join(tmpdir(), EMULATOR_HOME_PREFIX));
  const emulator = await startEmulator({ home, log, faults, ...(capacity ? { capacity } : {}), ...(delay !== undefined ? { delays: { default: delay } } : {}) }).catch(async (e: unknown) => {
    await rm(home, { recursive: true, force: true });
    throw e;
  });
  if (faults.length) log(`emulator: injecting faults: ${JSON.stringify(faults)}`);
  return rehearsalOf(emulator, runDir, ready);
}

/** The emulator of a rehearsal that did not finish (the runner crashed): its ARM state and VMs as they were. */
export async function resumeRehearsal(home: string, runDir: string, log: (message: string) => void): Promise<Rehearsal> {
  if (!existsSync(join(home, "state.json"))) throw new Error(`the rehearsal's emulator folder ${home} has no state.json: nothing to resume (was it removed?)`);
  // Its emulator still answering means the run is still going: a second one would take its socket and fabric.
  if (await socketAnswers(join(home, "arm.sock"))) {
    throw new LiveRunError(`the rehearsal's emulator is still running (${join(home, "arm.sock")} answers): is the run still going? Wait for it to end, then run this again`);
  }
  log(`emulator: resuming the rehearsal's emulator from ${home}`);
  return rehearsalOf(await startEmulator({ home, log }), runDir, DEFAULT_READY_TIMEOUT_S);
}

/** Does an emulator serve ARM on this socket (a run still going)? A socket file left by a killed one refuses the connection. */
export function socketAnswers(path: string): Promise<boolean> {
  if (!existsSync(path)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const s = connect(path);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/**
 * What the emulator's ARM state (arm/cloud.ts) holds of a group, as RunGroups.resources reports
 * it: the group's id first, then every resource in it (sub-resources included); [] without the group.
 */
export function groupResourceIds(cloud: Pick<Cloud, "all">, name: string): string[] {
  const inGroup = cloud.all().filter((r) => r.resourceGroup.toLowerCase() === name.toLowerCase());
  const group = inGroup.filter((r) => r.type === RESOURCE_GROUP_TYPE);
  return group.length ? [...group, ...inGroup.filter((r) => r.type !== RESOURCE_GROUP_TYPE)].map((r) => r.id) : [];
}

function rehearsalOf(emulator: RunningEmulator, runDir: string, readyTimeoutSeconds: number): Rehearsal {
  const client = new ArmClient(emulator.socketPath);
  return {
    emulatorHome: emulator.home,
    sshFrom: `${emulator.runnerAddress}/32`,
    addressSpace: emulator.addressSpace,
    env: emulator.env(),
    readyTimeoutSeconds,
    owns: (address) => emulator.owns(address),
    // Read once the VMs are up: the latency model between them, or why there is none.
    shaping: () => emulator.shaping(),
    groups: {
      async tags(name) {
        const g = await client.get(`/subscriptions/${emulator.subscription}/resourceGroups/${name}`, API_VERSIONS.resources);
        return g ? ((g.tags as Record<string, string> | undefined) ?? {}) : undefined;
      },
      delete: (name) => client.delete(`/subscriptions/${emulator.subscription}/resourceGroups/${name}`, API_VERSIONS.resources),
      // The emulator's ARM takes the DELETE (202, the group "Deleting", its state saved to disk) and deletes on its own; nothing waits.
      startDelete: async (name) => void emulator.cloud.delete(`/subscriptions/${emulator.subscription}/resourceGroups/${name}`, API_VERSIONS.resources),
      resources: async (name) => groupResourceIds(emulator.cloud, name),
    },
    // The same reader as for Azure, its requests answered by the emulator's socket: no network.
    readCapacity: (regions) => readComputeCapacity(regions, { subscriptionId: emulator.subscription, token: async () => "rehearsal", http: overSocket(emulator.socketPath) }),
    // Azure's reader too, its requests answered by the emulator: the colocation status is the emulator's (arm/typeRules.ts).
    readPlacement: (plan, outputs) => readPlacementEvidence(plan, outputs, { token: async () => "rehearsal", http: overSocket(emulator.socketPath), source: "emulator" }),
    facts: {
      emulatorSubscription: emulator.subscription,
      emulatorRunnerAddress: emulator.runnerAddress,
      emulatorHome: emulator.home,
      emulatorNamespaces: `${emulator.namespacePrefix}*`,
      vnetAddressSpace: emulator.addressSpace,
    },
    /** Stops the emulator, keeps its operations log in the run folder (azure-emulator/), removes its folder. */
    async stop() {
      const kept = join(runDir, "azure-emulator");
      const source = join(emulator.home, "operations.jsonl");
      const report = await emulator.stop();
      const errors = [...report.errors];
      try {
        if (existsSync(source)) {
          await mkdir(kept, { recursive: true });
          await copyFile(source, join(kept, "operations.jsonl"));
        }
        await rm(emulator.home, { recursive: true, force: true });
      } catch (e) {
        errors.push(`emulator folder ${emulator.home}: ${(e as Error).message}`);
      }
      return { errors, removed: [...report.removed, `directory ${emulator.home}`] };
    },
  };
}
