// The uid behind a loopback connection, from /proc/net/tcp (src/broker/peer.ts
// says why and how). Read once per connection: a keep-alive connection keeps
// its peer. The table is of this network namespace, which is the broker's and
// its agents' (loopback).
import { readFile } from 'node:fs/promises';
import { peerUidFrom, type Connection } from '../../broker/peer.js';

export type PeerUidLookup = (connection: Connection) => Promise<number | null>;

export function procPeerUid(table = '/proc/net/tcp'): PeerUidLookup {
  return async (connection) => {
    try {
      return peerUidFrom(await readFile(table, 'utf8'), connection) ?? null;
    } catch {
      return null;
    }
  };
}
