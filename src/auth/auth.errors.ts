/** One message for every authentication failure: the caller learns nothing about which one. */
export const UNAUTHORIZED_MESSAGE =
  'A valid API key is required (Authorization: Bearer <key> or x-api-key: <key>)';
