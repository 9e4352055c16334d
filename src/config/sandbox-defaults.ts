/**
 * Documented, sandbox-only default credentials (test money only; they are not secrets). A plain module, no
 * decorators: the sandbox reads these defaults without loading the config classes (or reflect-metadata).
 */
export const DEFAULT_SANDBOX_API_KEY = 'trk_test_sandbox_full_access_0000000000000001';
export const DEFAULT_SANDBOX_READONLY_API_KEY = 'trk_test_sandbox_read_only_00000000000000002';
export const DEFAULT_SANDBOX_ADMIN_KEY = 'sandbox-admin-local-only';
