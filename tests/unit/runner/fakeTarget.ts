import type { Plan } from "../../../src/plan/types.ts";
import type { Progress } from "../../../src/runner/progress.ts";
import type { HostEndpoint, Target } from "../../../src/targets/target.ts";
import { endpoint } from "./fakeSsh.ts";

/** A Progress that prints nothing. */
export const silentProgress: Progress = { start() {}, cellStarted() {}, cellFinished() {}, log() {}, stop() {} };

export interface FakeTargetOptions {
  /** A deployment's host of that role, or undefined for one the target does not bring up; `up` counts the calls to up() (1 for the first). Default: endpoint(deployment, role). */
  host?: (deployment: string, role: string, up: number) => HostEndpoint | undefined;
  /** Target.concurrentDeployments; absent when undefined. */
  concurrentDeployments?: boolean;
}

/** A target whose hosts are the runner tests' fake endpoints; it records the deployments of each up() and counts down() calls. */
export function fakeTarget(options: FakeTargetOptions = {}): Target & { ups: string[][]; downs: number } {
  const host = options.host ?? ((deployment, role) => endpoint(deployment, role));
  const target = {
    name: "fake",
    ...(options.concurrentDeployments === undefined ? {} : { concurrentDeployments: options.concurrentDeployments }),
    ups: [] as string[][],
    downs: 0,
    async up(p: Plan) {
      target.ups.push(p.deployments.map((d) => d.id));
      const hosts = p.deployments.flatMap((d) => d.hosts.map((h) => host(d.id, h.role, target.ups.length)).filter((e): e is HostEndpoint => e !== undefined));
      return { hosts, shaping: { latency: "not-applicable" as const, bandwidth: "not-applicable" as const, note: "shaping: not applicable (fake)" }, facts: {} };
    },
    async down() {
      target.downs++;
      return { status: "ok" as const, errors: [], removed: [] };
    },
  };
  return target;
}
