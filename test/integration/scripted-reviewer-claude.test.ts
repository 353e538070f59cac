// bin/scripted-agent posing as claude in the review stage's roles
// (test/helpers/scripted-review.ts): each reviewer verb's verdict in the
// result's structured_output, the changes it makes, the fixer.
import { reviewerSuite } from '../helpers/scripted-review.js';

reviewerSuite('claude');
