/**
 * Which of a webhook endpoint's secrets sign a delivery, and what a rotation keeps. Pure, clock injected.
 *
 * The signature header carries one signature per signing secret, so their number is bounded: the
 * current secret plus at most PREVIOUS_SECRETS_MAX previous ones, each only until its overlap ends
 * (about 200 bytes of header at most, whatever the number of rotations). A rotation beyond the bound
 * drops the oldest previous secret rather than being refused: rotating is how a leaked secret is
 * replaced, so it must always be possible.
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
 * A rotation at `now`: `secret` first (no expiry), then the previous secrets still valid, each until
 * `now + overlapMs` at the latest (an earlier expiry is kept), at most PREVIOUS_SECRETS_MAX of them;
 * `dropped` are the valid ones beyond the bound (the oldest), which stop signing at once.
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
