import settings from '#site-config';
import type { ContactEmailSite } from '../mail/email.ts';

/**
 * The owner's site settings (site.config.ts at the project's root), as the build read them.
 * Hint: `#site-config` is an import of package.json; a build with SITE_CONFIG set reads
 * another file instead (src/integration/integration.ts, scripts/build-server.mjs).
 */
export const site = settings;

/**
 * Which site the owner's mail comes from and where they read it: the admin at PUBLIC_URL
 * when both are set, the admin's path alone when PUBLIC_URL is not, nothing without the admin.
 */
export function siteForMail({ admin, publicUrl }: { admin: unknown; publicUrl: string | undefined }): ContactEmailSite {
  return { name: site.name, senderName: site.senderName, adminOrigin: admin ? (publicUrl ?? '') : undefined, timeZone: site.timeZone };
}
