import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Loaded by path (`failureConverterPath`), because the workflow sandbox needs its own copy:
 * failures raised by workflow code (a failed turn) are converted inside the sandbox. With
 * `encodeCommonAttributes` a failure's message and stack trace move into a payload, which
 * the codec then encrypts; the server only sees "Encoded failure". Types stay readable, so
 * retry policies and the UI still work on `rate_limit`, `auth_error`, …
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
