/**
 * Shared by the integration tests that drive latlab's Azure emulator (azureEmulatorFabric,
 * azurePulumiProject): ARM request bodies as Azure's REST API wants them, SSH keys made with
 * ssh-keygen, SSH to an emulated VM with its host key pinned, and what the machine holds
 * (namespaces, processes) to check that nothing is left behind. Not a test file itself.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { NodeSSH } from "node-ssh";
import { API_VERSIONS } from "../../src/targets/azure/emulator/arm/typeRules.ts";
import { ArmClient } from "../../src/targets/azure/emulator/provider/armClient.ts";
import { customData } from "../../src/targets/azure/program/cloudInit.ts";
import { execCommand } from "../../src/targets/local/exec.ts";
import { parseNetnsList } from "../../src/targets/local/network/names.ts";

export const ADMIN = "latlab";
export const N = API_VERSIONS.network;
export const C = API_VERSIONS.compute;
export const R = API_VERSIONS.resources;

export async function run(argv: string[]): Promise<string> {
  const r = await execCommand(argv);
  if (r.code !== 0) throw new Error(`${argv.join(" ")} exited ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Every network namespace on the machine. */
export async function namespaces(): Promise<string[]> {
  return parseNetnsList(await run(["ip", "netns", "list"]));
}

/** PIDs whose command line mentions `text` (a temp folder, a socket path). */
export function processesMentioning(text: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(text);
      } catch {
        return false;
      }
    });
}

export interface KeyPair {
  privateKey: string;
  /** "type base64" (no comment). */
  publicKey: string;
}

const publicLine = (path: string) => readFileSync(`${path}.pub`, "utf8").trim().split(/\s+/).slice(0, 2).join(" ");

/** The runner's client key (RSA, as latlab:sshPublicKey wants it). */
export async function rsaKey(dir: string, name = "client_rsa"): Promise<KeyPair & { path: string }> {
  const path = join(dir, name);
  await run(["ssh-keygen", "-q", "-t", "rsa", "-b", "3072", "-N", "", "-C", "latlab-test-client", "-f", path]);
  return { path, privateKey: readFileSync(path, "utf8"), publicKey: publicLine(path) };
}

/** A VM's host key (ed25519), as latlab generates one per host. */
export async function hostKey(dir: string, name: string): Promise<KeyPair> {
  const path = join(dir, `host_${name}`);
  await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", `latlab-host-${name}`, "-f", path]);
  return { privateKey: readFileSync(path, "utf8"), publicKey: publicLine(path) };
}

/** Ids in one resource group of the emulator's subscription. */
export function armIds(subscription: string, group: string) {
  const rg = `/subscriptions/${subscription}/resourceGroups/${group}`;
  const net = `${rg}/providers/Microsoft.Network`;
  const compute = `${rg}/providers/Microsoft.Compute`;
  return {
    rg,
    vnet: (name: string) => `${net}/virtualNetworks/${name}`,
    subnet: (vnet: string, name: string) => `${net}/virtualNetworks/${vnet}/subnets/${name}`,
    peering: (vnet: string, name: string) => `${net}/virtualNetworks/${vnet}/virtualNetworkPeerings/${name}`,
    pip: (name: string) => `${net}/publicIPAddresses/${name}`,
    nsg: (name: string) => `${net}/networkSecurityGroups/${name}`,
    nic: (name: string) => `${net}/networkInterfaces/${name}`,
    vm: (name: string) => `${compute}/virtualMachines/${name}`,
  };
}

export interface SecurityRule {
  name: string;
  priority: number;
  access?: "Allow" | "Deny";
  protocol: "Tcp" | "Udp" | "Icmp" | "*";
  source: string;
  port?: string;
  destination?: string;
}

/** An NSG body (inbound rules only), shaped as latlab's program writes them. */
export function nsgBody(location: string, rules: readonly SecurityRule[]) {
  return {
    location,
    properties: {
      securityRules: rules.map((r) => ({
        name: r.name,
        properties: {
          priority: r.priority,
          direction: "Inbound",
          access: r.access ?? "Allow",
          protocol: r.protocol,
          sourcePortRange: "*",
          destinationPortRange: r.port ?? "*",
          sourceAddressPrefix: r.source,
          destinationAddressPrefix: r.destination ?? "*",
        },
      })),
    },
  };
}

export interface VmSpec {
  name: string;
  location: string;
  zone?: string;
  vnet: string;
  subnet: string;
  privateIp: string;
  clientKey: KeyPair;
  hostKey: KeyPair;
  rules: readonly SecurityRule[];
}

/**
 * Creates a public IP, an NSG, a NIC and a VM (in that order, each PUT waiting for its
 * operation), as latlab's program does for one host. Returns the public address ARM handed out.
 */
export async function createVm(arm: ArmClient, ids: ReturnType<typeof armIds>, spec: VmSpec): Promise<{ publicIp: string }> {
  const pip = await arm.put(ids.pip(`${spec.name}-pip`), N, {
    location: spec.location,
    sku: { name: "Standard", tier: "Regional" },
    ...(spec.zone ? { zones: [spec.zone] } : {}),
    properties: { publicIPAllocationMethod: "Static", publicIPAddressVersion: "IPv4" },
  });
  const publicIp = (pip.properties as { ipAddress?: string }).ipAddress;
  if (!publicIp) throw new Error(`public IP of ${spec.name} has no address: ${JSON.stringify(pip)}`);
  await arm.put(ids.nsg(`${spec.name}-nsg`), N, nsgBody(spec.location, spec.rules));
  await arm.put(ids.nic(`${spec.name}-nic`), N, {
    location: spec.location,
    properties: {
      networkSecurityGroup: { id: ids.nsg(`${spec.name}-nsg`) },
      ipConfigurations: [
        {
          name: "ipconfig1",
          properties: {
            primary: true,
            privateIPAllocationMethod: "Static",
            privateIPAddress: spec.privateIp,
            privateIPAddressVersion: "IPv4",
            subnet: { id: ids.subnet(spec.vnet, spec.subnet) },
            publicIPAddress: { id: ids.pip(`${spec.name}-pip`) },
          },
        },
      ],
    },
  });
  await arm.put(ids.vm(spec.name), C, {
    location: spec.location,
    ...(spec.zone ? { zones: [spec.zone] } : {}),
    properties: {
      // A size a new subscription may deploy (the emulator closes previous-generation ones such as B1s).
      hardwareProfile: { vmSize: "Standard_B2ts_v2" },
      osProfile: {
        computerName: spec.name,
        adminUsername: ADMIN,
        customData: customData({ hostName: spec.name, hostKey: spec.hostKey }),
        linuxConfiguration: {
          disablePasswordAuthentication: true,
          ssh: { publicKeys: [{ path: `/home/${ADMIN}/.ssh/authorized_keys`, keyData: spec.clientKey.publicKey }] },
        },
      },
      storageProfile: {
        imageReference: { publisher: "Canonical", offer: "ubuntu-24_04-lts", sku: "server", version: "latest" },
        osDisk: { createOption: "FromImage", deleteOption: "Delete", managedDisk: { storageAccountType: "StandardSSD_LRS" } },
      },
      networkProfile: { networkInterfaces: [{ id: ids.nic(`${spec.name}-nic`), properties: { primary: true, deleteOption: "Delete" } }] },
    },
  });
  return { publicIp };
}

/**
 * SSH as the admin user with the host key pinned (as src/runner/ssh.ts connects). One attempt:
 * rejects when the connection cannot be made within `readyTimeoutMs`.
 */
export async function sshConnect(host: string, key: { privateKey: string }, pinnedHostKey: string, readyTimeoutMs = 20_000): Promise<NodeSSH> {
  const expected = Buffer.from(pinnedHostKey.trim().split(/\s+/)[1]!, "base64");
  const ssh = new NodeSSH();
  try {
    await ssh.connect({
      host,
      port: 22,
      username: ADMIN,
      privateKey: key.privateKey,
      readyTimeout: readyTimeoutMs,
      hostVerifier: (k: Buffer) => Buffer.compare(k, expected) === 0,
    } as Parameters<NodeSSH["connect"]>[0]);
    return ssh;
  } catch (e) {
    ssh.dispose();
    throw e;
  }
}

/** Quotes a string for a POSIX shell. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs a command over an open connection; rejects on a non-zero exit with its output. */
export async function sshRun(ssh: NodeSSH, command: string): Promise<string> {
  const r = await ssh.execCommand(command);
  if (r.code !== 0) throw new Error(`${command.slice(0, 80)}: exit ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

/**
 * The provider plugin processes of an emulator (by its folder) still alive, after up to 10 s for
 * them to go: a killed engine's plugin has its own process group, which a kill of the engine's
 * group misses, and must be gone once the run is finished.
 */
export async function providerPluginsLeft(home: string): Promise<string[]> {
  const plugins = () =>
    readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes("pulumi-resource-azure-native") && readFileSync(`/proc/${p}/environ`, "utf8").includes(home);
        } catch {
          return false;
        }
      });
  for (let i = 0; i < 100 && plugins().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  return plugins();
}
