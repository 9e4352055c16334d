/**
 * The service's version (package.json `version`), as the OpenAPI document and the replicas' heartbeat rows name
 * it. A constant rather than a read of package.json at run time: the compiled service runs from dist/ without
 * knowing where the package root is. `service-version.spec.ts` keeps the two equal.
 */
export const SERVICE_VERSION = '0.1.0';
