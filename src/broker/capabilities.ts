// Capability tokens: one per run, standing for its repo, run, task, agent uid
// and expiry, revoked when the run ends. The store keeps only a token's
// SHA-256, looked up by it and compared in constant time, so neither a memory
// dump of the store nor the timing of a refusal gives a token away. Tokens
// come from an injected source of randomness (src/io/broker/ has the real one).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Grant } from './types.js';

/** arcap_ and 32 random bytes, base64url: recognisable in a log (and by redaction), unguessable. */
export const TOKEN_PREFIX = 'arcap_';
/** What a token looks like: anything else is no token of ours, whoever checks it. */
export const TOKEN_SHAPE = /^arcap_[A-Za-z0-9_-]{43}$/;

/** Makes a token from 32 random bytes. */
export function tokenFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 32) throw new Error(`a capability token needs 32 random bytes, got ${bytes.length}`);
  return `${TOKEN_PREFIX}${Buffer.from(bytes).toString('base64url')}`;
}

export type TokenCheck =
  | { readonly ok: true; readonly grant: Grant }
  | { readonly ok: false; readonly why: 'missing' | 'unknown' | 'expired' | 'revoked' };

export interface CapabilityStore {
  /** A new token for `grant`: the only time the token itself is seen. */
  issue(grant: Grant): string;
  check(presented: string | undefined, now: number): TokenCheck;
  /** Revokes one token (its command ended); whether it was live. */
  revoke(token: string, now: number): boolean;
  /** Revokes every token of a run (at its end); how many were live. */
  revokeRun(run: string, now: number): number;
  /** Forgets tokens past their expiry (revoked ones are kept until then, so a late use is told "revoked"). */
  sweep(now: number): void;
  /** Live tokens, for the operator. */
  live(now: number): number;
}

interface Entry {
  readonly hash: Buffer;
  readonly grant: Grant;
  revokedAt: number | undefined;
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export function createCapabilityStore(randomBytes: () => Uint8Array): CapabilityStore {
  const entries = new Map<string, Entry>();
  return {
    issue(grant) {
      const token = tokenFromBytes(randomBytes());
      const hash = digest(token);
      const key = hash.toString('hex');
      // A repeat means the randomness is broken; never hand out a token twice.
      if (entries.has(key)) throw new Error('the random source repeated a capability token');
      entries.set(key, { hash, grant: Object.freeze({ ...grant }), revokedAt: undefined });
      return token;
    },
    check(presented, now) {
      if (presented === undefined || presented === '') return { ok: false, why: 'missing' };
      if (!TOKEN_SHAPE.test(presented)) return { ok: false, why: 'unknown' };
      const hash = digest(presented);
      const entry = entries.get(hash.toString('hex'));
      if (!entry || !timingSafeEqual(entry.hash, hash)) return { ok: false, why: 'unknown' };
      if (entry.revokedAt !== undefined) return { ok: false, why: 'revoked' };
      if (now >= entry.grant.expiresAt) return { ok: false, why: 'expired' };
      return { ok: true, grant: entry.grant };
    },
    revoke(token, now) {
      const entry = entries.get(digest(token).toString('hex'));
      if (!entry || entry.revokedAt !== undefined) return false;
      entry.revokedAt = now;
      return true;
    },
    revokeRun(run, now) {
      let revoked = 0;
      for (const entry of entries.values())
        if (entry.grant.run === run && entry.revokedAt === undefined) {
          entry.revokedAt = now;
          revoked++;
        }
      return revoked;
    },
    sweep(now) {
      for (const [key, entry] of entries) if (now >= entry.grant.expiresAt) entries.delete(key);
    },
    live(now) {
      let count = 0;
      for (const entry of entries.values()) if (entry.revokedAt === undefined && now < entry.grant.expiresAt) count++;
      return count;
    },
  };
}
