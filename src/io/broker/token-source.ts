// The randomness capability tokens are made of: the kernel's, 32 bytes a token.
import { randomBytes } from 'node:crypto';

export const randomTokenBytes = (): Uint8Array => randomBytes(32);
