// A loopback port nothing listens on now: the kernel's pick, released at once
// (for a server a test starts next; an unprivileged port, from 1024 up).
import * as net from 'node:net';

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
