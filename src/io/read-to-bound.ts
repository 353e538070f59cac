// Reading an open regular file to its end without passing a bound: the one
// loop both file readers share (realFs's readBounded and the no-follow
// readUntrusted). The first buffer fits the file as stat saw it, plus one
// byte so its end shows at once; later ones are small. A buffer the size of
// the bound per read made every small file cost that bound in zeroed memory
// (a drain reads its board over and over, fleet a thousand packed-refs),
// paid in garbage collection and in a larger process every spawn forks.

const LATER_CHUNK_BYTES = 1024 * 1024;

/** Reads into the buffer from the file's current position; the number of bytes read, 0 at the end. */
export type ReadInto = (buffer: Buffer) => number | Promise<number>;

/** The file's bytes; 'grew' once more than maxBytes came (a file may grow while read; /proc files say size 0). */
export async function readToBound(readInto: ReadInto, statSize: number, maxBytes: number): Promise<Buffer | 'grew'> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const wanted = total === 0 ? statSize + 1 : LATER_CHUNK_BYTES;
    // Unzeroed memory is safe here: only the bytes read are kept (subarray below).
    const chunk = Buffer.allocUnsafe(Math.max(1, Math.min(wanted, maxBytes + 1 - total)));
    const bytesRead = await readInto(chunk);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) return 'grew';
    // A regular file that gave fewer bytes than its size plus one is at its end:
    // no second read to hear so. (A file whose size says 0, like those in /proc,
    // fills its one-byte first buffer and is read on.)
    if (total === bytesRead && bytesRead < chunk.length) break;
  }
  return Buffer.concat(chunks);
}
