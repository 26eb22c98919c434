import { z } from "zod";

/**
 * What an ordinary new pay-as-you-go subscription may hold in one region, as Microsoft documents
 * its default limits. `latlab plan` (offline, no Azure access) sizes a plan's waves against these
 * figures; a real run reads the subscription's own (computeCapacity.ts) and uses those instead;
 * latlab's Azure emulator plays the same profile (emulator/arm/subscriptionCapacity.ts imports
 * it), so a rehearsal meets the limits a new subscription would.
 *
 * Every figure carries where it was read: repository, path, commit and the sentence. Microsoft
 * says these defaults "vary by offer category type" — a given subscription may have more (an
 * Enterprise Agreement: 350 vCPUs, 1000 public IPs) or, in practice, less: the live figures are
 * what a run obeys; these are what latlab assumes when it cannot ask.
 *
 * Shape is stable: { regionalVcpus, familyVcpus, publicIps, sources }. Add fields, never rename.
 */

export const ProfileSourceSchema = z
  .object({
    /** Which figure of the profile this backs. */
    figure: z.enum(["regionalVcpus", "familyVcpus", "publicIps"]),
    repo: z.string(),
    path: z.string(),
    commit: z.string().regex(/^[0-9a-f]{40}$/),
    /** The documented sentence (table row or footnote), verbatim. */
    sentence: z.string(),
    /** Where a person reads it today. */
    url: z.string().url(),
  })
  .strict();
export type ProfileSource = z.infer<typeof ProfileSourceSchema>;

export const SubscriptionProfileSchema = z
  .object({
    /** A name for messages: "new pay-as-you-go subscription (documented defaults)". */
    name: z.string(),
    /** "Total Regional vCPUs" (Compute usage `cores`) per region. */
    regionalVcpus: z.number().int().positive(),
    /** vCPUs of each VM family quota (Compute usage `standard…Family`) per region, the same default for every family. */
    familyVcpus: z.number().int().positive(),
    /** Standard SKU public IPv4 addresses per region (Network usage; every latlab public IP is Standard, static, IPv4). */
    publicIps: z.number().int().positive(),
    sources: z.array(ProfileSourceSchema).min(3),
  })
  .strict();
export type SubscriptionProfile = z.infer<typeof SubscriptionProfileSchema>;

const VM_LIMITS = {
  repo: "MicrosoftDocs/azure-docs",
  path: "includes/azure-virtual-machines-limits-azure-resource-manager.md",
  commit: "c9326a42ed199307f237e08d87f9c89bc005d59c",
  url: "https://learn.microsoft.com/azure/azure-resource-manager/management/azure-subscription-service-limits#virtual-machines-limits---azure-resource-manager",
} as const;

const NETWORK_LIMITS = {
  repo: "MicrosoftDocs/azure-docs",
  path: "includes/azure-virtual-network-limits.md",
  commit: "04cb4ea055a71c3905902eea87fa5d417de31501",
  url: "https://learn.microsoft.com/azure/azure-resource-manager/management/azure-subscription-service-limits#publicip-address",
} as const;

/** The documented defaults of a new pay-as-you-go subscription, per region. */
export const NEW_SUBSCRIPTION_PROFILE: SubscriptionProfile = SubscriptionProfileSchema.parse({
  name: "new pay-as-you-go subscription (documented default quotas)",
  regionalVcpus: 20,
  familyVcpus: 20,
  publicIps: 10,
  sources: [
    {
      figure: "regionalVcpus",
      ...VM_LIMITS,
      sentence:
        "| VM total cores per [subscription](../articles/billing-buy-sign-up-azure-subscription.md) |20<sup>1</sup> per region. Contact support to increase limit. | " +
        "<sup>1</sup>Default limits vary by offer category type, such as Free Trial and Pay-As-You-Go, and by series, such as Dv2, F, and G. For example, the default for Enterprise Agreement subscriptions is 350.",
    },
    {
      figure: "familyVcpus",
      ...VM_LIMITS,
      sentence: "| VM per series, such as Dv2 and F, cores per [subscription](../articles/billing-buy-sign-up-azure-subscription.md) |20<sup>1</sup> per region. Contact support to increase limit. |",
    },
    {
      figure: "publicIps",
      ...NETWORK_LIMITS,
      sentence:
        "The following limits apply only for networking resources managed through **Azure Resource Manager** per region per subscription. … " +
        "| Standard Public IP addresses<sup>1</sup> | 10 | Contact support | " +
        "<sup>1</sup>Default limits for Public IP addresses vary by offer category type, such as Free Trial, Pay-As-You-Go, CSP. For example, the default for Enterprise Agreement subscriptions is 1000.",
    },
  ],
});

/** One line for `latlab plan`: what the waves were sized against. */
export function describeProfile(p: SubscriptionProfile = NEW_SUBSCRIPTION_PROFILE): string {
  return `${p.name}: ${p.regionalVcpus} total regional vCPUs, ${p.familyVcpus} vCPUs per VM family, ${p.publicIps} Standard public IPv4 addresses, per region (${[...new Set(p.sources.map((s) => `${s.repo} ${s.path} @ ${s.commit.slice(0, 7)}`))].join("; ")})`;
}
