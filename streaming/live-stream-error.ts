/** The live stream cannot start as configured: one line naming the setting, never a credential. */
export class LiveStreamError extends Error {
  override name = 'LiveStreamError';
}
