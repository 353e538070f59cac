// agent-runner resume REPO: see pause.ts.
import { defineFor } from './pause.js';

export const define = defineFor('resume');
