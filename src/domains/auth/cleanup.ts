import type { Services } from "../../services.ts";
import * as repo from "./repo.ts";
import { REFRESH_TOKEN_TTL_MS } from "./tokens.ts";

// Rate events are only read over windows of at most a day (the wrong-tries limit).
const RATE_EVENT_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Periodic clean-up (run on croner, registered in src/wiring.ts): expired codes and refresh tokens,
 * rate events older than any window, and sign-in sessions that can no longer be used.
 */
export async function cleanupExpiredAuth(services: Services) {
  const now = services.clock.now();
  const removed = await repo.deleteExpired(
    services.database.db,
    now,
    new Date(now.getTime() - RATE_EVENT_RETENTION_MS),
    new Date(now.getTime() - REFRESH_TOKEN_TTL_MS),
  );
  services.logger.debug({ removed }, "expired sign-in records removed");
  return removed;
}
