import { isIP } from "node:net";
import type { FetchLike } from "../catalog/prices.ts";

/**
 * Services that answer with the caller's public IP as plain text. Asked only when the user
 * says `--ssh-from auto`: latlab never contacts a third party without being told to.
 */
export const ADDRESS_SERVICES = ["https://api.ipify.org", "https://ifconfig.me/ip", "https://icanhazip.com"] as const;

/**
 * The runner's public address as a single-host CIDR (/32 or /128), from the first service that
 * answers with a valid IP. Throws naming every service and what went wrong.
 */
export async function detectRunnerAddress(fetchFn: FetchLike = fetch as unknown as FetchLike, services: readonly string[] = ADDRESS_SERVICES): Promise<{ cidr: string; source: string }> {
  const problems: string[] = [];
  for (const url of services) {
    try {
      const response = (await fetchFn(url)) as Awaited<ReturnType<FetchLike>> & { text?: () => Promise<string> };
      if (!response.ok) {
        problems.push(`${url}: HTTP ${response.status}`);
        continue;
      }
      const body = response.text ? await response.text() : String(await response.json());
      const address = body.trim();
      const family = isIP(address);
      if (!family) {
        problems.push(`${url}: answered ${JSON.stringify(address.slice(0, 40))}, not an IP address`);
        continue;
      }
      return { cidr: `${address}/${family === 4 ? 32 : 128}`, source: url };
    } catch (error) {
      problems.push(`${url}: ${(error as Error).message}`);
    }
  }
  throw new Error(`could not detect this machine's public address (${problems.join("; ")}): pass --ssh-from CIDR`);
}
