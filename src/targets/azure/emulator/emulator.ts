import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ShapingStatus } from "../../../results/schema.ts";
import type { ExecFn } from "../../local/exec.ts";
import { startArmServer, type ArmServer } from "./arm/armServer.ts";
import { Cloud, type CloudSnapshot, type OperationLogEntry } from "./arm/cloud.ts";
import type { Fault } from "./arm/faults.ts";
import { CapacitySchema, withSubscriptionLimits, type Capacity } from "./arm/subscriptionCapacity.ts";
import { createTypeRules, TYPES } from "./arm/typeRules.ts";
import { Fabric } from "./fabric/fabric.ts";
import type { ShapingFunctions } from "./fabric/vmShaping.ts";
import { rehearsalShapingStatus } from "./rehearsalShaping.ts";
import { ALLOWED_VNET_SPACE } from "./fabric/vnetRuleset.ts";
import { validateArmBodyForArmType } from "./spec/armSpec.ts";
import { bootVm, stopVm } from "./vm/bootVm.ts";

/**
 * latlab's Azure emulator, in one call: ARM (./arm) behind a Unix socket, the kernel fabric
 * (./fabric) that makes VNets, NSGs and peerings real, VMs that boot as hosts (./vm), and the
 * folder holding the `pulumi-resource-azure-native` plugin (./bin) that the Pulumi engine runs
 * when it is first on PATH. A rehearsal (`latlab run … --target azure --rehearse`) and the
 * tests start one, point the engine at it with env(), and stop it at the end — which removes
 * whatever is left and says so, since a resource left in ARM after `pulumi destroy` is a leak
 * a real run would have paid for.
 */

export const PLUGIN_BIN_DIR = fileURLToPath(new URL("./bin/", import.meta.url));
/** What the real azure-native provider would authenticate with: blanked for a rehearsal's engine. */
const AZURE_CREDENTIAL_ENV = [
  "ARM_CLIENT_ID",
  "ARM_CLIENT_SECRET",
  "ARM_TENANT_ID",
  "ARM_SUBSCRIPTION_ID",
  "ARM_USE_MSI",
  "ARM_USE_OIDC",
  "ARM_OIDC_TOKEN",
  "ARM_CLIENT_CERTIFICATE_PATH",
  "AZURE_CLIENT_ID",
  "AZURE_CLIENT_SECRET",
  "AZURE_TENANT_ID",
  "AZURE_SUBSCRIPTION_ID",
  "AZURE_FEDERATED_TOKEN_FILE",
];

/** The environment variable that tells the provider plugin where ARM listens. */
export const EMULATOR_SOCKET_ENV = "LATLAB_AZURE_EMULATOR";

export interface EmulatorOptions {
  /**
   * Folder for the emulator's state (state.json, operations.jsonl, the socket, VMs' files). A
   * second emulator started on the same folder resumes the first one's state. Default: a new
   * folder under the system's temp dir.
   */
  home?: string;
  faults?: readonly Fault[];
  /** The subscription's profile, quotas and restricted sizes (default: a new pay-as-you-go subscription, arm/subscriptionCapacity.ts). */
  capacity?: Capacity;
  /** Time an operation stays in progress, per ARM type (lower case) or "default", in ms. */
  delays?: Readonly<Record<string, number>>;
  log?: (message: string) => void;
  exec?: ExecFn;
  /** How latency is detected and applied between the VMs (default: the local target's). */
  shaping?: ShapingFunctions;
}

export interface RunningEmulator {
  home: string;
  socketPath: string;
  subscription: string;
  /** The runner's address as the VMs see it (an NSG's SSH source). */
  runnerAddress: string;
  /** Where VNets may live in this emulator. */
  addressSpace: string;
  /** Is this an address the emulator handed out (a public IP of its /24, or its VNets' space)? */
  owns(address: string): boolean;
  /** Every namespace this emulator creates starts with this. */
  namespacePrefix: string;
  cloud: Cloud;
  /** Environment for the Pulumi CLI: the plugin first on PATH, the socket. */
  env(base?: NodeJS.ProcessEnv): Record<string, string>;
  operations(): readonly OperationLogEntry[];
  /** The latency shaping between the VMs now, as results.json records it (rehearsalShaping.ts). */
  shaping(): ShapingStatus;
  /**
   * Stops serving and removes everything still there. `leftInArm` lists the resources ARM still
   * held (what a destroy missed); `errors` also names them, and what could not be removed.
   * `keepState`: ARM's state stays in state.json (its resources are not errors then): a later
   * emulator on the same home resumes it (`latlab sweep` leaves an emulator holding groups it kept so).
   */
  stop(options?: { keepState?: boolean }): Promise<{ errors: string[]; removed: string[]; leftInArm: string[] }>;
}

const shortOf = (home: string) => createHash("sha256").update(home).digest("hex").slice(0, 5);
/** Every namespace of the emulator living in `home` starts with this. */
export const emulatorNamespacePrefix = (home: string) => `az${shortOf(home)}-`;

/** A GUID-shaped subscription id, stable for a home folder. */
function subscriptionFor(home: string): string {
  const h = createHash("sha256").update(`subscription:${home}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const home = options.home ?? join(tmpdir(), `latlab-azemu-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const statePath = join(home, "state.json");
  const logPath = join(home, "operations.jsonl");
  const socketPath = join(home, "arm.sock");
  const snapshot: CloudSnapshot | undefined = existsSync(statePath) ? (JSON.parse(readFileSync(statePath, "utf8")) as CloudSnapshot) : undefined;
  const subscription = snapshot?.subscription ?? subscriptionFor(home);
  const log = options.log ?? (() => undefined);

  const fabric = new Fabric({
    short: shortOf(home),
    stateDir: home,
    exec: options.exec,
    log,
    ...(options.shaping ? { shaping: options.shaping } : {}),
    vms: {
      async boot(request) {
        await bootVm({ ...request, ...(options.exec ? { exec: options.exec } : {}) });
      },
      stop: (namespace, stateDir) => stopVm(namespace, stateDir, options.exec ? { exec: options.exec } : {}),
    },
  });
  await fabric.start();
  if (snapshot) {
    fabric.adoptPublicIps(
      snapshot.resources
        .filter((r) => r.type.toLowerCase() === TYPES.publicIp.toLowerCase())
        .map((r) => (r.body.properties as Record<string, unknown> | undefined)?.ipAddress)
        .filter((x): x is string => typeof x === "string"),
    );
  }

  const capacity = options.capacity ?? CapacitySchema.parse({});
  // The subscription's public IP quota and VM allocation wrap the platform's rules.
  const rules = withSubscriptionLimits(
    createTypeRules({
      schemaCheck: (armType, body) => validateArmBodyForArmType(armType, body),
      network: fabric,
      vm: fabric,
      capacity,
    }),
    capacity,
  );
  const cloud = new Cloud({
    subscription,
    rules,
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.delays ? { delays: options.delays } : {}),
    ...(snapshot ? { snapshot } : {}),
    onChange: async (view) => {
      try {
        await fabric.sync(view);
      } catch (e) {
        log(`emulator: fabric: ${(e as Error).message}`);
        throw e;
      }
    },
    onWarning: (m) => log(`emulator: ${m}`),
    onLog: (entry) => appendFileSync(logPath, `${JSON.stringify(entry)}\n`),
    onKillRunner: (reason) => {
      appendFileSync(join(home, "killed-runner.txt"), `${new Date().toISOString()} ${reason}\n`);
      // Signal 0's process group: this process (the runner) and the Pulumi CLI and plugin it started.
      process.kill(0, "SIGKILL");
    },
    onPersist: (s) => writeFileSync(statePath, `${JSON.stringify(s)}\n`),
  });
  let server: ArmServer;
  try {
    if (snapshot) await fabric.sync(cloud);
    server = await startArmServer(cloud, socketPath, () => ({ subscription, runnerAddress: fabric.runnerAddress, addressSpace: ALLOWED_VNET_SPACE }), capacity);
  } catch (e) {
    await fabric.shutdown();
    throw e;
  }
  log(`emulator: ARM listening on ${socketPath} (subscription ${subscription})`);

  let stopped: Promise<{ errors: string[]; removed: string[]; leftInArm: string[] }> | undefined;
  return {
    home,
    socketPath,
    subscription,
    runnerAddress: fabric.runnerAddress,
    addressSpace: ALLOWED_VNET_SPACE,
    namespacePrefix: emulatorNamespacePrefix(home),
    owns: (address) => fabric.owns(address),
    cloud,
    env(base = process.env) {
      return {
        PATH: [PLUGIN_BIN_DIR.replace(/\/$/, ""), base.PATH ?? ""].filter(Boolean).join(delimiter),
        [EMULATOR_SOCKET_ENV]: socketPath,
        // The engine must take the emulator's plugin from PATH ("ambient"), never a real azure-native
        // it may also find; and a real one, were it run anyway, finds no credentials to deploy with.
        PULUMI_IGNORE_AMBIENT_PLUGINS: "false",
        ...Object.fromEntries(AZURE_CREDENTIAL_ENV.map((k) => [k, ""])),
      };
    },
    operations: () => cloud.log,
    shaping: () => rehearsalShapingStatus(fabric.shapingState()),
    stop(stopOptions = {}) {
      stopped ??= (async () => {
        await server.close();
        await cloud.close();
        const leftInArm = cloud.all().map((r) => `${r.type} ${r.id} (${r.state})`);
        const errors = stopOptions.keepState ? [] : leftInArm.map((r) => `still in the emulator's ARM after the destroy (on Azure this would be a leak): ${r}`);
        const report = await fabric.shutdown();
        // The log outlives the emulator's folder where the caller wants it (copied by the rehearsal).
        if (!stopOptions.keepState) await rm(statePath, { force: true });
        if (!options.home) await rm(home, { recursive: true, force: true });
        return { errors: [...errors, ...report.errors], removed: report.removed, leftInArm };
      })();
      return stopped;
    },
  };
}
