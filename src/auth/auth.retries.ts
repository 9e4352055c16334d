import type { AuthConfig } from '../config/auth.config';
import { describedSettings, type RetryDescription } from '../config/retry-description';

/** Authentication's retry-like settings (key cache, rate-limit window), listed with the service's. */
export function authRetries(auth: AuthConfig): RetryDescription[] {
  return describedSettings(auth, 'service', 'auth.config.ts');
}
