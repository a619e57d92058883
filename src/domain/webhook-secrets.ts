/**
 * Which webhook secrets sign a delivery. The header holds one signature per signing secret, so at most
 * 1 + PREVIOUS_SECRETS_MAX sign; a rotation past that drops the oldest, never refused: it replaces a leaked secret.
 */

/** Previous secrets that still sign beside the current one (while their overlap lasts). */
export const PREVIOUS_SECRETS_MAX = 3;

/** A secret as the rules see it: `expiresAt` in epoch ms, null for the current one. Newest first in a list. */
export interface SecretEntry<S = string> {
  secret: S;
  expiresAt: number | null;
}

const expiryMs = (e: SecretEntry<unknown>): number => e.expiresAt ?? Infinity;

/** The secrets that sign a delivery at `now`: the newest ones still valid, at most 1 + PREVIOUS_SECRETS_MAX. */
export function signingSecrets<T extends SecretEntry<unknown>>(secrets: readonly T[], now: number): T[] {
  return secrets.filter((s) => expiryMs(s) > now).slice(0, 1 + PREVIOUS_SECRETS_MAX);
}

/**
 * A rotation at `now`: `secret` (no expiry), then up to PREVIOUS_SECRETS_MAX valid previous ones expiring by
 * `now + overlapMs`; `dropped`: the oldest valid ones past the bound, which stop signing at once.
 */
export function rotateSecrets<S>(
  current: readonly SecretEntry<S>[],
  secret: S,
  now: number,
  overlapMs: number,
): { secrets: { secret: S; expiresAt: number | null }[]; dropped: S[] } {
  const valid = current
    .filter((s) => expiryMs(s) > now)
    .map((s) => ({ secret: s.secret, expiresAt: Math.min(expiryMs(s), now + overlapMs) }));
  return {
    secrets: [{ secret, expiresAt: null }, ...valid.slice(0, PREVIOUS_SECRETS_MAX)],
    dropped: valid.slice(PREVIOUS_SECRETS_MAX).map((s) => s.secret),
  };
}
