/**
 * The scripted LLM's stand-in for a model's context window: a request counts one token per
 * four characters of its JSON, the same estimate its replies report as input tokens, so a
 * session that measures its requests by the reported usage sees the sizes this window checks.
 */
export function requestTokens(body: unknown): number {
  const json = typeof body === 'string' ? body : JSON.stringify(body ?? {});
  return Math.max(1, Math.ceil(json.length / 4));
}

/**
 * The configured windows, per model, with a default for models without their own. A
 * request above its model's window is refused with the provider's context-overflow error.
 */
export class ContextWindows {
  private readonly windows = new Map<string, number>();

  constructor(private readonly fallback: number | undefined = undefined) {}

  /** `null` removes the model's own window, so the default (if any) applies again. */
  set(model: string, tokens: number | null): void {
    if (tokens === null) this.windows.delete(model);
    else this.windows.set(model, checkedWindow(tokens, `the context window for model "${model}"`));
  }

  of(model: string): number | undefined {
    return this.windows.get(model) ?? this.fallback;
  }
}

/** A window is a positive whole number of tokens; anything else is a test's typo, said at once. */
export function checkedWindow(tokens: number, what: string): number {
  if (!Number.isSafeInteger(tokens) || tokens < 1) throw new Error(`scripted LLM: ${what} must be a positive whole number of tokens, got ${tokens}`);
  return tokens;
}
