import { HealthController } from '../health/health.controller';
import { MetricsController } from '../metrics/metrics.controller';
import { Public, PublicIf } from './access.decorators';

/**
 * Access declarations of controllers that predate the auth module (owned by health/ and metrics/).
 * Equivalent to writing `@Public()` on HealthController and `@PublicIf('METRICS_PUBLIC', 'admin')`
 * on MetricsController; kept here until those files carry the decorators themselves.
 * Idempotent (metadata is simply set again).
 */
export function declareFoundationRoutes(): void {
  Public()(HealthController);
  PublicIf('METRICS_PUBLIC', 'admin')(MetricsController);
}
