// Retries an assertion until it passes or the attempts run out (for effects written in the background).
export async function eventually<T>(check: () => Promise<T> | T, attempts = 40, delayMs = 50): Promise<T> {
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await check();
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
  throw lastError;
}
