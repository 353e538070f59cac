// Who is at the other end of a loopback TCP connection. TCP has no
// SO_PEERCRED, but the kernel lists every socket with the uid that made it in
// /proc/net/tcp: the peer's socket is the row whose local end is the
// connection's remote end and whose remote end is ours. Only IPv4 (the
// broker listens on 127.0.0.1), and the addresses as a little-endian host
// prints them (x86-64, arm64). The first binding is the port itself: one per
// repo, which only that repo's agent uid may reach (the egress ruleset); this
// check is the second. Pure: the edge reads the table.

export interface Connection {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localAddress: string;
  readonly localPort: number;
}

/** 127.0.0.1:8080 as /proc/net/tcp writes it: 0100007F:1F90. */
export function procAddress(address: string, port: number): string | undefined {
  const parts = address.replace(/^::ffff:/, '').split('.');
  if (parts.length !== 4 || parts.some((part) => !/^\d{1,3}$/.test(part) || Number(part) > 255)) return undefined;
  const hex = parts
    .reverse()
    .map((part) => Number(part).toString(16).padStart(2, '0'))
    .join('');
  return `${hex}:${port.toString(16).padStart(4, '0')}`.toUpperCase();
}

/** Pure: the uid owning the peer's socket of `connection`, from /proc/net/tcp's text; undefined when not listed. */
export function peerUidFrom(table: string, connection: Connection): number | undefined {
  const peer = procAddress(connection.remoteAddress, connection.remotePort);
  const self = procAddress(connection.localAddress, connection.localPort);
  if (!peer || !self) return undefined;
  for (const line of table.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === peer && fields[2] === self && /^\d+$/.test(fields[7] ?? '')) return Number(fields[7]);
  }
  return undefined;
}
