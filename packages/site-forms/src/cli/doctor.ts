/**
 * `npm run doctor`: checks the configuration the server would start with, and everything it
 * talks to (database, mail server, Redis, newsletter provider), changing nothing. Exits 1 when
 * something would stop the site working as configured.
 */
import { loadEnvFile } from '../lib/config/config.ts';
import { diagnose, formatFindings } from '../lib/app/doctor.ts';

loadEnvFile();
const findings = await diagnose(process.env);
process.stdout.write(formatFindings(findings));
process.exitCode = findings.some((f) => f.result === 'error') ? 1 : 0;
