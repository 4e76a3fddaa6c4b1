import { publicOrigin } from '../origin.ts';
import { services } from '../services.ts';
import type { Admin } from './admin.ts';

/**
 * What an admin page needs from the process: the admin (`undefined` when it is off) and the
 * public origin of this request, which decides `Secure` cookies and the Origin check.
 */
export function adminOf(request: Request): { admin: Admin | undefined; publicOrigin: string | undefined } {
  const { admin, config } = services();
  return { admin, publicOrigin: publicOrigin(request.headers, config) };
}
