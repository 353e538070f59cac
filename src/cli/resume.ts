// agent-runner resume REPO: see control/watch/pause.ts.
import { defineFor } from './pause.js';

export const define = defineFor('resume');
